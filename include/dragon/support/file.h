// Whole-file reads and writes with errors that name the file and the reason.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace dragon {

// Throws UserError "cannot read PATH: REASON" when the file cannot be read.
std::string read_text_file(const std::string& path);
// Writes what `write` puts on the stream to PATH: a regular file atomically (a temporary of
// this process's own beside it, then rename; through a link, the file it names), a device
// or pipe (/dev/null) in place. Throws UserError naming the file and the reason.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write);
// write_file of `text`.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace dragon
