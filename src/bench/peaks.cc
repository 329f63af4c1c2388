#include "dragon/bench/peaks.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dragon/bench/cublas_gemm.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

template <typename T>
T or_throw(Expected<T> e, const std::string& what) {
  if (!e.ok()) throw UserError("dragon peaks: " + what + ": " + e.error().describe());
  return std::move(e.value());
}

void check(const Status& status, const std::string& what) {
  if (!status.ok()) throw UserError("dragon peaks: " + what + ": " + status.error().describe());
}

// Device buffers freed however a measurement ends.
struct Buffers {
  runtime::CudaDriver* driver;
  std::vector<runtime::DevicePtr> ptrs;
  ~Buffers() {
    for (runtime::DevicePtr p : ptrs) driver->release(p);
  }
  runtime::DevicePtr add(int64_t bytes, const std::string& what) {
    ptrs.push_back(or_throw(driver->allocate(static_cast<size_t>(bytes)), "allocating " + what));
    return ptrs.back();
  }
};

double measure_gemm(runtime::CudaDriver* driver, const PeakOptions& options, const std::string& dtype,
                    std::string& timing, std::string& notes) {
  int64_t n = options.gemm_size;
  ops::Workload workload =
      ops::OpRegistry::global().make_workload(fmt::format("matmul:m={0},n={0},k={0},dtype={1}", n, dtype));
  std::string why_not;
  std::unique_ptr<CublasGemm> gemm = make_cublas_gemm(workload, why_not);
  if (!gemm) {
    notes += fmt::format("{} GEMM not measured: {}. ", dtype, why_not);
    return 0;
  }
  int64_t element = dtype == "f32" ? 4 : 2;
  Buffers buffers{driver, {}};
  std::vector<runtime::DevicePtr> params;
  for (int i = 0; i < 3; ++i) {
    params.push_back(buffers.add(n * n * element, dtype + " GEMM operands"));
    // Zeros: GEMM speed does not depend on values on this hardware, and zeros are valid in every type.
    check(driver->fill_bytes(params.back(), 0, static_cast<size_t>(n * n * element)), "clearing GEMM operands");
  }
  harness::GpuTiming t =
      or_throw(harness::time_gpu([&](int) { return gemm->run(params); }, options.timer), dtype + " GEMM timing");
  timing = gemm->name() + ": " + t.describe();
  return 2.0 * static_cast<double>(n) * n * n / (t.median_ms * 1e-3);
}

}  // namespace

harness::DevicePeaks MeasuredPeaks::as_device_peaks() const {
  return harness::DevicePeaks{.memory_bytes_per_s = copy_bytes_per_s,
                              .f32_flops_per_s = f32_flops_per_s,
                              .tensor_16bit_flops_per_s = std::max(f16_flops_per_s, bf16_flops_per_s),
                              // Not measured: Ampere's and Hopper's tensor cores run TF32 at
                              // half their f16 rate.
                              .tensor_tf32_flops_per_s = std::max(f16_flops_per_s, bf16_flops_per_s) / 2,
                              .l2_bytes = l2_bytes,
                              .source = "measured by dragon peaks on " + device};
}

std::string MeasuredPeaks::to_text() const {
  std::string text = fmt::format("{}\n{}\n", device, gpu.describe());
  text += fmt::format("copy (device to device)  {:8.3f} TB/s   {}\n", copy_bytes_per_s / 1e12, copy_timing);
  text += fmt::format("f32 GEMM (no TF32)       {:8.1f} TFLOP/s {}\n", f32_flops_per_s / 1e12, f32_timing);
  text += fmt::format("f16 GEMM (f32 accumulate){:8.1f} TFLOP/s {}\n", f16_flops_per_s / 1e12, f16_timing);
  text += fmt::format("bf16 GEMM (f32 accumulate){:7.1f} TFLOP/s {}\n", bf16_flops_per_s / 1e12, bf16_timing);
  text += fmt::format("L2                       {} MiB\n", l2_bytes >> 20);
  if (!notes.empty()) text += "notes: " + notes + "\n";
  return text;
}

std::string MeasuredPeaks::to_json(int indent) const {
  nlohmann::ordered_json j;
  j["device"] = device;
  j["gpu"] = {{"name", gpu.name},
              {"sm_clock_mhz", gpu.sm_clock_mhz},
              {"max_sm_clock_mhz", gpu.max_sm_clock_mhz},
              {"memory_clock_mhz", gpu.memory_clock_mhz},
              {"temperature_c", gpu.temperature_c},
              {"driver_version", gpu.driver_version}};
  j["copy_bytes_per_s"] = copy_bytes_per_s;
  j["f32_flops_per_s"] = f32_flops_per_s;
  j["f16_flops_per_s"] = f16_flops_per_s;
  j["bf16_flops_per_s"] = bf16_flops_per_s;
  j["l2_bytes"] = l2_bytes;
  j["timings"] = {{"copy", copy_timing}, {"f32", f32_timing}, {"f16", f16_timing}, {"bf16", bf16_timing}};
  j["notes"] = notes;
  return j.dump(indent);
}

MeasuredPeaks measure_peaks(runtime::CudaDriver* driver, const PeakOptions& options) {
  MeasuredPeaks peaks;
  peaks.device = driver->device_name();
  peaks.gpu = harness::read_gpu_state();
  peaks.l2_bytes = or_throw(driver->properties(), "device properties").l2_bytes;
  {
    Buffers buffers{driver, {}};
    runtime::DevicePtr from = buffers.add(options.copy_bytes, "the copy source");
    runtime::DevicePtr to = buffers.add(options.copy_bytes, "the copy destination");
    check(driver->fill_bytes(from, 1, static_cast<size_t>(options.copy_bytes)), "filling the copy source");
    harness::GpuTiming t = or_throw(
        harness::time_gpu([&](int) { return driver->copy_on_device(to, from, static_cast<size_t>(options.copy_bytes)); },
                          options.timer),
        "copy timing");
    peaks.copy_timing = "cuMemcpyDtoD of " + std::to_string(options.copy_bytes >> 20) + " MiB: " + t.describe();
    peaks.copy_bytes_per_s = 2.0 * static_cast<double>(options.copy_bytes) / (t.median_ms * 1e-3);
  }
  peaks.f32_flops_per_s = measure_gemm(driver, options, "f32", peaks.f32_timing, peaks.notes);
  peaks.f16_flops_per_s = measure_gemm(driver, options, "f16", peaks.f16_timing, peaks.notes);
  peaks.bf16_flops_per_s = measure_gemm(driver, options, "bf16", peaks.bf16_timing, peaks.notes);
  return peaks;
}

MeasuredPeaks load_peaks(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(path + ": cannot read the peaks file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(path + ": not JSON: " + e.what());
  }
  MeasuredPeaks peaks;
  auto number = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number()) throw UserError(path + ": field " + key + " missing or not a number");
    return j[key].get<double>();
  };
  if (!j.contains("device") || !j["device"].is_string()) throw UserError(path + ": field device missing");
  peaks.device = j["device"].get<std::string>();
  peaks.copy_bytes_per_s = number("copy_bytes_per_s");
  peaks.f32_flops_per_s = number("f32_flops_per_s");
  peaks.f16_flops_per_s = number("f16_flops_per_s");
  peaks.bf16_flops_per_s = number("bf16_flops_per_s");
  peaks.l2_bytes = static_cast<int64_t>(number("l2_bytes"));
  if (j.contains("gpu") && j["gpu"].is_object()) {
    peaks.gpu.name = j["gpu"].value("name", "");
    peaks.gpu.sm_clock_mhz = j["gpu"].value("sm_clock_mhz", 0);
    peaks.gpu.memory_clock_mhz = j["gpu"].value("memory_clock_mhz", 0);
  }
  return peaks;
}

harness::DevicePeaks floor_peaks(const MeasuredPeaks& measured) {
  harness::DevicePeaks peaks = measured.as_device_peaks();
  if (measured.device.find("H200") != std::string::npos) {
    harness::DevicePeaks sheet = harness::DevicePeaks::h200_spec_sheet();
    peaks.memory_bytes_per_s = std::max(peaks.memory_bytes_per_s, sheet.memory_bytes_per_s);
    peaks.f32_flops_per_s = std::max(peaks.f32_flops_per_s, sheet.f32_flops_per_s);
    peaks.tensor_16bit_flops_per_s = std::max(peaks.tensor_16bit_flops_per_s, sheet.tensor_16bit_flops_per_s);
    peaks.tensor_tf32_flops_per_s = std::max(peaks.tensor_tf32_flops_per_s, sheet.tensor_tf32_flops_per_s);
    peaks.source += " and the H200 spec sheet, whichever is higher";
  }
  return peaks;
}

}  // namespace dragon::bench
