// Random inputs written on the device: gigabytes generated on the host and copied would
// dominate a suite run. A counter-based hash per element, so a seed gives the same values
// on every run and GPU. Distributions: torch.rand's U[0, 1) (what KernelBench feeds) and
// N(0, 1). Inputs with a value domain get the value sets of interp's input generator
// (src/interp/input_generator.cc), from another random stream: small integers, positive
// values, softmax rows, integer ranges. Bag offsets stay with the host generator.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/ir/dtype.h"
#include "dragon/ir/function.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

class DeviceFiller {
 public:
  // Compiles its kernels with NVRTC (cached); throws UserError when that or loading fails.
  explicit DeviceFiller(runtime::CudaDriver* driver);
  ~DeviceFiller();
  DeviceFiller(const DeviceFiller&) = delete;
  DeviceFiller& operator=(const DeviceFiller&) = delete;

  // The CUDA source it compiles (tests compile it with NVRTC where there is no GPU).
  static std::string_view source();

  enum class Distribution : uint8_t { kUniform01, kNormal };
  // f32, f16, bf16 or f64 elements; throws UserError for another type or a failed launch.
  void fill(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, Distribution distribution, uint64_t seed);
  // Every element of an f64 buffer set to `value` (a constant candidate output).
  void fill_constant_f64(runtime::DevicePtr ptr, int64_t elements, double value);

  // Whether fill_domain draws an input of this domain and type. False for bag offsets
  // (a few bags + 1 values, built by a serial walk), vector types, integer widths without a
  // kernel, and domains the host generator rejects (a simplex of integers, an empty or
  // overflowing range): the host generator draws or rejects those, with the parameter in
  // its message.
  static bool draws(const ir::ValueDomain& domain, ir::DataType dtype);
  // Whether [lo, hi) is a non-empty range whose values an element of `dtype` holds (floats
  // and bools take any range, as in the host generator: bools store value != 0).
  static bool int_range_fits(ir::DataType dtype, int64_t lo, int64_t hi);

  // `buffer`'s elements drawn within `domain` (draws() must hold; throws UserError if not):
  //   real:      floats from `distribution`; ints uniform in [-8, 8); bools 0 or 1
  //   positive:  floats |draw| + 0.1; ints in [1, 8]; bools 1
  //   simplex:   per row of the last dimension, the softmax of N(0, 1) normals
  //   int range: uniform in [lo, hi), as the integer's value in float types
  void fill_domain(runtime::DevicePtr ptr, const ir::Buffer& buffer, const ir::ValueDomain& domain,
                   Distribution distribution, uint64_t seed);
  // Integers uniform in [lo, hi) (int_range_fits must hold; throws UserError if not).
  void fill_int_range(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, int64_t lo, int64_t hi,
                      uint64_t seed);
  // |draw| + 0.1 in a float type.
  void fill_positive(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, Distribution distribution,
                     uint64_t seed);
  // Rows of `row_length` elements (the last dimension), each the softmax of normals; a
  // float type, `elements` a multiple of `row_length`.
  void fill_simplex(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, int64_t row_length, uint64_t seed);

 private:
  void launch(const std::string& kernel, std::array<int64_t, 3> grid, std::array<int64_t, 3> block, void** params);

  runtime::CudaDriver* driver_;
  void* module_ = nullptr;
};

}  // namespace dragon::bench
