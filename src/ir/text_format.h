// Lexical rules shared by the IR printer and parser: which words are reserved, what an
// identifier is, and the spelling of float literals, strings and annotation values.
// Not the grammar (the parser owns that) nor layout (the printer owns that).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dragon/ir/dtype.h"
#include "dragon/ir/stmt.h"

namespace dragon::ir::text {

// [A-Za-z_][A-Za-z0-9_]*
bool is_identifier(std::string_view s);
// Identifiers joined by single dots: threadIdx.x, shared.dyn, meta_schedule.tile.
bool is_dotted_identifier(std::string_view s);
// Statement keywords and literal words (true, inf, inff32): they never name a variable
// or buffer.
bool is_reserved_word(std::string_view s);

// The decimal digits of a finite float of `dtype`: the shortest text that reads back to
// exactly `value` through parse_float_digits. No type suffix.
std::string float_digits(DataType dtype, double value);
// A float literal with its suffix: 0.5f32, -inff16, nanbf16.
std::string float_literal(DataType dtype, double value);
// Reads unsigned decimal digits ("1e-05", "0.5") as a value of float type `dtype`, rounded
// once to that type; nullopt when the text is malformed or does not fit (overflows).
std::optional<double> parse_float_digits(DataType dtype, std::string_view digits);

// "..." with \\, \", \n, \t and \xHH escapes.
std::string quote(std::string_view s);
// A name as a bare dotted identifier when it is one, else quoted (block names, scopes,
// thread tags, annotation keys).
std::string dotted_or_quoted(std::string_view s);
// 64, -3, 0.5, 64.0 (a double always shows '.', 'e', inf or nan), "text".
std::string annotation_value(const AnnotationValue& value);

}  // namespace dragon::ir::text
