// The prelude of generated CUDA code: NVRTC's fp16/bf16 headers (only where a half type is
// used), fixed-width integer names (NVRTC has no <cstdint>), the special float values and
// the common helpers (the tensor-core warp helpers, cuda_mma.cc, follow only in sources
// that use them).
#include "cuda_prelude.h"

#include <algorithm>
#include <array>

#include "dragon/codegen/c_printer.h"

namespace dragon::codegen {

std::string_view half_headers_prelude() {
  return "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
}

std::string cuda_common_prelude() {
  std::string text = R"(typedef signed char int8_t;
typedef int int32_t;
typedef long long int64_t;
#define DRAGON_INLINE static __device__ __forceinline__
#define DRAGON_INF_F32 __int_as_float(0x7f800000)
#define DRAGON_NAN_F32 __int_as_float(0x7fffffff)
#define DRAGON_INF_F64 __longlong_as_double(0x7ff0000000000000LL)
#define DRAGON_NAN_F64 __longlong_as_double(0x7fffffffffffffffLL)
)";
  text += common_prelude();
  return text;
}

bool uses_half_headers(std::string_view code) {
  // Every name the emitter prints from those headers starts with one of these: __half,
  // __half2, __half2float, __nv_bfloat16, __nv_bfloat162, __bfloat162float,
  // __float2half_rn, __float2bfloat16_rn, __double2half, __double2bfloat16. A comment
  // naming them only costs the headers' compile time.
  static constexpr std::array<std::string_view, 7> kPrefixes = {
      "__half", "__nv_bfloat", "__bfloat16", "__float2half", "__float2bfloat", "__double2half", "__double2bfloat"};
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view prefix) { return code.find(prefix) != std::string_view::npos; });
}

bool prelude_order(const PreludePart& a, const PreludePart& b) {
  return a.rank != b.rank ? a.rank < b.rank : a.name < b.name;
}

std::string join_prelude(std::vector<PreludePart> parts) {
  std::sort(parts.begin(), parts.end(), prelude_order);
  std::string text;
  for (const PreludePart& part : parts) text += part.text;
  return text;
}

}  // namespace dragon::codegen
