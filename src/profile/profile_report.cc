// Analysis of trace files: window, busy and idle time, category unions, top kernels.
#include "dragon/profile/profile_report.h"

#include <algorithm>
#include <map>

#include "dragon/profile/interval_set.h"
#include "dragon/support/error.h"

namespace dragon::profile {
namespace {

std::vector<Interval> analysis_windows(const std::vector<ProcessTrace>& traces, const AnalyzeOptions& options,
                                       ProfileReport& report) {
  std::vector<Interval> windows;
  if (!options.nvtx_range.empty()) {
    int64_t instances = 0;
    for (const ProcessTrace& t : traces) {
      for (const TraceEvent& e : t.events) {
        if (e.kind == EventKind::kRange && e.name == options.nvtx_range) {
          windows.push_back({e.start_ns, e.end_ns});
          ++instances;
        }
      }
    }
    if (instances == 0) {
      throw UserError(fmt::format("no NVTX range named '{}' was recorded (ranges need NVTX calls in the program, "
                                  "e.g. torch.cuda.nvtx.range_push)",
                                  options.nvtx_range));
    }
    report.window_source = fmt::format("NVTX range '{}' ({} instance{})", options.nvtx_range, instances,
                                       instances == 1 ? "" : "s");
    return interval_union(std::move(windows));
  }
  for (const ProcessTrace& t : traces) {
    uint64_t end = t.window_end_ns;
    if (!t.complete) {
      // Killed before its exit flush: the window ends at its last recorded activity.
      for (const TraceEvent& e : t.events) end = std::max(end, e.end_ns);
      report.warnings.push_back(fmt::format("process {} did not finish its trace (killed or crashed)", t.pid));
    }
    if (end > t.window_start_ns) windows.push_back({t.window_start_ns, end});
  }
  report.window_source = "process lifetime";
  return interval_union(std::move(windows));
}

uint64_t median(std::vector<uint64_t> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

}  // namespace

ProfileReport analyze(const std::vector<ProcessTrace>& traces, const KernelClassifier& classifier,
                      const AnalyzeOptions& options) {
  ProfileReport report;
  report.processes = static_cast<int>(traces.size());
  for (const ProcessTrace& t : traces) {
    if (!t.error.empty()) throw UserError(fmt::format("process {}: {}", t.pid, t.error));
    report.dropped_records += t.dropped_records;
  }
  if (report.dropped_records > 0) {
    report.warnings.push_back(fmt::format("CUPTI dropped {} records: times are underestimated", report.dropped_records));
  }
  std::vector<Interval> windows = analysis_windows(traces, options, report);
  report.window_ns = total_length(windows);
  if (report.window_ns == 0) throw UserError("the profiled window is empty: no CUDA activity was recorded");

  std::vector<Interval> all;
  std::map<std::string, std::vector<Interval>> by_category;
  std::map<std::string, CategoryTime> category_time;
  struct Accumulator {
    std::string category;
    std::vector<uint64_t> durations;
  };
  std::map<std::string, Accumulator> kernels;
  for (const ProcessTrace& t : traces) {
    for (const TraceEvent& e : t.events) {
      if (e.kind == EventKind::kRange) continue;
      std::vector<Interval> inside = intersect({{e.start_ns, e.end_ns}}, windows);
      uint64_t duration = total_length(inside);
      if (duration == 0) continue;
      std::string name = e.kind == EventKind::kKernel ? demangle(e.name) : e.name;
      const std::string& category = classifier.classify(name);
      all.insert(all.end(), inside.begin(), inside.end());
      by_category[category].insert(by_category[category].end(), inside.begin(), inside.end());
      CategoryTime& ct = category_time[category];
      ct.summed_ns += duration;
      ++ct.count;
      Accumulator& k = kernels[name];
      k.category = category;
      k.durations.push_back(duration);
      ++report.events;
    }
  }
  if (report.events == 0) throw UserError("no GPU activity inside the profiled window");
  report.busy_ns = total_length(interval_union(all));
  report.idle_ns = report.window_ns - std::min(report.window_ns, report.busy_ns);

  std::vector<Interval> addressable;
  for (const Category& c : classifier.categories()) {
    CategoryTime ct = category_time[c.name];
    ct.category = c.name;
    ct.addressable = c.addressable;
    std::vector<Interval> merged = interval_union(by_category[c.name]);
    ct.union_ns = total_length(merged);
    ct.share = static_cast<double>(ct.union_ns) / static_cast<double>(report.window_ns);
    if (c.addressable) addressable.insert(addressable.end(), merged.begin(), merged.end());
    report.categories.push_back(ct);
  }
  report.addressable_fraction =
      static_cast<double>(total_length(interval_union(addressable))) / static_cast<double>(report.window_ns);

  for (auto& [name, k] : kernels) {
    KernelTime kt{name, k.category, static_cast<int64_t>(k.durations.size()), 0, median(k.durations), 0};
    for (uint64_t d : k.durations) kt.total_ns += d;
    kt.share = static_cast<double>(kt.total_ns) / static_cast<double>(report.window_ns);
    report.top_kernels.push_back(std::move(kt));
  }
  std::sort(report.top_kernels.begin(), report.top_kernels.end(), [](const KernelTime& a, const KernelTime& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (static_cast<int>(report.top_kernels.size()) > options.top) report.top_kernels.resize(options.top);
  return report;
}

}  // namespace dragon::profile
