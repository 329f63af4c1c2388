// bench_gpu_expert: hand-written expert scripts (data/scripts/expert/gpu/index.tsv) built
// for the H200 and timed by the harness's GPU timer side by side with a vendor baseline in
// the same process: cuBLAS for the GEMMs, libtorch eager for softmax and layernorm. Rounds
// alternate baseline and candidate so clock or thermal drift hits both alike. Every
// candidate's output is checked against the baseline's at full size before it is timed.
// Usage: bench_gpu_expert [--cases NAME,NAME] [--json FILE]; prints a markdown table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dragon/bench/cublas_gemm.h"
#include "dragon/bench/device_filler.h"
#include "dragon/bench/eager_plugin.h"
#include "dragon/harness/gpu_timer.h"
#include "dragon/harness/physics_floor.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/script/script_file.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "dragon/tensor/host_tensor.h"


namespace dragon::bench {
namespace {

using runtime::CudaDriver;
using runtime::DevicePtr;

struct ExpertCase {
  std::string name, spec, script, baseline;
};

std::vector<ExpertCase> read_index(const std::string& path) {
  std::vector<ExpertCase> cases;
  std::istringstream lines(read_text_file(path));
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ExpertCase c;
    if (!(fields >> c.name >> c.spec >> c.script >> c.baseline)) {
      throw UserError(path + ":" + std::to_string(number) + ": expected NAME SPEC SCRIPT BASELINE");
    }
    cases.push_back(c);
  }
  return cases;
}

void check(const Status& s, const std::string& what) {
  if (!s.ok()) throw UserError(what + ": " + s.error().describe());
}
template <typename T>
T check(Expected<T> e, const std::string& what) {
  if (!e.ok()) throw UserError(what + ": " + e.error().describe());
  return std::move(e.value());
}

// Device buffers of one function's parameters, freed at the end of a case.
struct DeviceArgs {
  CudaDriver* driver;
  std::vector<DevicePtr> ptrs;
  std::vector<int64_t> bytes;
  ~DeviceArgs() {
    for (DevicePtr p : ptrs) driver->release(p);
  }
};

// What a baseline computes: outputs for the same device inputs, written where the caller
// says. Each baseline owns its library handles and any output tensors it allocated.
class Baseline {
 public:
  virtual ~Baseline() = default;
  virtual std::string name() const = 0;
  // Launches the computation of params' outputs; a timed call.
  virtual Status run(const std::vector<DevicePtr>& params) = 0;
  // Copies the baseline's result of output `index` (a parameter index) to `host`.
  virtual Status copy_output(int index, const std::vector<DevicePtr>& params, tensor::HostTensor& host) = 0;
};

// Baselines write into their own copies of the output buffers, so the candidate's output
// and theirs can be compared afterwards.
class OwnOutputs {
 public:
  OwnOutputs(CudaDriver* driver, const DeviceArgs& args, const ir::PrimFunc& func) : driver_(driver) {
    for (size_t i = 0; i < func->params.size(); ++i) {
      DevicePtr p = args.ptrs[i];
      if (func->params[i].role != ir::ParamRole::kInput) {
        p = check(driver->allocate(static_cast<size_t>(args.bytes[i])), "baseline output");
        owned_.push_back(p);
      }
      ptrs_.push_back(p);
    }
  }
  ~OwnOutputs() {
    for (DevicePtr p : owned_) driver_->release(p);
  }
  const std::vector<DevicePtr>& ptrs() const { return ptrs_; }

 private:
  CudaDriver* driver_;
  std::vector<DevicePtr> ptrs_, owned_;
};

// cuBLAS (bench/cublas_gemm.h, loaded with dlopen) into the baseline's own outputs.
class CublasBaseline final : public Baseline {
 public:
  CublasBaseline(std::unique_ptr<CublasGemm> gemm, CudaDriver* driver, const DeviceArgs& args,
                 const ir::PrimFunc& func)
      : gemm_(std::move(gemm)), driver_(driver), outputs_(driver, args, func) {}
  std::string name() const override { return gemm_->name(); }
  Status run(const std::vector<DevicePtr>&) override { return gemm_->run(outputs_.ptrs()); }
  Status copy_output(int index, const std::vector<DevicePtr>&, tensor::HostTensor& host) override {
    check(driver_->synchronize(), "cuBLAS");
    return driver_->copy_to_host(host.data(), outputs_.ptrs()[index], static_cast<size_t>(host.size_bytes()));
  }

 private:
  std::unique_ptr<CublasGemm> gemm_;
  CudaDriver* driver_;
  OwnOutputs outputs_;
};

// libtorch eager through the plugin (bench/eager_plugin.h) on tensors viewing our device
// inputs: what KernelBench's reference runs.
class EagerBaseline final : public Baseline {
 public:
  EagerBaseline(const EagerBaselines& eager, const ops::Workload& w, const DeviceArgs& args)
      : name_("torch eager: " + eager.call(w.op->name)) {
    std::map<std::string, std::string> values = ops::canonical_values(ops::OpRegistry::global().parse(w.spec));
    std::vector<EagerTensor> inputs;
    for (size_t i = 0; i < w.func->params.size(); ++i) {
      if (w.func->params[i].role != ir::ParamRole::kInput) {
        output_index_[static_cast<int>(i)] = static_cast<int>(output_index_.size());
        continue;
      }
      const ir::Buffer& buffer = w.func->params[i].buffer;
      inputs.push_back(EagerTensor{reinterpret_cast<void*>(args.ptrs[i]), buffer->dtype, buffer->shape});
    }
    computation_ = eager.bind(w.op->name, values, inputs, EagerDevice::kCuda, /*promote_to_f64=*/false);
  }
  std::string name() const override { return name_; }
  Status run(const std::vector<DevicePtr>&) override {
    try {
      computation_->run();
    } catch (const std::exception& e) {
      return DRAGON_RUNTIME_FAILURE("torch", e.what(), "");
    }
    return {};
  }
  Status copy_output(int index, const std::vector<DevicePtr>&, tensor::HostTensor& host) override {
    try {
      computation_->copy_output(static_cast<size_t>(output_index_.at(index)), host.dtype(), host.data(),
                                host.size_bytes());
    } catch (const std::exception& e) {
      return DRAGON_RUNTIME_FAILURE("torch", e.what(), "");
    }
    return {};
  }

 private:
  std::string name_;
  std::unique_ptr<EagerComputation> computation_;
  std::map<int, int> output_index_;  // parameter index -> output index
};

std::unique_ptr<Baseline> make_baseline(const ExpertCase& c, CudaDriver* driver, const DeviceArgs& args,
                                        const ops::Workload& w) {
  if (c.baseline == "cublas") {
    std::string why_not;
    std::unique_ptr<CublasGemm> gemm = make_cublas_gemm(w, why_not);
    if (!gemm) throw UserError(c.name + ": no cuBLAS baseline: " + why_not);
    return std::make_unique<CublasBaseline>(std::move(gemm), driver, args, w.func);
  }
  if (c.baseline.rfind("torch.", 0) == 0) {
    const EagerPlugin& plugin = eager_plugin();
    if (!plugin.baselines) {
      std::fprintf(stderr, "%s: no eager baseline: %s\n", c.name.c_str(), plugin.why_not.c_str());
      return nullptr;
    }
    return std::make_unique<EagerBaseline>(*plugin.baselines, w, args);
  }
  return nullptr;
}

// Work the problem must do, for achieved rates: 2mnk flops for GEMMs; for the others the
// bytes of every input and output once.
struct Work {
  double flops = 0, bytes = 0;
};
Work minimal_work(const ExpertCase& c, const ir::PrimFunc& func, const DeviceArgs& args) {
  Work w;
  for (int64_t b : args.bytes) w.bytes += static_cast<double>(b);
  if (c.baseline == "cublas") {
    const ir::Buffer& a = func->params[0].buffer;
    const ir::Buffer& b = func->params[1].buffer;
    w.flops = 2.0 * a->shape[0] * a->shape[1] * b->shape[1];
  }
  return w;
}

struct CaseResult {
  std::string name, spec, baseline_name, error;
  harness::GpuTiming ours, theirs;
  double normalized_error = 0, tolerance = 0;
  bool correct = false;
  Work work;
  double build_ms = 0;
  harness::PhysicsFloor floor;
};

CaseResult run_case(const ExpertCase& c, const std::string& data_dir, CudaDriver* driver, DeviceFiller& filler) {
  CaseResult r;
  r.name = c.name;
  r.spec = c.spec;
  ops::Workload w = ops::OpRegistry::global().make_workload(c.spec);
  ir::PrimFunc scheduled = script::replay(w.func, script::load(data_dir + "/" + c.script)).func();
  auto started = std::chrono::steady_clock::now();
  runtime::Compiled compiled = check(runtime::compile(scheduled, lower::Target::cuda_h200()), c.name + ": NVRTC");
  r.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  auto ours = check(runtime::LoadedCudaFunction::load(std::move(compiled.cuda())), c.name + ": loading");

  DeviceArgs args{driver, {}, {}};
  for (size_t i = 0; i < w.func->params.size(); ++i) {
    const ir::Buffer& buffer = w.func->params[i].buffer;
    int64_t elements = 1;
    for (int64_t extent : buffer->shape) elements *= extent;
    int64_t bytes = elements * buffer->dtype.bytes();
    args.ptrs.push_back(check(driver->allocate(static_cast<size_t>(bytes)), c.name + ": allocating"));
    args.bytes.push_back(bytes);
    if (w.func->params[i].role == ir::ParamRole::kInput) {
      filler.fill(args.ptrs.back(), buffer->dtype, elements, DeviceFiller::Distribution::kNormal, 1000 + i);
    } else {
      check(driver->fill_bytes(args.ptrs.back(), 0xff, static_cast<size_t>(bytes)), "NaN sentinel");
    }
  }
  check(driver->synchronize(), c.name + ": filling inputs");
  r.work = minimal_work(c, w.func, args);
  r.floor = harness::physics_floor(w.func, harness::DevicePeaks::h200_spec_sheet());

  std::unique_ptr<Baseline> baseline = make_baseline(c, driver, args, w);
  r.baseline_name = baseline ? baseline->name() : "none (" + c.baseline + " not built in)";

  // Correctness at full size: ours against the baseline, output by output.
  check(ours->launch(args.ptrs), c.name + ": launch");
  check(driver->synchronize(), c.name + ": run");
  r.correct = true;
  if (baseline) {
    check(baseline->run(args.ptrs), c.name + ": baseline");
    for (size_t i = 0; i < w.func->params.size(); ++i) {
      if (w.func->params[i].role == ir::ParamRole::kInput) continue;
      tensor::HostTensor mine = tensor::HostTensor::like(w.func->params[i].buffer);
      tensor::HostTensor expected = tensor::HostTensor::like(w.func->params[i].buffer);
      check(driver->copy_to_host(mine.data(), args.ptrs[i], static_cast<size_t>(mine.size_bytes())), "copy out");
      check(baseline->copy_output(static_cast<int>(i), args.ptrs, expected), "baseline copy out");
      // Libraries reduce in other orders than we do: a few reorderings' worth of error.
      r.tolerance = 8 * interp::reordering_tolerance(mine.dtype());
      interp::TensorComparison cmp = interp::compare_tensors(expected, mine, r.tolerance);
      r.normalized_error = std::max(r.normalized_error, cmp.normalized_error);
      if (!cmp.ok) {
        r.correct = false;
        r.error = interp::describe(cmp, expected, mine);
      }
    }
  }

  // Rounds alternate the two so drift hits both; each round stops at its CI or its cap.
  harness::GpuTimerOptions options{.warmup_calls = 3, .min_calls = 10, .max_calls = 200, .max_seconds = 1.0};
  std::vector<double> ours_samples, theirs_samples;
  for (int round = 0; round < 3; ++round) {
    if (baseline) {
      harness::GpuTiming t =
          check(harness::time_gpu([&](int) { return baseline->run(args.ptrs); }, options), c.name + ": baseline");
      theirs_samples.insert(theirs_samples.end(), t.samples_ms.begin(), t.samples_ms.end());
    }
    harness::GpuTiming t = check(harness::time_gpu([&](int) { return ours->launch(args.ptrs); }, options), c.name);
    ours_samples.insert(ours_samples.end(), t.samples_ms.begin(), t.samples_ms.end());
  }
  r.ours = harness::summarize_samples(ours_samples);
  r.ours.converged = harness::timing_converged(r.ours, options);
  if (baseline) {
    r.theirs = harness::summarize_samples(theirs_samples);
    r.theirs.converged = harness::timing_converged(r.theirs, options);
  }
  return r;
}

std::string rate(const Work& w, double ms) {
  if (ms <= 0) return "-";
  char text[64];
  if (w.flops > 0) {
    std::snprintf(text, sizeof(text), "%.1f TFLOP/s", w.flops / (ms * 1e-3) / 1e12);
  } else {
    std::snprintf(text, sizeof(text), "%.2f TB/s", w.bytes / (ms * 1e-3) / 1e12);
  }
  return text;
}

int main_impl(int argc, char** argv) {
  std::string json_path, only;
  std::string data_dir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--cases" && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else {
      throw UserError("usage: bench_gpu_expert [--cases NAME,NAME] [--json FILE] (got '" + arg + "')");
    }
  }
  CudaDriver* driver = check(CudaDriver::get(), "this benchmark needs a CUDA device");
  DeviceFiller filler(driver);
  harness::GpuState state = harness::read_gpu_state();
  std::printf("GPU: %s\n\n", state.describe().c_str());
  std::printf("| case | spec | ours (median ms) | baseline | baseline (median ms) | baseline / ours | ours rate | "
              "baseline rate | max error (tol) | physics floor (ms) |\n|---|---|---|---|---|---|---|---|---|---|\n");
  nlohmann::json results = nlohmann::json::array();
  int failures = 0;
  for (const ExpertCase& c : read_index(data_dir + "/index.tsv")) {
    if (!only.empty() && only.find("," + c.name + ",") == std::string::npos) continue;
    CaseResult r;
    try {
      r = run_case(c, data_dir, driver, filler);
    } catch (const std::exception& e) {
      r.name = c.name;
      r.spec = c.spec;
      r.error = e.what();
      ++failures;
      std::printf("| %s | `%s` | failed: %s |||||||\n", c.name.c_str(), c.spec.c_str(), e.what());
      results.push_back({{"case", c.name}, {"spec", c.spec}, {"error", r.error}});
      std::fflush(stdout);
      continue;
    }
    // A time under the physics floor is a broken measurement or a kernel skipping work.
    const bool impossible = harness::faster_than_physics(r.ours.median_ms, r.floor) ||
                            (r.theirs.median_ms > 0 && harness::faster_than_physics(r.theirs.median_ms, r.floor));
    if (!r.correct || impossible) ++failures;
    double ratio = r.ours.median_ms > 0 && r.theirs.median_ms > 0 ? r.theirs.median_ms / r.ours.median_ms : 0;
    std::printf("| %s | `%s` | %.4f | %s | %.4f | %.3f | %s | %s | %.2g (%.0g)%s | %.4f%s |\n", r.name.c_str(),
                r.spec.c_str(), r.ours.median_ms, r.baseline_name.c_str(), r.theirs.median_ms, ratio,
                rate(r.work, r.ours.median_ms).c_str(), rate(r.work, r.theirs.median_ms).c_str(), r.normalized_error,
                r.tolerance, r.correct ? "" : " WRONG", r.floor.floor_ms, impossible ? " IMPOSSIBLE" : "");
    if (!r.correct) std::printf("\n%s: %s\n\n", r.name.c_str(), r.error.c_str());
    std::fflush(stdout);
    results.push_back({{"case", r.name},
                       {"spec", r.spec},
                       {"baseline", r.baseline_name},
                       {"ours_ms", {{"median", r.ours.median_ms}, {"min", r.ours.min_ms}, {"max", r.ours.max_ms},
                                    {"ci95", r.ours.ci95_half_width_ms}, {"calls", r.ours.samples_ms.size()}}},
                       {"baseline_ms", {{"median", r.theirs.median_ms}, {"min", r.theirs.min_ms},
                                        {"max", r.theirs.max_ms}, {"ci95", r.theirs.ci95_half_width_ms},
                                        {"calls", r.theirs.samples_ms.size()}}},
                       {"baseline_over_ours", ratio},
                       {"correct", r.correct},
                       {"normalized_error", r.normalized_error},
                       {"tolerance", r.tolerance},
                       {"build_ms", r.build_ms},
                       {"physics_floor_ms", r.floor.floor_ms},
                       {"impossible", impossible},
                       {"flops", r.work.flops},
                       {"bytes", r.work.bytes},
                       {"error", r.error}});
  }
  state = harness::read_gpu_state();
  std::printf("\nGPU after the run: %s\nPhysics floors from %s. Times are medians of CUDA-event windows (L2 flushed, "
              "device-wide synchronize inside), 3 alternating rounds of baseline and ours.\n",
              state.describe().c_str(), harness::DevicePeaks::h200_spec_sheet().source.c_str());
  if (!json_path.empty()) {
    nlohmann::json out = {{"gpu", state.describe()}, {"results", results}};
    write_text_file(json_path, out.dump(2) + "\n");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace dragon::bench

int main(int argc, char** argv) {
  try {
    return dragon::bench::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
