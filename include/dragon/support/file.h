// Whole-file reads and writes with errors that name the file and the reason.
#pragma once

#include <string>
#include <string_view>

namespace dragon {

// Throws UserError "cannot read PATH: REASON" when the file cannot be read.
std::string read_text_file(const std::string& path);
// Writes atomically (to PATH.tmp, then rename); throws UserError on failure.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace dragon
