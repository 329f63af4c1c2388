// Internal: the words of a canonical script line (docs/script-format.md, "Grammar") as
// the constrained decoder reads them: which written words are canonical values of a
// slot's type, and which prefixes of an integer or string can still become one. Not the
// codec: it only mirrors the lexical rules so partial words can be judged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dragon/schedule/instruction.h"
#include "dragon/script/script_schema.h"

namespace dragon::decode {

using script::ShortName;

// Canonical integer spelling: '-'? digits, no leading zero, no "-0", fits int64.
std::optional<int64_t> parse_canonical_int(std::string_view word);
// Canonical float spelling (shortest round trip, ".0" appended to integral texts); an
// integer spelling is not a float here.
std::optional<double> parse_canonical_float(std::string_view word);
// Whether some integer in [lo, hi] is spelled canonically with `prefix` as its start.
bool int_prefix_viable(std::string_view prefix, int64_t lo, int64_t hi);

// A string as written in a slot with short names `names` (bare code, bare word or
// canonical quoted string); nullopt when that spelling is not canonical there.
std::optional<std::string> parse_string_word(std::string_view word, std::span<const ShortName> names,
                                             bool enum_slot);
// The canonical spelling of string `s` in a slot with short names `names`.
std::string spell_string(std::string_view s, std::span<const ShortName> names);
// Whether `prefix` (starting with '"') can still become a canonical quoted string
// (ignoring whether the finished string would rather be written bare).
bool quoted_prefix_viable(std::string_view prefix);
// Whether `prefix` can still become a bare word ([A-Za-z_][A-Za-z0-9_.]*).
bool bare_prefix_viable(std::string_view prefix);
// Whether `c` may follow the first character of a bare word: a viable bare prefix
// extended by `c` is viable exactly when this holds.
bool bare_word_char(char c);

// The canonical spelling of a float (shortest round trip, ".0" when integral).
std::string spell_float(double value);

// Whether `prefix` can still become a canonical float (std::to_chars's shortest form: no
// leading zeros, a scientific exponent signed); whether the finished text is the shortest
// spelling is only known at its end (README.md, approximation 2).
bool float_prefix_viable(std::string_view prefix, bool nonnegative);
// Probabilities are offered in a sub-language whose every prefix completes to a shortest
// spelling: one integer digit, a point, at most 15 significant digits, and for "0." at
// most two zeros before the first nonzero digit (0.0001 would be 1e-04). Weights of 10
// or more and exponents are not offered (README.md, approximation 2).
bool probability_prefix_viable(std::string_view prefix);
// Whether a word starting with '"' is a closed quoted string (its last quote unescaped).
bool quoted_closed(std::string_view word);

}  // namespace dragon::decode
