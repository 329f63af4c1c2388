// Measuring the candidates of one tuning task: each scheduled function is lowered and
// printed (its kernel hash is the hash of that code), built in batches, verified, and only
// then timed. A candidate whose code was measured before is not measured again (a cache by
// kernel hash, plus an optional lookup in a database). A failure at any stage is that
// candidate's result, with its reason; the batch goes on. Implementations: the CPU one
// (cpu_measurer.h) and the GPU one (bench/tuning_measurer.h, on the suites' device buffers).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/search/measure_result.h"

namespace dragon::search {

class MeasureGroup;

// Where CPU time per candidate goes, summed over a measurer's life (seconds).
struct MeasureCosts {
  double lower_and_codegen = 0;  // CPU time (thread clock) in this process: part of what issue 17 bounds at 2 ms
  double compile = 0;            // wall time of the compiler batches
  double run = 0;                // wall time verifying and timing in the worker
  // The worker's share of `run`, where it reports one (the GPU worker): loading the
  // kernels, the checked calls, timing; and the calls timed.
  double run_load = 0, run_check = 0, run_time = 0;
  int64_t timed_calls = 0;
  int64_t candidates = 0;        // functions given to measure()
  int64_t built = 0;             // compiled (not from a cache, not failed before)
  int64_t cached = 0;            // answered from the kernel-hash cache
};

// A result known from elsewhere for a kernel hash; nullopt: measure it.
using KnownResult = std::function<std::optional<MeasureResult>(const std::string& kernel_hash)>;

class Measurer {
 public:
  virtual ~Measurer() = default;
  // One result per function of `scheduled` (the task's function after a schedule), in order.
  virtual std::vector<MeasureResult> measure(const std::vector<ir::PrimFunc>& scheduled) = 0;
  // What records are filed under: "cpu" / "cuda" and the architecture, the device and its driver.
  virtual std::string target_name() const = 0;
  virtual std::string target_arch() const = 0;
  virtual std::string device() const = 0;
  virtual std::string driver() const = 0;
  virtual const MeasureCosts& costs() const = 0;
  // Consulted before building a kernel not in the measurer's own cache (the tuning
  // database: a kernel measured in an earlier run is not measured again).
  virtual void set_known(KnownResult known) = 0;
  // The group this measurer's batches can be measured with (MeasureGroup), or none.
  virtual MeasureGroup* group() { return nullptr; }
  // The hash measure() would file `scheduled`'s code under (lowered and printed here, not
  // built), or nullopt when it does not lower: what tells a record measured by another
  // build of Little Dragon whose code this build prints differently (TuneOptions).
  virtual std::optional<std::string> kernel_hash(const ir::PrimFunc& scheduled) const = 0;
};

// Measurers whose candidates are cheaper built together: the GPU ones compile every
// task's candidates of a round in one spread of NVRTC processes, so that several small
// tasks fill the cores that one task's batch would leave idle.
struct MeasureBatch {
  Measurer* measurer = nullptr;
  std::vector<ir::PrimFunc> scheduled;
};
class MeasureGroup {
 public:
  virtual ~MeasureGroup() = default;
  // One result list per batch, in order, each as its measurer's measure() would give it;
  // every batch's measurer has this group.
  virtual std::vector<std::vector<MeasureResult>> measure(const std::vector<MeasureBatch>& batches) = 0;
};

// Measures the batches of a round: those whose measurers share a group together, the
// others one by one. Results per batch, in order.
std::vector<std::vector<MeasureResult>> measure_batches(const std::vector<MeasureBatch>& batches);

}  // namespace dragon::search
