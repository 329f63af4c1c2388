// The C++ prelude of generated CPU code: headers, the common helpers and the f16 / bf16
// storage types with conversions that round to nearest even. Guarded, so that several
// generated sources can share one translation unit.
#pragma once

#include <string>

namespace dragon::codegen {

std::string cpu_prelude();

}  // namespace dragon::codegen
