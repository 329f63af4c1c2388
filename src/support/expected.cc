// RuntimeFailure's text (expected.h): the API, what went wrong, where, then the log.
#include "dragon/support/expected.h"

namespace dragon {

std::string RuntimeFailure::describe() const {
  std::string text = api + " failed: " + message;
  if (!where.empty()) text += " (at " + where + ")";
  if (!log.empty()) text += "\n" + log;
  return text;
}

}  // namespace dragon
