// What share of a program's GPU wall window each kind of kernel takes, and the share
// Little Dragon's generated kernels could address. Built from trace files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dragon/profile/kernel_classifier.h"
#include "dragon/profile/trace_event.h"

namespace dragon::profile {

struct CategoryTime {
  std::string category;
  bool addressable = false;
  uint64_t union_ns = 0;    // length of the union of its intervals (overlap counted once)
  uint64_t summed_ns = 0;   // plain sum of durations
  int64_t count = 0;
  double share = 0;         // union_ns / window_ns
};

struct KernelTime {
  std::string name;  // demangled
  std::string category;
  int64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t median_ns = 0;
  double share = 0;  // total_ns / window_ns
};

struct ProfileReport {
  std::string window_source;   // "process lifetime" or "NVTX range 'NAME' (N instances)"
  uint64_t window_ns = 0;      // length of the analysed window(s)
  uint64_t busy_ns = 0;        // union of all GPU activity inside the window
  uint64_t idle_ns = 0;        // window - busy
  double addressable_fraction = 0;  // union of addressable categories / window
  std::vector<CategoryTime> categories;  // in the classifier's order
  std::vector<KernelTime> top_kernels;   // by total time, descending
  int processes = 0;
  int64_t events = 0;
  uint64_t dropped_records = 0;
  std::vector<std::string> warnings;
};

struct AnalyzeOptions {
  std::string nvtx_range;  // empty: each process's lifetime
  int top = 15;
};

// Throws UserError when there is nothing to analyse (no GPU activity, or no range with
// the requested name) or when a trace reports another CUPTI subscriber.
ProfileReport analyze(const std::vector<ProcessTrace>& traces, const KernelClassifier& classifier,
                      const AnalyzeOptions& options);

}  // namespace dragon::profile
