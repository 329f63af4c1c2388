// Walking a text line by line with 1-based line numbers, for the line-oriented files
// (JSONL data, prompts) whose errors name "FILE:LINE".
#pragma once

#include <functional>
#include <string_view>

namespace dragon {

// Calls `visit(line, number)` for each line of `text` that is not blank (only spaces, tabs
// or a carriage return), in order; a last line without a newline counts. Numbers count
// every line, blank ones included, so they match an editor's.
void for_each_nonblank_line(std::string_view text, const std::function<void(std::string_view line, int number)>& visit);

}  // namespace dragon
