// The prelude of generated CUDA code: NVRTC's fp16/bf16 headers, fixed-width integer
// names (NVRTC has no <cstdint>), the special float values and the common helpers
// (the tensor-core warp helpers, cuda_mma.cc, follow only in sources that use them).
#include "cuda_prelude.h"

#include "dragon/codegen/c_printer.h"

namespace dragon::codegen {

std::string cuda_prelude() {
  std::string text = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef signed char int8_t;
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

}  // namespace dragon::codegen
