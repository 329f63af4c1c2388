// Region analysis for compute_at and reverse_compute_at: interval relaxation of affine
// index expressions (with floordiv/floormod by constants) over the loops below a loop.
#include "region_cover.h"

#include <algorithm>
#include <cstdint>
#include <functional>

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/substitute.h"
#include "../ir_tree.h"

namespace dragon::schedule::detail {

using namespace dragon::ir;

namespace {

// Whether `e` reads a buffer or calls a function (a data-dependent index).
class DataDependence : public ExprVisitor {
 public:
  bool found = false;

 protected:
  void visit_(const BufferLoadNode*) override { found = true; }
  void visit_(const CallNode*) override { found = true; }
  using ExprVisitor::visit_;
};

// [min, min + extent - 1] of a loop whose bounds are immediates of its variable's type
// with a non-empty range (nullopt otherwise: the general path simplifies them).
std::optional<Interval> constant_loop_range(const ForNode* loop) {
  const auto* min = loop->min.as<IntImmNode>();
  const auto* extent = loop->extent.as<IntImmNode>();
  const DataType type = loop->loop_var.dtype();
  if (!type.is_int() || type.lanes() != 1 || (type.bits() != 32 && type.bits() != 64)) return std::nullopt;
  if (min == nullptr || extent == nullptr || !(min->dtype == type) || !(extent->dtype == type) || extent->value < 1)
    return std::nullopt;
  int64_t last = 0;
  if (__builtin_add_overflow(min->value, extent->value - 1, &last)) return std::nullopt;
  if (type.bits() == 32 && (last < INT32_MIN || last > INT32_MAX)) return std::nullopt;
  return Interval{loop->min, IntImmNode::make(type, last)};
}

}  // namespace

// relax() with the relaxed variables listed once (every subexpression asks whether it
// uses any of them).
static std::optional<Interval> relax_over(const Expr& e, const RelaxMap& relaxed,
                                          const std::vector<const VarNode*>& vars) {
  if (!uses_any_var(e, vars)) return Interval{e, e};
  if (const auto* v = e.as<VarNode>()) return relaxed.at(v);
  auto both = [&](const Expr& a, const Expr& b) -> std::optional<std::pair<Interval, Interval>> {
    auto x = relax_over(a, relaxed, vars);
    auto y = relax_over(b, relaxed, vars);
    if (!x || !y) return std::nullopt;
    return std::make_pair(*x, *y);
  };
  if (const auto* op = e.as<AddNode>()) {
    auto r = both(op->a, op->b);
    if (!r) return std::nullopt;
    return Interval{r->first.first + r->second.first, r->first.second + r->second.second};
  }
  if (const auto* op = e.as<SubNode>()) {
    auto r = both(op->a, op->b);
    if (!r) return std::nullopt;
    return Interval{r->first.first - r->second.second, r->first.second - r->second.first};
  }
  if (const auto* op = e.as<MulNode>()) {
    Expr scaled = op->a;
    std::optional<int64_t> c = as_const_int(op->b);
    if (!c) {
      scaled = op->b;
      c = as_const_int(op->a);
    }
    if (!c) return std::nullopt;
    auto r = relax_over(scaled, relaxed, vars);
    if (!r) return std::nullopt;
    Expr k = make_const(e.dtype(), static_cast<double>(*c));
    return *c >= 0 ? Interval{r->first * k, r->second * k} : Interval{r->second * k, r->first * k};
  }
  if (const auto* op = e.as<FloorDivNode>()) {
    std::optional<int64_t> c = as_const_int(op->b);
    if (!c || *c <= 0) return std::nullopt;
    auto r = relax_over(op->a, relaxed, vars);
    if (!r) return std::nullopt;
    return Interval{floordiv(r->first, *c), floordiv(r->second, *c)};
  }
  if (const auto* op = e.as<FloorModNode>()) {
    std::optional<int64_t> c = as_const_int(op->b);
    if (!c || *c <= 0 || !relax_over(op->a, relaxed, vars)) return std::nullopt;
    return Interval{make_zero(e.dtype()), make_const(e.dtype(), static_cast<double>(*c - 1))};
  }
  if (const auto* op = e.as<MinNode>()) {
    auto r = both(op->a, op->b);
    if (!r) return std::nullopt;
    return Interval{min(r->first.first, r->second.first), min(r->first.second, r->second.second)};
  }
  if (const auto* op = e.as<MaxNode>()) {
    auto r = both(op->a, op->b);
    if (!r) return std::nullopt;
    return Interval{max(r->first.first, r->second.first), max(r->first.second, r->second.second)};
  }
  return std::nullopt;
}

std::optional<Interval> relax(const Expr& e, const RelaxMap& relaxed) {
  std::vector<const VarNode*> vars;
  vars.reserve(relaxed.size());
  for (const auto& [v, _] : relaxed) vars.push_back(v);
  return relax_over(e, relaxed, vars);
}


std::optional<std::vector<Interval>> accessed_region(const ForNode* loop, const BufferNode* buffer, Access access,
                                                     const Analyzer& analyzer, std::string& why) {
  const char* verb = access == Access::kRead ? "reads" : "writes";
  // Walk down from the loop, relaxing every loop met below it over its range.
  std::optional<std::vector<Interval>> region;
  std::function<bool(const Stmt&, RelaxMap)> walk = [&](const Stmt& s, RelaxMap relaxed) -> bool {
    if (const auto* f = s.as<ForNode>()) {
      // Most loops run over constants: their last value is folded here, without a trip
      // through the simplifier (which would fold it to the same immediate).
      if (std::optional<Interval> range = constant_loop_range(f)) {
        relaxed[f->loop_var.get()] = *range;
        return walk(f->body, std::move(relaxed));
      }
      auto lo = relax(analyzer.simplify(f->min), relaxed);
      auto hi = relax(analyzer.simplify(f->min + f->extent - 1), relaxed);
      if (!lo || !hi) {
        why = fmt::format("the bounds of loop '{}' are not affine", f->loop_var.name());
        return false;
      }
      relaxed[f->loop_var.get()] = Interval{lo->first, hi->second};
      return walk(f->body, std::move(relaxed));
    }
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& c : seq->seq) {
        if (!walk(c, relaxed)) return false;
      }
      return true;
    }
    if (const auto* realize = s.as<BlockRealizeNode>()) {
      const BlockNode* block = realize->block.get();
      std::unordered_map<const VarNode*, Expr> bindings;
      for (size_t i = 0; i < block->iter_vars.size(); ++i) bindings[block->iter_vars[i].var.get()] = realize->iter_values[i];
      for (const BufferRegion& read : access == Access::kRead ? block->reads : block->writes) {
        if (read.buffer.get() != buffer) continue;
        std::vector<Interval> dims;
        for (const Range& r : read.region) {
          // A point access (extent 1, the usual case) ends where it starts: the simplifier
          // brings first + 1 - 1 back to the form of first, so its bounds are computed once.
          const bool point = is_const_int(r.extent, 1);
          Expr first = ir::substitute(r.min, bindings);
          Expr last = point ? first : ir::substitute(r.min + r.extent - 1, bindings);
          DataDependence dd;
          dd.visit(first);
          if (!point) dd.visit(last);
          if (dd.found) {
            why = fmt::format("block '{}' {} {} at a data-dependent index", block->name, verb, buffer->name);
            return false;
          }
          auto lo = relax(analyzer.simplify(first), relaxed);
          auto hi = point ? lo : relax(analyzer.simplify(last), relaxed);
          if (!lo || !hi) {
            why = fmt::format("block '{}' {} {} at an index that is not affine in the loops below", block->name,
                              verb, buffer->name);
            return false;
          }
          dims.emplace_back(lo->first, hi->second);
        }
        if (!region) {
          region = dims;
        } else {
          for (size_t d = 0; d < dims.size(); ++d) {
            (*region)[d] = Interval{min((*region)[d].first, dims[d].first), max((*region)[d].second, dims[d].second)};
          }
        }
      }
      return true;  // blocks nested inside belong to another scope
    }
    if (const auto* branch = s.as<IfThenElseNode>()) {
      if (!walk(branch->then_case, relaxed)) return false;
      return !branch->else_case.defined() || walk(branch->else_case, relaxed);
    }
    if (const auto* alloc = s.as<AllocateNode>()) return walk(alloc->body, relaxed);
    return true;
  };
  if (!walk(loop->body, RelaxMap{})) return std::nullopt;
  if (!region) {
    why = fmt::format("no block under the loop {} {}", verb, buffer->name);
    return std::nullopt;
  }
  for (Interval& d : *region) d = Interval{analyzer.simplify(d.first), analyzer.simplify(d.second)};
  return region;
}

// Constant extents covering each dimension of `region` (the bound of the extent where it
// is not constant); nullopt, with `why` set, when one is unbounded.
std::optional<std::vector<Expr>> covering_extents(const std::vector<Interval>& region, const Analyzer& analyzer,
                                                  std::string& why) {
  std::vector<Expr> extents;
  for (const Interval& d : region) {
    Expr extent = analyzer.simplify(d.second - d.first + 1);
    if (!as_const_int(extent)) {
      std::optional<int64_t> bound = analyzer.const_int_bound(extent).max;
      // floordiv(x + k, c) - floordiv(x, c) is at most ceil(k / c): a tile of a fused loop.
      const auto* hi = d.second.as<FloorDivNode>();
      const auto* lo = d.first.as<FloorDivNode>();
      if (hi != nullptr && lo != nullptr) {
        std::optional<int64_t> c = as_const_int(hi->b);
        std::optional<int64_t> k = as_const_int(analyzer.simplify(hi->a - lo->a));
        if (c && *c > 0 && as_const_int(lo->b) == c && k && *k >= 0) {
          int64_t tile = (*k + *c - 1) / *c + 1;
          bound = bound ? std::min(*bound, tile) : tile;
        }
      }
      if (!bound) {
        why = fmt::format("the extent {} of the region is unbounded", print_expr(extent));
        return std::nullopt;
      }
      extent = make_const(extent.dtype(), static_cast<double>(std::max<int64_t>(*bound, 0)));
    }
    extents.push_back(extent);
  }
  return extents;
}

}  // namespace dragon::schedule::detail
