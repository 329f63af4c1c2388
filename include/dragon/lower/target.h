// Target: what lowering and code generation produce code for, with the limits that GPU
// verification checks. Not a device handle: nothing here talks to a driver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::lower {

struct Target {
  enum class Kind : uint8_t { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  // CUDA only: NVRTC's --gpu-architecture ("sm_90a" on the H200) and the per-block
  // limits VerifyGPUCode checks (MetaSchedule's verify_gpu_code).
  std::string arch;
  int64_t max_threads_per_block = 0;
  int64_t max_shared_memory_per_block = 0;  // bytes, with opt-in
  int64_t max_vthreads = 0;
  int64_t max_vector_bytes = 0;
  int64_t warp_size = 0;
  // The most blocks a launch's grid holds along blockIdx.x, .y and .z (0: unchecked).
  // cuLaunchKernel refuses a larger grid with CUDA_ERROR_INVALID_VALUE, which ends the
  // process's CUDA context for a tuning worker: checked before a kernel is built.
  int64_t max_grid_x = 0;
  int64_t max_grid_y = 0;
  int64_t max_grid_z = 0;
  // The limit of a blockIdx.* tag, or 0 for another tag.
  int64_t max_grid_extent(std::string_view block_tag) const;
  // How a grid of x by y by z blocks launches: as it is (each within its limit), folded
  // into x (too tall along y or z, but all of it fits along x: lowering's
  // unify_thread_bindings folds it), or not at all. Limits of 0 are not checked.
  enum class GridLaunch : uint8_t { kAsIs, kFoldedIntoX, kNever };
  GridLaunch grid_launch(int64_t x, int64_t y, int64_t z) const;

  // The host CPU (OpenMP threads, simd loops).
  static Target cpu();
  // An H200 (sm_90a): 1024 threads, 227 KB shared memory per block with opt-in
  // (232448 bytes), 8 virtual threads, 16-byte vectors, 32-lane warps, grids of at most
  // 2^31 - 1 x 65535 x 65535 blocks.
  static Target cuda_h200();

  bool is_gpu() const { return kind == Kind::kCuda; }
  // "cpu" or "cuda -arch=sm_90a".
  std::string to_string() const;

  // The target a person names ("cpu"; "cuda": the H200), or nullopt for another name.
  static std::optional<Target> from_name(std::string_view name);
  // Every name from_name knows, in the order help texts list them.
  static const std::vector<std::string>& names();
};

}  // namespace dragon::lower
