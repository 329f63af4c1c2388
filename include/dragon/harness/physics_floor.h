// The physics floor: the least time a kernel for a problem can take on a GPU, from the
// bytes it must move and the arithmetic it must do at the device's peak rates. A measured
// time below it means the kernel skipped work (cached results, wrote part of its output,
// ran on a side stream outside the timed window) and is rejected as impossible, whatever
// its outputs say. Computed from the unscheduled reference function, never from the
// candidate.
#pragma once

#include <string>

#include "dragon/ir/function.h"

namespace dragon::harness {

// Peak rates of a device. Spec-sheet values until `dragon peaks` measures them; spec
// sheets overstate what is reachable, which only lowers the floor (no false rejections).
struct DevicePeaks {
  double memory_bytes_per_s = 0;
  double f32_flops_per_s = 0;          // CUDA cores, no tensor cores
  double tensor_16bit_flops_per_s = 0;  // f16/bf16 inputs, dense
  // TF32 inputs, dense. One-pass TF32 fails f32 tolerances, but 3xTF32 (split operands,
  // three products) passes them at a third of this rate, so f32 arithmetic can go that fast.
  double tensor_tf32_flops_per_s = 0;
  int64_t l2_bytes = 0;
  std::string source;  // "H200 spec sheet", "measured by dragon peaks on ..."
  // The H200 SXM: 4.8 TB/s HBM3e, 67 TFLOP/s f32, 989 TFLOP/s dense f16/bf16, 494.7 TFLOP/s
  // dense TF32, 50 MB L2.
  static DevicePeaks h200_spec_sheet();
};

struct PhysicsFloor {
  double bytes = 0;    // that must cross HBM: every input once, outputs beyond the L2
  double flops = 0;    // multiply, add and subtract of float values, over every iteration
  // A structural mask (triu, causal, padding) selects some values away: the arithmetic
  // behind them may be skipped, so the floor is the memory floor alone. Inputs read only
  // through indices (embedding tables) are not counted in bytes either.
  bool flops_skippable = false;
  double floor_ms = 0;
  bool compute_bound = false;
  std::string describe() const;  // "floor 0.112 ms (memory: 537 MB at 4.8 TB/s)"
};

// The floor of `reference` (an unscheduled function: its blocks' iteration domains are
// the work). Outputs small enough to stay in the L2 may end the kernel before reaching
// HBM, so only the part beyond the L2 counts.
PhysicsFloor physics_floor(const ir::PrimFunc& reference, const DevicePeaks& peaks);

// Whether `measured_ms` is below the floor by more than measurement noise (10%: event
// resolution and clock variation, on top of spec sheets' optimism).
bool faster_than_physics(double measured_ms, const PhysicsFloor& floor);

}  // namespace dragon::harness
