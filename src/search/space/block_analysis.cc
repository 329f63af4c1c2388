// Block analysis for the design-space rules (block_analysis.h): visitors over the
// function's IR, nothing that changes it.
#include "space/block_analysis.h"

#include <algorithm>
#include <set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/uses_var.h"
#include "dragon/search/rule_set.h"

namespace dragon::search {
namespace {

using ir::uses_var;

// The linear coefficient of `var` in `e`; nullopt when `e` is not affine in it.
std::optional<int64_t> coefficient(const ir::Expr& e, const ir::VarNode* var) {
  if (!uses_var(e, var)) return 0;
  if (e.get() == var) return 1;
  if (const auto* add = e.as<ir::AddNode>()) {
    auto a = coefficient(add->a, var), b = coefficient(add->b, var);
    if (a && b) return *a + *b;
    return std::nullopt;
  }
  if (const auto* sub = e.as<ir::SubNode>()) {
    auto a = coefficient(sub->a, var), b = coefficient(sub->b, var);
    if (a && b) return *a - *b;
    return std::nullopt;
  }
  if (const auto* mul = e.as<ir::MulNode>()) {
    if (auto c = ir::as_const_int(mul->b)) {
      if (auto a = coefficient(mul->a, var)) return *a * *c;
    }
    if (auto c = ir::as_const_int(mul->a)) {
      if (auto b = coefficient(mul->b, var)) return *b * *c;
    }
    return std::nullopt;
  }
  if (const auto* cast = e.as<ir::CastNode>()) return coefficient(cast->value, var);
  return std::nullopt;
}

}  // namespace

std::optional<BlockSite> find_block(const ir::PrimFunc& func, std::string_view name) {
  struct Finder : ir::StmtVisitor {
    std::string_view name;
    std::vector<const ir::ForNode*> loops;
    const ir::BlockNode* parent = nullptr;
    std::optional<BlockSite> found;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      if (found) return;
      loops.push_back(op);
      ir::StmtVisitor::visit_(op);
      loops.pop_back();
    }
    void visit_(const ir::BlockRealizeNode* op) override {
      if (found) return;
      if (op->block->name == name) {
        found = BlockSite{op, op->block.get(), loops, parent};
        return;
      }
      std::vector<const ir::ForNode*> saved = std::move(loops);
      loops.clear();
      const ir::BlockNode* saved_parent = parent;
      parent = op->block.get();
      ir::StmtVisitor::visit_(op);
      parent = saved_parent;
      loops = std::move(saved);
    }
  } finder;
  finder.name = name;
  finder.visit(func->body);
  return finder.found;
}

std::vector<std::string> block_names(const ir::PrimFunc& func) {
  struct Collect : ir::StmtVisitor {
    std::vector<std::string> names;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::BlockRealizeNode* op) override {
      if (op->block->name != "root") names.push_back(op->block->name);
      ir::StmtVisitor::visit_(op);
    }
  } collect;
  collect.visit(func->body);
  return collect.names;
}

LoopFeeds loop_feeds(const ir::ForNode* loop) {
  struct Checker : ir::StmtVisitor {
    const ir::VarNode* var = nullptr;
    LoopFeeds feeds;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::BlockRealizeNode* op) override {
      for (size_t i = 0; i < op->iter_values.size(); ++i) {
        if (!uses_var(op->iter_values[i], var)) continue;
        switch (op->block->iter_vars[i].kind) {
          case ir::IterKind::kSpatial: feeds.spatial = true; break;
          case ir::IterKind::kReduce: feeds.reduce = true; break;
          default: feeds.other = true; break;
        }
      }
      // Blocks nested in this one are fed through its variables, not the loop's.
    }
  } checker;
  checker.var = loop->loop_var.get();
  checker.visit(loop->body);
  return checker.feeds;
}

LoopFeeds loop_feeds_block(const ir::ForNode* loop, const BlockSite& site) {
  LoopFeeds feeds;
  for (size_t i = 0; i < site.realize->iter_values.size(); ++i) {
    if (!uses_var(site.realize->iter_values[i], loop->loop_var.get())) continue;
    switch (site.block->iter_vars[i].kind) {
      case ir::IterKind::kSpatial: feeds.spatial = true; break;
      case ir::IterKind::kReduce: feeds.reduce = true; break;
      default: feeds.other = true; break;
    }
  }
  return feeds;
}

bool is_thread_bound(const ir::ForNode* loop) { return loop->for_kind == ir::ForKind::kThreadBinding; }

bool has_block_binding(const BlockSite& site) {
  for (const ir::ForNode* l : site.loops) {
    if (is_thread_bound(l) && l->thread_tag.starts_with("blockIdx.")) return true;
  }
  return false;
}

bool has_thread_binding(const BlockSite& site) {
  for (const ir::ForNode* l : site.loops) {
    if (is_thread_bound(l) && l->thread_tag.starts_with("threadIdx.")) return true;
  }
  return false;
}

bool is_reduction(const ir::BlockNode* block) {
  if (!block->init.defined()) return false;
  bool reduce = false;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind == ir::IterKind::kReduce) reduce = true;
    if (iv.kind != ir::IterKind::kReduce && iv.kind != ir::IterKind::kSpatial) return false;
  }
  return reduce;
}

bool is_spatial(const ir::BlockNode* block) {
  if (block->init.defined()) return false;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind != ir::IterKind::kSpatial) return false;
  }
  return true;
}

int widest_element_bytes(const ir::BlockNode* block) {
  int widest = 1;
  for (const auto* regions : {&block->reads, &block->writes}) {
    for (const ir::BufferRegion& r : *regions) widest = std::max(widest, r.buffer->dtype.bytes());
  }
  return widest;
}

bool is_unscheduled_scan(const BlockSite& site) {
  const ir::BlockNode* b = site.block;
  if (site.loops.empty() || has_block_binding(site) || has_thread_binding(site)) return false;
  int ordered = 0;
  for (const ir::IterVar& iv : b->iter_vars) {
    if (iv.kind == ir::IterKind::kOrdered) {
      ++ordered;
    } else if (iv.kind != ir::IterKind::kSpatial) {
      return false;
    }
  }
  if (ordered != 1 || site.loops.size() != b->iter_vars.size()) return false;
  for (const ir::ForNode* l : site.loops) {
    if (l->for_kind != ir::ForKind::kSerial || !ir::as_const_int(l->extent)) return false;
    LoopFeeds feeds = loop_feeds(l);
    if (l != site.loops.back() && (!feeds.spatial || feeds.other || feeds.reduce)) return false;
  }
  LoopFeeds inner = loop_feeds(site.loops.back());
  return inner.other && !inner.spatial && !inner.reduce;
}

bool has_ordered_vars(const ir::BlockNode* block) {
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind == ir::IterKind::kOrdered || iv.kind == ir::IterKind::kOpaque) return true;
  }
  return false;
}

namespace {
int64_t extent_product(const ir::BlockNode* block, ir::IterKind kind) {
  int64_t product = 1;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind != kind) continue;
    product *= ir::as_const_int(iv.dom.extent).value_or(1);
  }
  return product;
}
}  // namespace

int64_t reduce_extent(const ir::BlockNode* block) { return extent_product(block, ir::IterKind::kReduce); }
int64_t spatial_extent(const ir::BlockNode* block) { return extent_product(block, ir::IterKind::kSpatial); }

bool has_trivial_bindings(const BlockSite& site) {
  if (site.loops.size() != site.block->iter_vars.size()) return false;
  std::set<const ir::VarNode*> loop_vars;
  for (const ir::ForNode* l : site.loops) loop_vars.insert(l->loop_var.get());
  std::set<const ir::VarNode*> used;
  for (const ir::Expr& value : site.realize->iter_values) {
    const auto* var = value.as<ir::VarNode>();
    if (var == nullptr || loop_vars.count(var) == 0 || !used.insert(var).second) return false;
  }
  return ir::is_const_int(site.realize->predicate, 1) || !site.realize->predicate.defined();
}

std::optional<int64_t> linear_coefficient(const ir::Expr& e, const ir::Var& var) { return coefficient(e, var.get()); }

std::vector<ir::BufferRegion> inputs_of(const ir::BlockNode* block) {
  std::vector<ir::BufferRegion> inputs;
  for (const ir::BufferRegion& r : block->reads) {
    bool is_output = false;
    for (const ir::BufferRegion& w : block->writes) is_output = is_output || w.buffer.same_as(r.buffer);
    if (!is_output) inputs.push_back(r);
  }
  return inputs;
}

bool read_has_reuse(const ir::BlockNode* block, const ir::BufferRegion& read) {
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind != ir::IterKind::kSpatial || ir::as_const_int(iv.dom.extent).value_or(1) <= 1) continue;
    bool used = false;
    for (const ir::Range& r : read.region) used = used || uses_var(r.min, iv.var.get()) || uses_var(r.extent, iv.var.get());
    if (!used) return true;
  }
  return false;
}

bool is_matmul_like(const ir::BlockNode* block) {
  if (!is_reduction(block) || block->writes.size() != 1) return false;
  std::vector<ir::BufferRegion> inputs = inputs_of(block);
  if (inputs.size() < 2) return false;
  return std::any_of(inputs.begin(), inputs.end(),
                     [&](const ir::BufferRegion& read) { return read_has_reuse(block, read); });
}

std::optional<int64_t> access_stride(const ir::BufferRegion& region, const ir::Var& var) {
  int64_t stride = 0, row = 1;
  const std::vector<int64_t>& shape = region.buffer->shape;
  for (size_t d = region.region.size(); d-- > 0;) {
    std::optional<int64_t> c = coefficient(region.region[d].min, var.get());
    if (!c) return std::nullopt;
    stride += *c * row;
    row *= d < shape.size() ? shape[d] : 1;
  }
  return stride;
}

std::string block_pattern(const ir::PrimFunc& func, std::string_view block_name) {
  std::optional<BlockSite> site = find_block(func, block_name);
  if (!site) return "";
  const ir::BlockNode* block = site->block;
  if (has_ordered_vars(block)) return "opaque";
  if (is_matmul_like(block)) return "matmul_like";
  if (is_reduction(block)) return "reduction";
  return is_spatial(block) ? "elementwise" : "opaque";
}

}  // namespace dragon::search
