// The gradient-based task scheduler (task_scheduler.h), after MetaSchedule's
// GradientBasedScheduler: round robin first, then the largest weighted expected gain.
#include <algorithm>
#include <cmath>
#include <limits>

#include "dragon/search/task_scheduler.h"
#include "dragon/support/error.h"

namespace dragon::search {

GradientTaskScheduler::GradientTaskScheduler(std::vector<double> weights, TaskSchedulerOptions options)
    : options_(options) {
  if (options.window < 1) throw UserError("task scheduler: the window must be at least 1 round");
  for (double w : weights) {
    if (!(w > 0) || !std::isfinite(w)) throw UserError("task scheduler: task weights must be finite and > 0");
    tasks_.push_back(TaskState{w, false, {}});
  }
}

double GradientTaskScheduler::priority(size_t task) const {
  const TaskState& t = tasks_.at(task);
  const int64_t n = static_cast<int64_t>(t.history.size());
  if (n == 0) return std::numeric_limits<double>::infinity();  // the round-robin round
  if (!t.history.back()) {
    // Nothing valid yet: one more round may find something; after that, last in line.
    return n < 2 ? std::numeric_limits<double>::max() : 0;
  }
  const bool relative = options_.objective == TaskObjective::kGeometricMean;
  auto value = [&](double ms) { return relative ? std::log(ms) : ms; };
  const double best = value(*t.history.back());
  double measured = 0;
  const int64_t w = options_.window;
  if (n >= w + 1 && t.history[n - 1 - w]) measured = (value(*t.history[n - 1 - w]) - best) / static_cast<double>(w);
  // Optimistic: another round gains the average share so far; in log space, a constant
  // relative step (1 / n), since log latency has no natural zero to divide.
  const double optimistic = relative ? 1.0 / static_cast<double>(n) : best / static_cast<double>(n);
  return t.weight * (options_.alpha * measured + (1 - options_.alpha) * optimistic);
}

std::optional<size_t> GradientTaskScheduler::next() {
  std::vector<size_t> first = next_tasks(1);
  if (first.empty()) return std::nullopt;
  return first.front();
}

std::vector<size_t> GradientTaskScheduler::next_tasks(size_t count) {
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!tasks_[i].finished) ranked.emplace_back(priority(i), i);
  }
  // Highest priority first; ties to the lowest index (stable on index order).
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> chosen;
  for (size_t k = 0; k < std::min(count, ranked.size()); ++k) chosen.push_back(ranked[k].second);
  return chosen;
}

void GradientTaskScheduler::report(size_t task, std::optional<double> best_ms) {
  TaskState& t = tasks_.at(task);
  // The best so far never gets worse between rounds.
  if (!t.history.empty() && t.history.back() && (!best_ms || *best_ms > *t.history.back())) best_ms = t.history.back();
  t.history.push_back(best_ms);
}

void GradientTaskScheduler::finish(size_t task) { tasks_.at(task).finished = true; }

}  // namespace dragon::search
