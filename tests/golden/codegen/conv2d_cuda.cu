typedef signed char int8_t;
typedef int int32_t;
typedef long long int64_t;
#define DRAGON_INLINE static __device__ __forceinline__
#define DRAGON_INF_F32 __int_as_float(0x7f800000)
#define DRAGON_NAN_F32 __int_as_float(0x7fffffff)
#define DRAGON_INF_F64 __longlong_as_double(0x7ff0000000000000LL)
#define DRAGON_NAN_F64 __longlong_as_double(0x7fffffffffffffffLL)
// Index arithmetic and conversions with the IR's semantics.
template <typename T> DRAGON_INLINE T dragon_floordiv(T a, T b) {
  T q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <typename T> DRAGON_INLINE T dragon_floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
DRAGON_INLINE float dragon_floordiv(float a, float b) { return floorf(a / b); }
DRAGON_INLINE double dragon_floordiv(double a, double b) { return floor(a / b); }
DRAGON_INLINE float dragon_floormod(float a, float b) { return a - floorf(a / b) * b; }
DRAGON_INLINE double dragon_floormod(double a, double b) { return a - floor(a / b) * b; }
template <typename T> DRAGON_INLINE T dragon_min(T a, T b) { return b < a ? b : a; }
template <typename T> DRAGON_INLINE T dragon_max(T a, T b) { return a < b ? b : a; }
// |x| wraps: the most negative value is its own absolute value.
template <typename T> DRAGON_INLINE T dragon_iabs(T a) { return a < 0 ? (T)(0ULL - (unsigned long long)a) : a; }
// float -> int truncates toward zero and saturates; NaN gives 0.
template <typename F> DRAGON_INLINE int8_t dragon_f2i8(F x) {
  return x != x ? (int8_t)0 : x <= (F)-128 ? (int8_t)-128 : x >= (F)128 ? (int8_t)127 : (int8_t)x;
}
template <typename F> DRAGON_INLINE int32_t dragon_f2i32(F x) {
  return x != x ? 0 : x <= (F)-2147483648.0 ? (int32_t)(-2147483647 - 1) : x >= (F)2147483648.0 ? (int32_t)2147483647 : (int32_t)x;
}
template <typename F> DRAGON_INLINE int64_t dragon_f2i64(F x) {
  return x != x ? 0
       : x <= (F)-9223372036854775808.0 ? (int64_t)(-9223372036854775807LL - 1)
       : x >= (F)9223372036854775808.0 ? (int64_t)9223372036854775807LL : (int64_t)x;
}
// conv2d for sm_90a

extern "C" __global__ void __launch_bounds__(256) conv2d_kernel0(const float* __restrict__ X, const float* __restrict__ W, float* Y) {
  const int32_t i0_i1_i2_i3_fused_0 = (int32_t)blockIdx.x;
  const int32_t i0_i1_i2_i3_fused_1 = (int32_t)threadIdx.x;
  if ((((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1) < 6272)) {
    for (int32_t r0 = 0; r0 < 8; ++r0) {
      for (int32_t r1 = 0; r1 < 3; ++r1) {
        for (int32_t r2 = 0; r2 < 3; ++r2) {
          if ((((r0 == 0) && (r1 == 0)) && (r2 == 0))) {
            Y[((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1)] = 0x0p+0f;
          }
          Y[((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1)] = (Y[((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1)] + (X[(((((((((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1) / 3136) * 2048) + (r0 * 256)) + (((((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1) / 14) % 14) * 16)) + (r1 * 16)) + (((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1) % 14)) + r2)] * W[((((((((i0_i1_i2_i3_fused_0 * 256) + i0_i1_i2_i3_fused_1) / 196) % 16) * 72) + (r0 * 9)) + (r1 * 3)) + r2)]));
        }
      }
    }
  }
}
