// match_gemm (gemm_match.h): read from the block's write and read regions and iteration
// variables; any other shape is nullopt.
#include "space/gemm_match.h"

#include "dragon/ir/op.h"
#include "dragon/schedule/schedule_error.h"
#include "postproc/postproc.h"

namespace dragon::search {
namespace {

const ir::VarNode* as_var(const ir::Expr& e) { return e.as<ir::VarNode>(); }

// The last two indices of `region` as block variables, or nullptrs.
std::pair<const ir::VarNode*, const ir::VarNode*> last_two(const ir::BufferRegion& region) {
  size_t n = region.region.size();
  if (n < 2) return {nullptr, nullptr};
  return {as_var(region.region[n - 2].min), as_var(region.region[n - 1].min)};
}

}  // namespace

std::optional<GemmMatch> match_gemm(const BlockSite& site) {
  const ir::BlockNode* b = site.block;
  if (!is_matmul_like(b) || !has_trivial_bindings(site) || b->writes.size() != 1) return std::nullopt;
  if (b->writes[0].buffer->dtype != ir::DataType::f32()) return std::nullopt;
  std::vector<ir::BufferRegion> inputs = inputs_of(b);
  if (inputs.size() != 2) return std::nullopt;
  const ir::DataType a_type = inputs[0].buffer->dtype, b_type = inputs[1].buffer->dtype;
  auto half = [](ir::DataType t) { return t == ir::DataType::f16() || t == ir::DataType::bf16(); };
  const ir::DataType f32 = ir::DataType::f32();
  ir::DataType in;
  if (a_type == b_type && (half(a_type) || a_type == f32)) {
    in = a_type;
  } else if ((a_type == f32 && half(b_type)) || (half(a_type) && b_type == f32)) {
    in = f32;  // a 16-bit operand is exact in TF32
  } else {
    return std::nullopt;
  }
  auto [ci, cj] = last_two(b->writes[0]);
  auto [ai, ak] = last_two(inputs[0]);
  auto [b0, b1] = last_two(inputs[1]);
  if (!ci || !cj || ai != ci || !ak || !b0 || !b1) return std::nullopt;
  GemmMatch m;
  m.dtype = in;
  m.a_dtype = a_type;
  m.b_dtype = b_type;
  if (b0 == ak && b1 == cj) {
    m.trans_b = false;
  } else if (b0 == cj && b1 == ak) {
    m.trans_b = true;
  } else {
    return std::nullopt;
  }
  int reduce_vars = 0;
  for (size_t v = 0; v < b->iter_vars.size(); ++v) {
    const ir::IterVar& iv = b->iter_vars[v];
    int64_t extent = ir::as_const_int(iv.dom.extent).value_or(0);
    if (extent <= 0) return std::nullopt;
    // The loop binding this variable (trivial bindings: the value is a loop variable).
    size_t loop = site.loops.size();
    for (size_t l = 0; l < site.loops.size(); ++l) {
      if (site.realize->iter_values[v].get() == site.loops[l]->loop_var.get()) loop = l;
    }
    if (loop == site.loops.size()) return std::nullopt;
    if (iv.kind == ir::IterKind::kReduce) {
      ++reduce_vars;
      if (iv.var.get() != ak) return std::nullopt;
      m.k = loop;
      m.k_extent = extent;
    } else if (iv.var.get() == ci) {
      m.i = loop;
      m.i_extent = extent;
    } else if (iv.var.get() == cj) {
      m.j = loop;
      m.j_extent = extent;
    } else {
      m.batch.push_back(loop);
    }
  }
  if (reduce_vars != 1 || !(m.i < m.j && m.j < m.k)) return std::nullopt;
  for (size_t l : m.batch) {
    if (l > m.i) return std::nullopt;
  }
  return m;
}

bool tensorizes(const schedule::Schedule& s, const lower::Target& target) {
  schedule::Schedule trial = s.copy();
  try {
    for (const char* kind : {"rewrite_reduction_block", "rewrite_tensorize"}) {
      if (make_postproc(PostprocSpec{kind, {}}, target)->apply(trial)) return false;
    }
  } catch (const schedule::ScheduleError&) {
    return false;
  }
  return true;
}

}  // namespace dragon::search
