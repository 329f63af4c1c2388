// Internal: what a primitive's plan returns, the data its construction needs or the
// ScheduleError of the first precondition that fails. A value, not a throw: check() asks
// plans often and most answers are "no". Not a general error type (ScheduleError only).
#pragma once

#include <utility>
#include <variant>

#include "dragon/schedule/schedule_error.h"

namespace dragon::schedule::detail {

template <typename T>
class Planned {
 public:
  Planned(T plan) : state_(std::in_place_index<0>, std::move(plan)) {}            // NOLINT(google-explicit-constructor)
  Planned(ScheduleError error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return state_.index() == 0; }
  const T& operator*() const { return std::get<0>(state_); }
  T& operator*() { return std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  T* operator->() { return &std::get<0>(state_); }
  const ScheduleError& error() const { return std::get<1>(state_); }
  ScheduleError take_error() && { return std::get<1>(std::move(state_)); }
  // The plan, or the primitive's error thrown (the primitive's own call).
  T take() && {
    if (!ok()) throw std::get<1>(std::move(state_));
    return std::get<0>(std::move(state_));
  }

 private:
  std::variant<T, ScheduleError> state_;
};

// A plan that needs no data: only whether the preconditions hold.
struct Nothing {};

}  // namespace dragon::schedule::detail
