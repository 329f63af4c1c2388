#include "dragon/bench/device_filler.h"

#include <string>

#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

// One kernel per (type, distribution). The hash is SplitMix64's finaliser; Box-Muller for
// the normal draws.
constexpr const char* kFillSource = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ unsigned long long mix(unsigned long long i, unsigned long long seed) {
  unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 27; x *= 0x94d049bb133111ebull; x ^= x >> 31;
  return x;
}
__device__ float uniform01_at(unsigned long long i, unsigned long long seed) {
  return (mix(i, seed) >> 40) * (1.0f / 16777216.0f);
}
__device__ float normal_at(unsigned long long i, unsigned long long seed) {
  unsigned long long x = mix(i, seed);
  float u1 = ((x >> 40) + 1) * (1.0f / 16777217.0f);
  float u2 = ((x >> 16) & 0xffffff) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}
#define DRAGON_FILL(NAME, T, CONVERT, DRAW)                                                          \
  extern "C" __global__ void NAME(T* p, unsigned long long n, unsigned long long seed) {           \
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;  \
         i += (unsigned long long)gridDim.x * blockDim.x) p[i] = CONVERT(DRAW(i, seed));             \
  }
#define AS_F32(x) (x)
#define AS_F64(x) ((double)(x))
extern "C" __global__ void constant_f64(double* p, unsigned long long n, double value) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) p[i] = value;
}
DRAGON_FILL(uniform01_f32, float, AS_F32, uniform01_at)
DRAGON_FILL(uniform01_f64, double, AS_F64, uniform01_at)
DRAGON_FILL(uniform01_f16, __half, __float2half, uniform01_at)
DRAGON_FILL(uniform01_bf16, __nv_bfloat16, __float2bfloat16, uniform01_at)
DRAGON_FILL(normal_f32, float, AS_F32, normal_at)
DRAGON_FILL(normal_f64, double, AS_F64, normal_at)
DRAGON_FILL(normal_f16, __half, __float2half, normal_at)
DRAGON_FILL(normal_bf16, __nv_bfloat16, __float2bfloat16, normal_at)
)";

std::string type_suffix(ir::DataType dtype) {
  if (dtype == ir::DataType::f32()) return "f32";
  if (dtype == ir::DataType::f64()) return "f64";
  if (dtype == ir::DataType::f16()) return "f16";
  if (dtype == ir::DataType::bf16()) return "bf16";
  throw UserError("the device filler has no kernel for " + ir::to_string(dtype));
}

}  // namespace

std::string_view DeviceFiller::source() { return kFillSource; }

DeviceFiller::DeviceFiller(runtime::CudaDriver* driver) : driver_(driver) {
  runtime::Expected<runtime::Cubin> cubin =
      runtime::nvrtc_compile(kFillSource, "dragon_fill.cu", {}, runtime::CompileCache::global());
  if (!cubin.ok()) throw UserError("NVRTC (input filler): " + cubin.error().describe());
  runtime::Expected<void*> module = driver_->load_module(cubin.value().bytes);
  if (!module.ok()) throw UserError("loading the input filler: " + module.error().describe());
  module_ = module.value();
}

DeviceFiller::~DeviceFiller() { driver_->unload_module(module_); }

void DeviceFiller::fill(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, Distribution distribution,
                        uint64_t seed) {
  std::string kernel = (distribution == Distribution::kUniform01 ? "uniform01_" : "normal_") + type_suffix(dtype);
  runtime::Expected<void*> function = driver_->get_function(module_, kernel);
  if (!function.ok()) throw UserError("input filler " + kernel + ": " + function.error().describe());
  unsigned long long n = static_cast<unsigned long long>(elements), s = seed;
  void* params[] = {&ptr, &n, &s};
  runtime::Status launched = driver_->launch(function.value(), {2048, 1, 1}, {256, 1, 1}, 0, params);
  if (!launched.ok()) throw UserError("input filler launch: " + launched.error().describe());
}

void DeviceFiller::fill_constant_f64(runtime::DevicePtr ptr, int64_t elements, double value) {
  runtime::Expected<void*> function = driver_->get_function(module_, "constant_f64");
  if (!function.ok()) throw UserError("constant filler: " + function.error().describe());
  unsigned long long n = static_cast<unsigned long long>(elements);
  void* params[] = {&ptr, &n, &value};
  runtime::Status launched = driver_->launch(function.value(), {2048, 1, 1}, {256, 1, 1}, 0, params);
  if (!launched.ok()) throw UserError("constant filler launch: " + launched.error().describe());
}

}  // namespace dragon::bench
