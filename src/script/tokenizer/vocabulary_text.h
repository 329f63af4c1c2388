// Internal: the text of data/tokenizer/vocab-v1.txt, compiled into the library by CMake
// (vocabulary_text.cc.in), so no file is looked up at run time. Not a public API.
#pragma once

#include <string_view>

namespace dragon::script::detail {

std::string_view standard_vocabulary_text();

}  // namespace dragon::script::detail
