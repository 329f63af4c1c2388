// The three error channels of Little Dragon (CONVENTIONS.md habit 8).
// UserError: bad input from a person (spec, IR text, script, flag), with where and why.
// InternalError: a broken invariant, i.e. our bug. ScheduleError lives in schedule/.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace dragon {

// Base of every exception Little Dragon throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input: the message says what was wrong and where. Tools exit with status 1.
class UserError : public Error {
 public:
  using Error::Error;

  // An error at a position of a named source (file name or "<spec>"); line and
  // column are 1-based.
  static UserError at(std::string_view source, int line, int column, std::string_view message) {
    return UserError(fmt::format("{}:{}:{}: {}", source, line, column, message));
  }
};

// A violated internal invariant. Tools exit with status 2.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void fail_check(const char* condition, const char* file, int line, const std::string& message);
}  // namespace detail

}  // namespace dragon

// DRAGON_CHECK(cond) or DRAGON_CHECK(cond, "format {}", args...): throws InternalError
// naming the condition, the file and line, and the formatted message.
#define DRAGON_CHECK(cond, ...)                                                                     \
  do {                                                                                              \
    if (!(cond)) [[unlikely]] {                                                                     \
      ::dragon::detail::fail_check(#cond, __FILE__, __LINE__,                                       \
                                   ::std::string(__VA_OPT__(::fmt::format(__VA_ARGS__))));         \
    }                                                                                               \
  } while (0)

#define DRAGON_UNREACHABLE(...) \
  ::dragon::detail::fail_check("unreachable", __FILE__, __LINE__, ::std::string(__VA_OPT__(::fmt::format(__VA_ARGS__))))
