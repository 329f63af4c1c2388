// Vectorized loops on CUDA: a loop of extent E whose body is one store, contiguous in the
// loop variable and provably aligned to E elements, with E * bytes = 4, 8 or 16, becomes
// one vector store; its contiguous aligned loads become vector loads and every other
// operand is computed per lane. Under async_copy, such a copy from global into shared
// memory is one cp.async of E * bytes. Anything else stays scalar (cuda_codegen.cc).
#include <optional>

#include "cuda_emitter.h"
#include "index_widening.h"
#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::codegen {
namespace {

class ReplaceVar final : public ir::ExprMutator {
 public:
  ReplaceVar(const ir::VarNode* var, ir::Expr value) : var_(var), value_(std::move(value)) {}

 protected:
  using ir::ExprMutator::visit_;
  ir::Expr visit_(const ir::VarNode* op) override { return op == var_ ? value_ : ir::Expr(op); }

 private:
  const ir::VarNode* var_;
  ir::Expr value_;
};

// The loads of an expression that run whatever its values: not inside an index, a
// select's operands (only the chosen one runs) or the right side of && and || (it may not
// run). Only these may become one vector load of all lanes: a padding's select guards a
// load that is out of bounds on the lanes it does not choose (KernelBench 44's avg_pool1d
// pad, vectorized by the default schedule, read X[-4..-1] and faulted the context).
class UnconditionalLoads final : public ir::ExprVisitor {
 public:
  std::vector<const ir::BufferLoadNode*> loads;

 protected:
  using ir::ExprVisitor::visit_;
  void visit_(const ir::BufferLoadNode* op) override { loads.push_back(op); }
  void visit_(const ir::SelectNode* op) override { visit(op->condition); }
  void visit_(const ir::AndNode* op) override { visit(op->a); }
  void visit_(const ir::OrNode* op) override { visit(op->a); }
};

bool vectorizable_scope(const std::string& scope) {
  return scope == "global" || scope == "shared" || scope == "shared.dyn";
}

// The vector type moving `bytes` bytes of `dtype` elements.
std::string vector_type(ir::DataType dtype, int64_t bytes) {
  if (dtype == ir::DataType::f32()) return bytes == 16 ? "float4" : bytes == 8 ? "float2" : "float";
  if (bytes == 4 && dtype == ir::DataType::f16()) return "__half2";
  if (bytes == 4 && dtype == ir::DataType::bf16()) return "__nv_bfloat162";
  return bytes == 16 ? "int4" : bytes == 8 ? "int2" : "int";
}

}  // namespace

bool CudaEmitter::try_print_vector_loop(const ir::ForNode* op) {
  auto extent = ir::as_const_int(op->extent);
  auto min = ir::as_const_int(op->min);
  const auto* store = op->body.as<ir::BufferStoreNode>();
  if (!extent || !min || *extent < 2 || !store || store->indices.size() != 1) return false;
  ir::DataType dtype = store->buffer->dtype;
  int64_t bytes = *extent * dtype.bytes();
  if (bytes != 4 && bytes != 8 && bytes != 16) return false;

  // The index at the first lane, when the index is that plus (v - min) and a multiple of E.
  auto aligned_base = [&](const ir::Buffer& buffer, const ir::Expr& original) -> std::optional<ir::Expr> {
    if (!vectorizable_scope(buffer->scope) || buffer->dtype.bytes() != dtype.bytes()) return std::nullopt;
    // A buffer past 2^31 elements is indexed as i64(i32 index) * stride + i64(i32 index):
    // read through the casts (index_widening.h), or the analyzer sees neither the lane
    // offset under a cast nor the alignment of a base under one. The lane loop is already
    // bound to its extent (print_loop_of_kind binds it before trying this), which bounds
    // an index holding it inside i32. The base is then printed in its widened form, equal
    // in value; an index without such casts is the very same node, and so is its code.
    const ir::Expr index = widen_index_casts(original, analyzer_);
    ir::Expr base = analyzer_.simplify(ReplaceVar(op->loop_var.get(), op->min).visit(index));
    // The lane offset in the index's type: a buffer past 2^31 elements is indexed in i64
    // while the loop counts in i32.
    ir::Expr lane = op->loop_var - op->min;
    if (lane.dtype() != index.dtype()) lane = ir::cast(index.dtype(), lane);
    if (!analyzer_.can_prove_equal(index, base + lane)) return std::nullopt;
    if (!analyzer_.can_prove(ir::eq(ir::floormod(base, ir::make_const(base.dtype(), *extent)), 0))) {
      return std::nullopt;
    }
    return base;
  };
  std::optional<ir::Expr> store_base = aligned_base(store->buffer, store->indices[0]);
  if (!store_base) return false;
  std::optional<lower::AsyncCopySource> copy = async_copy_of(store);
  if (const ir::BufferLoadNode* source = copy && !copy->guard.defined() ? copy->load : nullptr;
      source != nullptr && source->indices.size() == 1) {
    if (std::optional<ir::Expr> source_base = aligned_base(source->buffer, source->indices[0])) {
      print_async_copy(
          fmt::format("{} + {}", buffer_name(store->buffer), physical_index(store->buffer, print_expr(*store_base))),
          fmt::format("{} + {}", buffer_name(source->buffer), physical_index(source->buffer, print_expr(*source_base))),
          bytes);
      return true;
    }
  }
  // An asynchronous copy whose source is not one aligned vector (a gather, a guarded
  // load) goes lane by lane: one 4-byte cp.async each, rather than loads the thread waits
  // for before a vector store.
  if (copy && dtype.bytes() == 4) return false;
  UnconditionalLoads top;
  top.visit(store->value);
  std::vector<std::pair<const ir::BufferLoadNode*, ir::Expr>> vector_loads;
  for (const ir::BufferLoadNode* load : top.loads) {
    // A lane reading what another lane writes would see a different value once all lanes
    // load before any stores.
    if (load->buffer.same_as(store->buffer) && !analyzer_.can_prove_equal(load->indices[0], store->indices[0])) {
      return false;
    }
    if (load->indices.size() != 1) return false;
    if (auto base = aligned_base(load->buffer, load->indices[0])) vector_loads.emplace_back(load, *base);
  }

  std::string type = type_name(dtype);
  std::string vtype = vector_type(dtype, bytes);
  line(fmt::format("{{  // vectorized {} x {}", var_name(op->loop_var), *extent));
  ++indent_;
  std::vector<std::pair<const ir::BufferLoadNode*, std::string>> lane_arrays;
  for (const auto& [load, base] : vector_loads) {
    std::string lanes = names_.fresh(buffer_name(load->buffer) + "_lanes");
    line(fmt::format("__align__(16) {} {}[{}];", type, lanes, *extent));
    line(fmt::format("*({}*){} = *(const {}*)({} + {});", vtype, lanes, vtype, buffer_name(load->buffer),
                     physical_index(load->buffer, print_expr(base))));
    lane_arrays.emplace_back(load, lanes);
  }
  std::string result = names_.fresh(buffer_name(store->buffer) + "_result");
  line(fmt::format("__align__(16) {} {}[{}];", type, result, *extent));
  for (int64_t k = 0; k < *extent; ++k) {
    for (const auto& [load, lanes] : lane_arrays) load_override_[load] = fmt::format("{}[{}]", lanes, k);
    var_override_[op->loop_var.get()] = print_expr(ir::make_const(op->loop_var.dtype(), static_cast<double>(*min + k)));
    line(fmt::format("{}[{}] = {};", result, k, print_expr(store->value)));
  }
  var_override_.erase(op->loop_var.get());
  load_override_.clear();
  line(fmt::format("*({}*)({} + {}) = *(const {}*){};", vtype, buffer_name(store->buffer),
                   physical_index(store->buffer, print_expr(*store_base)), vtype, result));
  close();
  return true;
}

}  // namespace dragon::codegen
