// The tuning database's data: a workload (what was tuned), the key a record is filed under
// (workload, target, hardware), a measured record (script, status, latency samples,
// provenance) and the statistics derived from its samples. Plain values; storing and
// querying them is database.h, their JSON lines are jsonl.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::db {

// ir::structural_hash of the unscheduled function. Written as 16 lowercase hex digits.
using WorkloadHash = uint64_t;
std::string format_workload_hash(WorkloadHash hash);
// Parses 16 hex digits (either case); throws UserError naming the text otherwise.
WorkloadHash parse_workload_hash(std::string_view text);

// What was tuned: one unscheduled function, identified by its structural hash.
struct Workload {
  WorkloadHash hash = 0;
  std::string ir;                   // ir::print_function of the function (canonical IR text)
  std::optional<std::string> spec;  // the canonical op spec it was built from, if any

  // The workload of `func` (hash and canonical text computed here).
  static Workload of(const ir::PrimFunc& func, std::optional<std::string> spec = std::nullopt);
  // Parses `ir` back into a function (UserError naming the workload when it does not parse).
  ir::PrimFunc function() const;

  bool operator==(const Workload&) const = default;
};

// What the kernel was compiled for, e.g. {"cuda", "sm_90a"} or {"cpu", "x86-64"}.
struct Target {
  std::string name;
  std::string arch;

  std::string describe() const;  // "cuda sm_90a"
  bool operator==(const Target&) const = default;
};

// The machine it was measured on, e.g. {"NVIDIA H200", "580.65.06"}. Records are filed
// under the exact pair: a record measured on one device (or driver) is never returned for
// another. `driver` may be empty (a CPU).
struct Hardware {
  std::string device;
  std::string driver;

  std::string describe() const;  // "NVIDIA H200 (driver 580.65.06)"
  bool operator==(const Hardware&) const = default;
};

// The key records are filed and ranked under.
struct TuningKey {
  WorkloadHash workload = 0;
  Target target;
  Hardware hardware;

  bool operator==(const TuningKey&) const = default;
};

// How a candidate ended. Only kOk records carry a verified latency and take part in
// best-k queries.
enum class RecordStatus {
  kOk,           // verified correct by the harness, then timed
  kApplyFailed,  // the script did not replay on the workload (a schedule precondition)
  kRejected,     // a postprocessor or a limit check refused the program (threads, shared memory)
  kBuildFailed,  // lowering, code generation or the compiler failed
  kRunFailed,    // the kernel reported an error or could not be launched
  kCrashed,      // the kernel's process died (a signal, an illegal address)
  kTimedOut,     // no answer within the time limit
  kWrongResult,  // ran, and the harness rejected its outputs
};
// "ok", "apply_failed", "rejected", "build_failed", "run_failed", "crashed", "timed_out",
// "wrong_result": the spelling in the database and in JSON lines.
std::string_view record_status_id(RecordStatus status);
// The status of an id; nullopt for an unknown one.
std::optional<RecordStatus> parse_record_status(std::string_view id);
// Every status, in declaration order.
std::span<const RecordStatus> all_record_statuses();

// When a record was measured, to the millisecond (UTC).
using TimePoint = std::chrono::sys_time<std::chrono::milliseconds>;
// "2026-12-03T14:05:06.123Z".
std::string format_time(TimePoint time);
// Parses exactly the form format_time writes; throws UserError naming the text otherwise.
TimePoint parse_time(std::string_view text);

// Statistics of a record's samples.
struct LatencySummary {
  struct Interval {
    double low_ms = 0;
    double high_ms = 0;
  };
  int64_t samples = 0;
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  // A distribution-free 95% confidence interval of the median (order statistics of the
  // binomial): absent below 6 samples, where no pair of order statistics reaches 95%.
  std::optional<Interval> median_ci95;
};
// nullopt for no samples.
std::optional<LatencySummary> summarize_latency(std::span<const float> samples_ms);

// One measured (or failed) candidate.
struct Record {
  TuningKey key;
  std::string script;                      // canonical compact script (script::encode); "" = default schedule
  RecordStatus status = RecordStatus::kOk;
  std::optional<std::string> error;        // why it failed; required unless kOk, absent for kOk
  std::optional<std::string> kernel_hash;  // hash of the generated source/build; absent when none was built
  // One per timed call, in call order. Stored as 32-bit floats (about 7 significant
  // digits, finer than any timer's resolution), so what is read back is exactly what was
  // committed. Required (non-empty) for kOk; every value finite and > 0.
  std::vector<float> samples_ms;
  std::optional<std::string> commit;       // Little Dragon's source commit that measured it
  std::optional<TimePoint> measured_at;
  std::string origin;                      // free text: "search", "model", "expert", "import", ...

  std::optional<LatencySummary> latency() const { return summarize_latency(samples_ms); }
  std::optional<double> median_ms() const;
  bool operator==(const Record&) const = default;
};

// A record as read back, with its row id (increasing in commit order within one file).
struct StoredRecord {
  int64_t id = 0;
  Record record;
};

// Which records a scan returns; an absent field matches everything.
struct RecordFilter {
  std::optional<WorkloadHash> workload;
  std::optional<Target> target;
  std::optional<Hardware> hardware;
  std::optional<std::string> device;  // the hardware's device name, any driver ("NVIDIA H100 80GB HBM3")
  std::optional<RecordStatus> status;
  std::optional<std::string> origin;

  static RecordFilter of(const TuningKey& key);  // workload, target and hardware set
};

}  // namespace dragon::db
