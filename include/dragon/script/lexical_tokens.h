// A neutral lexical token count for comparing text forms (compact script, TVM JSON, TVM
// Python): a GPT-style pre-tokenizer, not the model's tokenizer (tokenizer.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::script {

// Tokens: each maximal run of ASCII letters, each maximal run of digits, and every other
// non-whitespace byte on its own; whitespace separates tokens and is not counted (GPT-2
// folds a space into the token after it). "l10 = sch.fuse(l3, l4)" is
// l 10 = sch . fuse ( l 3 , l 4 ) : 13 tokens.
std::vector<std::string_view> lexical_tokens(std::string_view text);
size_t count_lexical_tokens(std::string_view text);

}  // namespace dragon::script
