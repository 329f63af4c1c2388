// physics_floor (physics_floor.h): bytes from the parameters, flops from the blocks.
#include "dragon/harness/physics_floor.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/stmt.h"

namespace dragon::harness {
namespace {

// Float multiplies, adds and subtracts per execution of an expression (an FMA is two).
class ArithmeticCounter : public ir::ExprVisitor {
 public:
  int64_t count = 0;

 protected:
  using ir::ExprVisitor::visit_;
  void visit_(const ir::AddNode* op) override { tally(op->dtype, op->a, op->b); }
  void visit_(const ir::SubNode* op) override { tally(op->dtype, op->a, op->b); }
  void visit_(const ir::MulNode* op) override { tally(op->dtype, op->a, op->b); }

 private:
  void tally(ir::DataType dtype, const ir::Expr& a, const ir::Expr& b) {
    if (dtype.is_float()) ++count;
    visit(a);
    visit(b);
  }
};

// Sum over blocks of (iterations of the block) x (arithmetic per iteration). The init of a
// reduction is not counted: it is a store, not arithmetic.
class FlopCounter : public ir::StmtVisitor {
 public:
  double flops = 0;

 protected:
  using ir::StmtVisitor::visit_;
  void visit_(const ir::BlockRealizeNode* op) override {
    const ir::Block& block = op->block;
    if (!block->iter_vars.empty()) {
      double iterations = 1;
      for (const ir::IterVar& iv : block->iter_vars) {
        std::optional<int64_t> extent = ir::as_const_int(iv.dom.extent);
        iterations *= extent ? static_cast<double>(*extent) : 1.0;
      }
      ArithmeticCounter counter;
      struct Values : ir::StmtVisitor {
        ArithmeticCounter* counter;
        using ir::StmtVisitor::visit_;
        void visit_(const ir::BufferStoreNode* store) override { counter->visit(store->value); }
        void visit_(const ir::BlockRealizeNode*) override {}  // nested blocks count themselves
      } values;
      values.counter = &counter;
      values.visit(block->body);
      flops += iterations * static_cast<double>(counter.count);
    }
    ir::StmtVisitor::visit_(op);
  }
};

// Buffers some load reads at an index computed from another load (a gather: embedding
// rows chosen by an index tensor). A kernel reads only the rows the indices name, and they
// may repeat, so nothing about how much of such a buffer must cross HBM is known from the
// function alone.
// Also notes structural masks: a select whose condition reads no buffer (triu, a causal
// mask, padding). Arithmetic feeding the masked-out side may be skipped by a kernel, so the
// counted flops are not a lower bound there.
class GatheredBuffers : public ir::StmtExprVisitor {
 public:
  std::set<const ir::BufferNode*> gathered;
  bool structural_mask = false;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::BufferLoadNode* op) override {
    for (const ir::Expr& index : op->indices) {
      if (contains_load(index)) gathered.insert(op->buffer.get());
    }
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::SelectNode* op) override {
    if (!contains_load(op->condition)) structural_mask = true;
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  static bool contains_load(const ir::Expr& e) {
    struct Finder : ir::ExprVisitor {
      bool found = false;
      using ir::ExprVisitor::visit_;
      void visit_(const ir::BufferLoadNode*) override { found = true; }
    } finder;
    finder.visit(e);
    return finder.found;
  }
};

}  // namespace

DevicePeaks DevicePeaks::h200_spec_sheet() {
  return DevicePeaks{.memory_bytes_per_s = 4.8e12,
                     .f32_flops_per_s = 67e12,
                     .tensor_16bit_flops_per_s = 989e12,
                     .tensor_tf32_flops_per_s = 494.7e12,
                     .l2_bytes = 50LL << 20,
                     .source = "H200 SXM spec sheet"};
}

PhysicsFloor physics_floor(const ir::PrimFunc& reference, const DevicePeaks& peaks) {
  PhysicsFloor floor;
  double output_bytes = 0;
  bool sixteen_bit_inputs = false;
  GatheredBuffers gathers;
  gathers.visit(reference->body);
  for (const ir::Param& p : reference->params) {
    double bytes = static_cast<double>(p.buffer->dtype.bytes());
    for (int64_t extent : p.buffer->shape) bytes *= static_cast<double>(extent);
    if (p.role == ir::ParamRole::kInput) {
      if (!gathers.gathered.count(p.buffer.get())) floor.bytes += bytes;
      sixteen_bit_inputs |= p.buffer->dtype.is_float() && p.buffer->dtype.bits() == 16;
    } else {
      output_bytes += bytes;
    }
  }
  floor.bytes += std::max(0.0, output_bytes - static_cast<double>(peaks.l2_bytes));
  FlopCounter counter;
  counter.visit(reference->body);
  floor.flops = counter.flops;
  // f32 arithmetic at f32 accuracy: CUDA cores or 3xTF32 tensor cores, whichever is faster
  // (a measured 3xTF32 GEMM beat cuBLAS's f32 rate by 1.27x on an H100).
  const double f32_accurate_flops_per_s = std::max(peaks.f32_flops_per_s, peaks.tensor_tf32_flops_per_s / 3);
  const double flops_per_s = sixteen_bit_inputs ? peaks.tensor_16bit_flops_per_s : f32_accurate_flops_per_s;
  const double memory_ms = peaks.memory_bytes_per_s > 0 ? 1e3 * floor.bytes / peaks.memory_bytes_per_s : 0;
  floor.flops_skippable = gathers.structural_mask;
  const double compute_ms =
      flops_per_s > 0 && !floor.flops_skippable ? 1e3 * floor.flops / flops_per_s : 0;
  floor.compute_bound = compute_ms > memory_ms;
  floor.floor_ms = std::max(memory_ms, compute_ms);
  return floor;
}

bool faster_than_physics(double measured_ms, const PhysicsFloor& floor) { return measured_ms < 0.9 * floor.floor_ms; }

std::string PhysicsFloor::describe() const {
  if (compute_bound) return fmt::format("floor {:.4g} ms (compute: {:.3g} GFLOP)", floor_ms, flops / 1e9);
  return fmt::format("floor {:.4g} ms (memory: {:.3g} MB)", floor_ms, bytes / 1e6);
}

}  // namespace dragon::harness
