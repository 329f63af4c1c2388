// Test-side judges for constrained decoding, independent of the decoder under test:
// whether a script is valid (the codec decodes it, it is canonical, replay applies it and
// keeps every decision), and a brute-force enumerator of candidate lines (lexically
// plausible operands for every kind) to look for valid completions of a prefix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::script::testing {

// decode + is_canonical + replay + encode(replayed trace) == text; any error is false.
bool script_valid(const ir::PrimFunc& func, const std::string& text);

// Complete lines (with their '\n') that extend `partial` after the complete lines
// `complete` (which must be a valid script): every kind with operands drawn from pools
// (defined random variables of each type, small integers, divisors for tiles, block
// names, short names, bools, None), rest slots up to `max_rest` values, at most `cap`
// lines. Validity is not checked here.
std::vector<std::string> candidate_lines(const ir::PrimFunc& func, const std::string& complete,
                                         std::string_view partial, size_t cap = 4000, int max_rest = 3);

}  // namespace dragon::script::testing
