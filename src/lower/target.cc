// Target constructors and their spelling. Only limits and names: no driver queries.
#include "dragon/lower/target.h"

namespace dragon::lower {

Target Target::cpu() { return Target{}; }

Target Target::cuda_h200() {
  Target t;
  t.kind = Kind::kCuda;
  t.arch = "sm_90a";
  t.max_threads_per_block = 1024;
  t.max_shared_memory_per_block = 232448;  // 227 KB with the opt-in attribute
  t.max_vthreads = 8;
  t.max_vector_bytes = 16;
  t.warp_size = 32;
  t.max_grid_x = 2147483647;
  t.max_grid_y = 65535;
  t.max_grid_z = 65535;
  return t;
}

Target::GridLaunch Target::grid_launch(int64_t x, int64_t y, int64_t z) const {
  auto within = [](int64_t extent, int64_t limit) { return limit <= 0 || extent <= limit; };
  if (!within(x, max_grid_x)) return GridLaunch::kNever;
  if (within(y, max_grid_y) && within(z, max_grid_z)) return GridLaunch::kAsIs;
  int64_t blocks = 0;
  if (__builtin_mul_overflow(x, y, &blocks) || __builtin_mul_overflow(blocks, z, &blocks)) return GridLaunch::kNever;
  return within(blocks, max_grid_x) ? GridLaunch::kFoldedIntoX : GridLaunch::kNever;
}

int64_t Target::max_grid_extent(std::string_view block_tag) const {
  if (block_tag == "blockIdx.x") return max_grid_x;
  if (block_tag == "blockIdx.y") return max_grid_y;
  if (block_tag == "blockIdx.z") return max_grid_z;
  return 0;
}

std::string Target::to_string() const {
  if (kind == Kind::kCpu) return "cpu";
  return "cuda -arch=" + arch;
}

std::optional<Target> Target::from_name(std::string_view name) {
  if (name == "cpu") return cpu();
  if (name == "cuda") return cuda_h200();
  return std::nullopt;
}

const std::vector<std::string>& Target::names() {
  static const std::vector<std::string> names = {"cpu", "cuda"};
  return names;
}

}  // namespace dragon::lower
