// Text placed in HTML reports (dragon profile, dragon bench): the five characters that
// could open markup or end an attribute, escaped.
#pragma once

#include <string>
#include <string_view>

namespace dragon {

std::string html_escape(std::string_view text);

}  // namespace dragon
