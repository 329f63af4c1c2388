#include "dragon/bench/device_filler.h"

#include <algorithm>
#include <string>
#include <vector>

#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

// One kernel per (type, kind). The hash is SplitMix64's finaliser; Box-Muller for the
// normal draws. Every element's value is a function of its flat index and the seed alone,
// so launch shapes never change the values.
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
// Positive draws: |x| + 0.1 keeps them away from 0 (logs, divisions, square roots).
__device__ float positive_uniform01_at(unsigned long long i, unsigned long long seed) {
  return uniform01_at(i, seed) + 0.1f;
}
__device__ float positive_normal_at(unsigned long long i, unsigned long long seed) {
  return fabsf(normal_at(i, seed)) + 0.1f;
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
DRAGON_FILL(positive_uniform01_f32, float, AS_F32, positive_uniform01_at)
DRAGON_FILL(positive_uniform01_f64, double, AS_F64, positive_uniform01_at)
DRAGON_FILL(positive_uniform01_f16, __half, __float2half, positive_uniform01_at)
DRAGON_FILL(positive_uniform01_bf16, __nv_bfloat16, __float2bfloat16, positive_uniform01_at)
DRAGON_FILL(positive_normal_f32, float, AS_F32, positive_normal_at)
DRAGON_FILL(positive_normal_f64, double, AS_F64, positive_normal_at)
DRAGON_FILL(positive_normal_f16, __half, __float2half, positive_normal_at)
DRAGON_FILL(positive_normal_bf16, __nv_bfloat16, __float2bfloat16, positive_normal_at)

// Integers uniform in [lo, lo + span): the high half of hash * span maps the 64-bit hash
// onto the span without a division (bias below span / 2^64).
#define DRAGON_INT_FILL(NAME, T, CONVERT)                                                               \
  extern "C" __global__ void NAME(T* p, unsigned long long n, unsigned long long seed, long long lo,    \
                                  unsigned long long span) {                                            \
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;       \
         i += (unsigned long long)gridDim.x * blockDim.x)                                               \
      p[i] = CONVERT((long long)((unsigned long long)lo + __umul64hi(mix(i, seed), span)));             \
  }
#define INT_AS_I8(x) ((signed char)(x))
#define INT_AS_I32(x) ((int)(x))
#define INT_AS_I64(x) (x)
#define INT_AS_BOOL(x) ((unsigned char)((x) != 0))
#define INT_AS_F32(x) ((float)(x))
#define INT_AS_F64(x) ((double)(x))
DRAGON_INT_FILL(int_range_i8, signed char, INT_AS_I8)
DRAGON_INT_FILL(int_range_i32, int, INT_AS_I32)
DRAGON_INT_FILL(int_range_i64, long long, INT_AS_I64)
DRAGON_INT_FILL(int_range_bool, unsigned char, INT_AS_BOOL)
DRAGON_INT_FILL(int_range_f32, float, INT_AS_F32)
DRAGON_INT_FILL(int_range_f64, double, INT_AS_F64)
DRAGON_INT_FILL(int_range_f16, __half, __ll2half_rn)
DRAGON_INT_FILL(int_range_bf16, __nv_bfloat16, __ll2bfloat16_rn)

// Probabilities: each row of `row_length` elements the softmax of N(0, 1) normals. One
// block per row (grid-stride over rows); the normals are drawn again in each of the three
// passes (max, sum, write) rather than kept, so narrow types lose nothing in between.
// The sum is accumulated in double so that long rows still sum to 1 in f32.
#define DRAGON_SIMPLEX_MAX_THREADS 256
__device__ void store(float* p, double v) { *p = (float)v; }
__device__ void store(double* p, double v) { *p = v; }
__device__ void store(__half* p, double v) { *p = __double2half(v); }
__device__ void store(__nv_bfloat16* p, double v) { *p = __double2bfloat16(v); }
template <typename T, typename Exp>  // Exp: the precision of the exponentials
__device__ void simplex_rows(T* p, unsigned long long rows, unsigned long long row_length,
                             unsigned long long seed) {
  __shared__ float largest[DRAGON_SIMPLEX_MAX_THREADS];
  __shared__ double total[DRAGON_SIMPLEX_MAX_THREADS];
  const unsigned t = threadIdx.x;
  for (unsigned long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const unsigned long long base = row * row_length;
    float m = __int_as_float(0xff800000);  // -infinity (NVRTC has no <math.h> INFINITY)
    for (unsigned long long j = t; j < row_length; j += blockDim.x) m = fmaxf(m, normal_at(base + j, seed));
    largest[t] = m;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s) largest[t] = fmaxf(largest[t], largest[t + s]);
      __syncthreads();
    }
    const Exp row_max = largest[0];
    double sum = 0;
    for (unsigned long long j = t; j < row_length; j += blockDim.x)
      sum += exp((Exp)normal_at(base + j, seed) - row_max);
    total[t] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s) total[t] += total[t + s];
      __syncthreads();
    }
    const double inverse = 1.0 / total[0];
    for (unsigned long long j = t; j < row_length; j += blockDim.x)
      store(p + base + j, (double)exp((Exp)normal_at(base + j, seed) - row_max) * inverse);
    __syncthreads();  // the next row reuses the shared arrays
  }
}
#define DRAGON_SIMPLEX(NAME, T, EXP)                                                              \
  extern "C" __global__ void NAME(T* p, unsigned long long rows, unsigned long long row_length, \
                                  unsigned long long seed) {                                     \
    simplex_rows<T, EXP>(p, rows, row_length, seed);                                             \
  }
DRAGON_SIMPLEX(simplex_f32, float, float)
DRAGON_SIMPLEX(simplex_f64, double, double)
DRAGON_SIMPLEX(simplex_f16, __half, float)
DRAGON_SIMPLEX(simplex_bf16, __nv_bfloat16, float)
)";

// The suffix of `dtype`'s kernels; empty for a type without any (vector types, i16).
std::string_view kernel_suffix(ir::DataType dtype) {
  if (dtype == ir::DataType::f32()) return "f32";
  if (dtype == ir::DataType::f64()) return "f64";
  if (dtype == ir::DataType::f16()) return "f16";
  if (dtype == ir::DataType::bf16()) return "bf16";
  if (dtype == ir::DataType::i8()) return "i8";
  if (dtype == ir::DataType::i32()) return "i32";
  if (dtype == ir::DataType::i64()) return "i64";
  if (dtype == ir::DataType::boolean()) return "bool";
  return {};
}

std::string float_kernel(std::string_view prefix, ir::DataType dtype) {
  if (!dtype.is_float() || kernel_suffix(dtype).empty()) {
    throw UserError("the device filler has no " + std::string(prefix) + "* kernel for " + ir::to_string(dtype));
  }
  return std::string(prefix) + std::string(kernel_suffix(dtype));
}

std::string_view distribution_prefix(DeviceFiller::Distribution distribution) {
  return distribution == DeviceFiller::Distribution::kUniform01 ? "uniform01_" : "normal_";
}

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

// Elementwise kernels: enough blocks to fill an H200 several times over, grid-stride beyond.
constexpr std::array<int64_t, 3> kElementwiseGrid = {2048, 1, 1};
constexpr std::array<int64_t, 3> kElementwiseBlock = {256, 1, 1};
// The simplex kernel's shared arrays hold this many threads (DRAGON_SIMPLEX_MAX_THREADS).
constexpr int64_t kSimplexMaxThreads = 256;
constexpr int64_t kSimplexMaxBlocks = 16384;

}  // namespace

std::string_view DeviceFiller::source() { return kFillSource; }

DeviceFiller::DeviceFiller(runtime::CudaDriver* driver) : driver_(driver) {
  Expected<runtime::Cubin> cubin =
      runtime::nvrtc_compile(kFillSource, "dragon_fill.cu", {}, runtime::CompileCache::global());
  if (!cubin.ok()) throw UserError("NVRTC (input filler): " + cubin.error().describe());
  Expected<void*> module = driver_->load_module(cubin.value().bytes);
  if (!module.ok()) throw UserError("loading the input filler: " + module.error().describe());
  module_ = module.value();
}

DeviceFiller::~DeviceFiller() { driver_->unload_module(module_); }

void DeviceFiller::launch(const std::string& kernel, std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
                          void** params) {
  Expected<void*> function = driver_->get_function(module_, kernel);
  if (!function.ok()) throw UserError("input filler " + kernel + ": " + function.error().describe());
  Status launched = driver_->launch(function.value(), grid, block, 0, params);
  if (!launched.ok()) throw UserError("input filler " + kernel + " launch: " + launched.error().describe());
}

void DeviceFiller::fill(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, Distribution distribution,
                        uint64_t seed) {
  std::string kernel = float_kernel(distribution_prefix(distribution), dtype);
  unsigned long long n = static_cast<unsigned long long>(elements), s = seed;
  void* params[] = {&ptr, &n, &s};
  launch(kernel, kElementwiseGrid, kElementwiseBlock, params);
}

void DeviceFiller::fill_constant_f64(runtime::DevicePtr ptr, int64_t elements, double value) {
  unsigned long long n = static_cast<unsigned long long>(elements);
  void* params[] = {&ptr, &n, &value};
  launch("constant_f64", kElementwiseGrid, kElementwiseBlock, params);
}

bool DeviceFiller::int_range_fits(ir::DataType dtype, int64_t lo, int64_t hi) {
  if (hi <= lo) return false;
  if (!dtype.is_int()) return true;
  return lo >= ir::int_min_value(dtype) && hi - 1 <= ir::int_max_value(dtype);
}

bool DeviceFiller::draws(const ir::ValueDomain& domain, ir::DataType dtype) {
  if (kernel_suffix(dtype).empty()) return false;
  switch (domain.kind) {
    case ir::ValueDomain::Kind::kReal:
    case ir::ValueDomain::Kind::kPositive: return true;
    case ir::ValueDomain::Kind::kSimplex: return dtype.is_float();
    case ir::ValueDomain::Kind::kIntRange: return int_range_fits(dtype, domain.lo, domain.hi);
    case ir::ValueDomain::Kind::kOffsets: return false;
  }
  return false;
}

void DeviceFiller::fill_domain(runtime::DevicePtr ptr, const ir::Buffer& buffer, const ir::ValueDomain& domain,
                               Distribution distribution, uint64_t seed) {
  ir::DataType dtype = buffer->dtype;
  if (!draws(domain, dtype)) {
    throw UserError("the device filler cannot draw " + buffer->name + " (" + ir::to_string(dtype) +
                    ") within its value domain");
  }
  int64_t elements = num_elements(buffer->shape);
  // The value sets of interp's input generator (make_argument), kind by kind.
  switch (domain.kind) {
    case ir::ValueDomain::Kind::kReal:
      if (dtype.is_float()) {
        fill(ptr, dtype, elements, distribution, seed);
      } else if (dtype.is_bool()) {
        fill_int_range(ptr, dtype, elements, 0, 2, seed);
      } else {
        fill_int_range(ptr, dtype, elements, -8, 8, seed);
      }
      return;
    case ir::ValueDomain::Kind::kPositive:
      if (dtype.is_float()) {
        fill_positive(ptr, dtype, elements, distribution, seed);
      } else {
        fill_int_range(ptr, dtype, elements, 1, 9, seed);
      }
      return;
    case ir::ValueDomain::Kind::kSimplex:
      fill_simplex(ptr, dtype, elements, buffer->shape.empty() ? 1 : buffer->shape.back(), seed);
      return;
    case ir::ValueDomain::Kind::kIntRange: fill_int_range(ptr, dtype, elements, domain.lo, domain.hi, seed); return;
    case ir::ValueDomain::Kind::kOffsets: break;  // draws() is false
  }
  throw UserError("the device filler cannot draw " + buffer->name + "'s value domain");
}

void DeviceFiller::fill_int_range(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, int64_t lo,
                                  int64_t hi, uint64_t seed) {
  if (kernel_suffix(dtype).empty()) throw UserError("the device filler has no kernel for " + ir::to_string(dtype));
  if (!int_range_fits(dtype, lo, hi)) {
    throw UserError("the integer range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    ") is empty or does not fit " + ir::to_string(dtype));
  }
  unsigned long long n = static_cast<unsigned long long>(elements), s = seed;
  long long low = lo;
  unsigned long long span = static_cast<unsigned long long>(hi) - static_cast<unsigned long long>(lo);
  void* params[] = {&ptr, &n, &s, &low, &span};
  launch("int_range_" + std::string(kernel_suffix(dtype)), kElementwiseGrid, kElementwiseBlock, params);
}

void DeviceFiller::fill_positive(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements,
                                 Distribution distribution, uint64_t seed) {
  std::string kernel = float_kernel("positive_" + std::string(distribution_prefix(distribution)), dtype);
  unsigned long long n = static_cast<unsigned long long>(elements), s = seed;
  void* params[] = {&ptr, &n, &s};
  launch(kernel, kElementwiseGrid, kElementwiseBlock, params);
}

void DeviceFiller::fill_simplex(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, int64_t row_length,
                                uint64_t seed) {
  std::string kernel = float_kernel("simplex_", dtype);
  if (elements == 0) return;
  if (row_length <= 0 || elements % row_length != 0) {
    throw UserError("simplex rows of " + std::to_string(row_length) + " elements do not tile " +
                    std::to_string(elements) + " elements");
  }
  // A power of two (the tree reductions halve it), no wider than a row needs.
  int64_t threads = 32;
  while (threads < row_length && threads < kSimplexMaxThreads) threads *= 2;
  unsigned long long rows = static_cast<unsigned long long>(elements / row_length);
  unsigned long long length = static_cast<unsigned long long>(row_length), s = seed;
  void* params[] = {&ptr, &rows, &length, &s};
  launch(kernel, {std::min<int64_t>(elements / row_length, kSimplexMaxBlocks), 1, 1}, {threads, 1, 1}, params);
}

}  // namespace dragon::bench
