// Failures at the system's boundaries (compiler processes, NVRTC, the CUDA driver, files,
// child processes) as values: a RuntimeFailure in an Expected<T> or a Status (CONVENTIONS.md
// habit 8); value() throws it as a RuntimeError. One bad kernel never ends the process.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "dragon/support/error.h"

namespace dragon {

struct RuntimeFailure {
  std::string api;      // "nvrtcCompileProgram", "cuModuleLoadData", "g++", "dlopen"
  std::string message;  // what went wrong, in words
  std::string log;      // the compiler's log, when there is one
  std::string where;    // file:line of the call

  // "cuLaunchKernel failed (CUDA_ERROR_INVALID_VALUE: ...) at launch.cc:40" + the log.
  std::string describe() const;
};

class RuntimeError : public Error {
 public:
  explicit RuntimeError(RuntimeFailure failure) : Error(failure.describe()), failure_(std::move(failure)) {}
  const RuntimeFailure& failure() const { return failure_; }

 private:
  RuntimeFailure failure_;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Expected(RuntimeFailure failure) : state_(std::in_place_index<1>, std::move(failure)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // The value; throws RuntimeError carrying the failure when there is none.
  T& value() & {
    if (!ok()) throw RuntimeError(error());
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!ok()) throw RuntimeError(error());
    return std::get<0>(std::move(state_));
  }
  const RuntimeFailure& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, RuntimeFailure> state_;
};

// Expected<void>: success, or a failure.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(RuntimeFailure failure) : failure_(std::move(failure)) {}  // NOLINT
  bool ok() const { return !failure_.has_value(); }
  explicit operator bool() const { return ok(); }
  const RuntimeFailure& error() const { return *failure_; }
  void check() const {
    if (failure_) throw RuntimeError(*failure_);
  }

 private:
  std::optional<RuntimeFailure> failure_;
};

}  // namespace dragon

// A RuntimeFailure for `api` at this file and line.
#define DRAGON_RUNTIME_FAILURE(api, message, log) \
  (::dragon::RuntimeFailure{(api), (message), (log), ::std::string(__FILE__) + ":" + ::std::to_string(__LINE__)})
