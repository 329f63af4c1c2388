// Runs body(i) for i in [0, count) on up to `threads` threads (0: the hardware's), each
// thread taking the next index; returns when all are done. For independent work items
// (replaying candidates); exceptions from body are the caller's to avoid. Internal to
// src/search.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace dragon::search {

template <typename Body>
void parallel_for(size_t count, int threads, const Body& body) {
  size_t workers = threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, count);
  if (workers <= 1) {
    for (size_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) body(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace dragon::search
