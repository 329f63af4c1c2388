#include "dragon/bench/device_comparison.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

// Per block: the largest |a - r| over finite pairs, the largest finite |r|, and the count of
// pairs where exactly one side is finite or both are non-finite but differ; then one
// atomic per block. Non-negative doubles order like their bit patterns, so atomicMax on
// the bits is a max on the values.
constexpr const char* kCompareSource = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ double as_double(float v) { return v; }
__device__ double as_double(double v) { return v; }
__device__ double as_double(__half v) { return __half2float(v); }
__device__ double as_double(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ double as_double(signed char v) { return v; }
__device__ double as_double(int v) { return v; }
__device__ double as_double(long long v) { return (double)v; }
__device__ double as_double(bool v) { return v ? 1.0 : 0.0; }
template <typename T>
__device__ void compare(const T* a, const double* r, unsigned long long n, unsigned long long* stats) {
  __shared__ double error[256], scale[256];
  __shared__ unsigned long long bad[256];
  double e = 0, s = 0;
  unsigned long long b = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    double x = as_double(a[i]), y = r[i];
    bool fx = isfinite(x), fy = isfinite(y);
    if (fx && fy) {
      e = fmax(e, fabs(x - y));
      s = fmax(s, fabs(y));
    } else if (fx != fy || !((isnan(x) && isnan(y)) || x == y)) {
      ++b;
    }
  }
  error[threadIdx.x] = e; scale[threadIdx.x] = s; bad[threadIdx.x] = b;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      error[threadIdx.x] = fmax(error[threadIdx.x], error[threadIdx.x + stride]);
      scale[threadIdx.x] = fmax(scale[threadIdx.x], scale[threadIdx.x + stride]);
      bad[threadIdx.x] += bad[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicMax(&stats[0], (unsigned long long)__double_as_longlong(error[0]));
    atomicMax(&stats[1], (unsigned long long)__double_as_longlong(scale[0]));
    atomicAdd(&stats[2], bad[0]);
  }
}
// KernelBench's torch.allclose: |a - r| <= atol + rtol |r| everywhere (NaN never close).
template <typename T>
__device__ void not_close(const T* a, const double* r, unsigned long long n, double atol, double rtol,
                          unsigned long long* count) {
  unsigned long long c = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    double x = as_double(a[i]), y = r[i];
    if (!(fabs(x - y) <= atol + rtol * fabs(y)) && !(x == y)) ++c;
  }
  atomicAdd(count, c);
}
extern "C" __global__ void sum_f64(const double* r, unsigned long long n, double* sum) {
  double s = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) s += r[i];
  atomicAdd(sum, s);
}
template <typename T>
__device__ void widen(const T* a, double* out, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) out[i] = as_double(a[i]);
}
#define DRAGON_COMPARE(NAME, T)                                                                   \
  extern "C" __global__ void NAME(const T* a, const double* r, unsigned long long n,              \
                                  unsigned long long* stats) { compare(a, r, n, stats); }             \
  extern "C" __global__ void widen_##NAME(const T* a, double* out, unsigned long long n) { widen(a, out, n); } \
  extern "C" __global__ void not_close_##NAME(const T* a, const double* r, unsigned long long n, double atol,   \
                                              double rtol, unsigned long long* count) {                       \
    not_close(a, r, n, atol, rtol, count);                                                                     \
  }
DRAGON_COMPARE(compare_f64, double)
DRAGON_COMPARE(compare_f32, float)
DRAGON_COMPARE(compare_f16, __half)
DRAGON_COMPARE(compare_bf16, __nv_bfloat16)
DRAGON_COMPARE(compare_i8, signed char)
DRAGON_COMPARE(compare_i32, int)
DRAGON_COMPARE(compare_i64, long long)
DRAGON_COMPARE(compare_bool, bool)
)";

std::string kernel_for(ir::DataType dtype) {
  if (dtype == ir::DataType::f64()) return "compare_f64";
  if (dtype == ir::DataType::f32()) return "compare_f32";
  if (dtype == ir::DataType::f16()) return "compare_f16";
  if (dtype == ir::DataType::bf16()) return "compare_bf16";
  if (dtype == ir::DataType::i8()) return "compare_i8";
  if (dtype == ir::DataType::i32()) return "compare_i32";
  if (dtype == ir::DataType::i64()) return "compare_i64";
  if (dtype == ir::DataType::boolean()) return "compare_bool";
  throw UserError("the device comparison has no kernel for " + ir::to_string(dtype));
}

template <typename T>
T or_throw(Expected<T> e, const char* what) {
  if (!e.ok()) throw UserError(std::string(what) + ": " + e.error().describe());
  return std::move(e.value());
}

void or_throw(const Status& s, const char* what) {
  if (!s.ok()) throw UserError(std::string(what) + ": " + s.error().describe());
}

}  // namespace

double DeviceComparison::normalized_error() const {
  if (nonfinite_mismatches > 0) return std::numeric_limits<double>::infinity();
  return max_abs_error / std::max(reference_scale, std::numeric_limits<double>::min());
}

std::string DeviceComparison::describe() const {
  std::string text = fmt::format("{:.3g} of the reference's scale {:.3g} (max |error| {:.3g})",
                                 max_abs_error / std::max(reference_scale, std::numeric_limits<double>::min()),
                                 reference_scale, max_abs_error);
  if (nonfinite_mismatches > 0) text += fmt::format("; {} NaN/Inf where the reference differs", nonfinite_mismatches);
  return text;
}

std::string_view DeviceComparer::source() { return kCompareSource; }

DeviceComparer::DeviceComparer(runtime::CudaDriver* driver) : driver_(driver) {
  runtime::Cubin cubin = or_throw(
      runtime::nvrtc_compile(kCompareSource, "dragon_compare.cu", {}, runtime::CompileCache::global()),
      "NVRTC (output comparison)");
  module_ = or_throw(driver_->load_module(cubin.bytes), "loading the output comparison");
  stats_ = or_throw(driver_->allocate(3 * sizeof(uint64_t)), "allocating the comparison's accumulators");
}

DeviceComparer::~DeviceComparer() {
  driver_->release(stats_);
  driver_->unload_module(module_);
}

DeviceComparison DeviceComparer::compare(runtime::DevicePtr actual, ir::DataType dtype, runtime::DevicePtr reference,
                                         int64_t elements) {
  void* function = or_throw(driver_->get_function(module_, kernel_for(dtype)), "output comparison");
  or_throw(driver_->fill_bytes(stats_, 0, 3 * sizeof(uint64_t)), "clearing the comparison's accumulators");
  unsigned long long n = static_cast<unsigned long long>(elements);
  runtime::DevicePtr stats = stats_;
  void* params[] = {&actual, &reference, &n, &stats};
  or_throw(driver_->launch(function, {1024, 1, 1}, {256, 1, 1}, 0, params), "output comparison launch");
  uint64_t host[3] = {};
  or_throw(driver_->copy_to_host(host, stats_, sizeof(host)), "reading the comparison");
  DeviceComparison result;
  std::memcpy(&result.max_abs_error, &host[0], sizeof(double));
  std::memcpy(&result.reference_scale, &host[1], sizeof(double));
  result.nonfinite_mismatches = static_cast<int64_t>(host[2]);
  return result;
}

int64_t DeviceComparer::count_not_close(runtime::DevicePtr actual, ir::DataType dtype, runtime::DevicePtr reference,
                                        int64_t elements, double atol, double rtol) {
  void* function = or_throw(driver_->get_function(module_, "not_close_" + kernel_for(dtype)), "allclose");
  or_throw(driver_->fill_bytes(stats_, 0, sizeof(uint64_t)), "clearing the allclose count");
  unsigned long long n = static_cast<unsigned long long>(elements);
  runtime::DevicePtr count = stats_;
  void* params[] = {&actual, &reference, &n, &atol, &rtol, &count};
  or_throw(driver_->launch(function, {1024, 1, 1}, {256, 1, 1}, 0, params), "allclose launch");
  uint64_t host = 0;
  or_throw(driver_->copy_to_host(&host, stats_, sizeof(host)), "reading the allclose count");
  return static_cast<int64_t>(host);
}

double DeviceComparer::sum(runtime::DevicePtr values, int64_t elements) {
  void* function = or_throw(driver_->get_function(module_, "sum_f64"), "sum");
  or_throw(driver_->fill_bytes(stats_, 0, sizeof(double)), "clearing the sum");
  unsigned long long n = static_cast<unsigned long long>(elements);
  runtime::DevicePtr sum = stats_;
  void* params[] = {&values, &n, &sum};
  or_throw(driver_->launch(function, {1024, 1, 1}, {256, 1, 1}, 0, params), "sum launch");
  double host = 0;
  or_throw(driver_->copy_to_host(&host, stats_, sizeof(host)), "reading the sum");
  return host;
}

void DeviceComparer::widen(runtime::DevicePtr source, ir::DataType dtype, runtime::DevicePtr destination,
                           int64_t elements) {
  void* function = or_throw(driver_->get_function(module_, "widen_" + kernel_for(dtype)), "widening to f64");
  unsigned long long n = static_cast<unsigned long long>(elements);
  void* params[] = {&source, &destination, &n};
  or_throw(driver_->launch(function, {1024, 1, 1}, {256, 1, 1}, 0, params), "widening launch");
}

}  // namespace dragon::bench
