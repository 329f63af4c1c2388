// The 64-bit shared-memory matrix descriptor of Hopper's wgmma.mma_async (PTX ISA,
// "Matrix Descriptor Format" of the asynchronous warpgroup-level matrix instructions),
// and the 128-byte swizzle of the shared layouts it describes. Host-side twins of what
// the CUDA prelude computes on the device (cuda_wgmma.cc prints the same bit layout), so
// the encoding is unit-tested here without a GPU.
//
// Bit fields (each byte quantity in units of 16 bytes, its 4 low bits dropped):
//    0-13  start address (shared-window byte address >> 4)
//   16-29  leading dimension byte offset >> 4 (LBO)
//   32-45  stride dimension byte offset >> 4 (SBO)
//   49-51  matrix base offset (0 when the swizzle atoms are 1024-byte aligned)
//   62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
// For the K-major 128-byte-swizzled operands of tensor_intrin.h (rows of 128 bytes, atoms
// of 8 rows): SBO = 1024 (from one 8-row atom to the next along M or N), LBO unused by the
// hardware (its K extent, 32 bytes, stays inside one swizzled row) and set to 16 bytes, as
// is customary.
#pragma once

#include <cstdint>

namespace dragon::codegen {

enum class WgmmaSwizzle : uint64_t { kNone = 0, kSwizzle128B = 1, kSwizzle64B = 2, kSwizzle32B = 3 };

// The descriptor's fields in bytes (start address in the shared window).
struct WgmmaDescriptorFields {
  uint32_t start_address = 0;
  uint32_t leading_byte_offset = 0;
  uint32_t stride_byte_offset = 0;
  uint32_t base_offset = 0;  // 3 bits, not shifted
  WgmmaSwizzle swizzle = WgmmaSwizzle::kNone;
};

// Encodes `fields`; throws InternalError when a byte quantity is not a multiple of 16 or
// does not fit its 14 bits (shared addresses below 256 KiB), or base_offset exceeds 7.
uint64_t encode_wgmma_descriptor(const WgmmaDescriptorFields& fields);
// The inverse, for tests and diagnostics.
WgmmaDescriptorFields decode_wgmma_descriptor(uint64_t descriptor);

// The descriptor of a K-major, 128-byte-swizzled tile starting at shared byte address
// `start` (an 8-row atom's row 0, plus the tile's byte offset along K inside the row).
uint64_t wgmma_kmajor_swizzle128_descriptor(uint32_t start);

// The 128-byte swizzle on an element index of a 2-byte element buffer whose start is
// 1024-byte aligned: the 16-byte chunk (bits 3-5 of the index) XOR the row within its
// 8-row atom (bits 6-8); the 8 elements of a chunk stay together.
constexpr int64_t swizzle128_b16(int64_t index) { return index ^ (((index >> 6) & 7) << 3); }

}  // namespace dragon::codegen
