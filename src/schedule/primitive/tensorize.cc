// tensorize: checks that the inner block of an outer (blockized) block computes exactly
// what a registered tensor intrinsic computes on one tile, and marks the outer block
// tensor_intrin = <name>. The body is kept as is (tensor_intrin.h states the contract);
// nothing here replaces code with an intrinsic call.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/verify.h"
#include "dragon/schedule/tensor_intrin.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"
#include "blockize_plan.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct TensorizePlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Marks a tile as computed by the tensor intrinsic `intrin_name` (tensor_intrin.h):
  // a loop is blockized first (as blockize(loop, preserve_unit_iters)); a block must be an
  // outer block already. Its single inner block must compute what the intrinsic's
  // description computes, in tile coordinates (each binding and index = an offset from the
  // outer variables + the description's position in the tile). The outer block gets the
  // annotation tensor_intrin = <name>; no statement changes, so the interpreter still runs
  // the tile as written. Records one Tensorize instruction and returns nothing (as TVM).
  // Requires:
  //   1) the intrinsic is registered (UnknownIntrinsic)
  //   2-5) for a loop, blockize's preconditions 1-4, under blockize's error names
  //   6) the block is not the root, has no init, and holds a chain of loops with constant
  //      bounds and no thread binding down to one block (NotOuterBlock)
  //   7) it has no tensor_intrin annotation yet (AlreadyTensorized)
  //   8) the inner block has no predicate; each binding is an offset from outer variables
  //      plus a mixed-radix number of inner loops, each loop of extent > 1 feeding one
  //      binding; the variables moving in the tile have the intrinsic's kinds and extents,
  //      in order (TileMismatch)
  //   9) its loads and stores, in order, pair one to one with the intrinsic's buffers
  //      (BufferMismatch)
  //   10) each paired buffer has the intrinsic operand's dtype (DtypeMismatch)
  //   11) and one of the operand's scopes (ScopeMismatch)
  //   12) init and body have the intrinsic's statements, operators, casts and constants
  //      (PatternMismatch)
  //   13) each access, minus its offset, is the intrinsic's index in tile coordinates
  //      (unit stride, same layout; dimensions fixed in the tile are left out), and all
  //      accesses to one buffer share one offset (LayoutMismatch).
  void tensorize(BlockOrLoop target, std::string intrin_name, bool preserve_unit_iters = true);
  CheckResult check_tensorize(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::TensorizePlan> plan_tensorize(const BlockOrLoop& target,
                                                        std::optional<std::string_view> intrin_name,
                                                        bool preserve_unit_iters) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

constexpr InstructionKind kKind = InstructionKind::Tensorize;

// One load or store of a block body, in the order collect_accesses visits them.
struct Access {
  const BufferNode* buffer = nullptr;
  const std::vector<Expr>* indices = nullptr;
  bool is_store = false;
};

// Loads and stores of `s` in a fixed order: a store, then the loads of its value and
// indices, pre-order. Statements the matcher does not support contribute nothing (the
// structural comparison reports them).
void collect_accesses(const Stmt& s, std::vector<Access>& out);

void collect_accesses(const Expr& e, std::vector<Access>& out) {
  class Collector : public ExprVisitor {
   public:
    explicit Collector(std::vector<Access>& out) : out_(out) {}

   protected:
    void visit_(const BufferLoadNode* op) override {
      out_.push_back(Access{op->buffer.get(), &op->indices, false});
      ExprVisitor::visit_(op);
    }

   private:
    std::vector<Access>& out_;
  };
  Collector collector(out);
  collector.visit(e);
}

void collect_accesses(const Stmt& s, std::vector<Access>& out) {
  if (!s.defined()) return;
  if (const auto* store = s.as<BufferStoreNode>()) {
    out.push_back(Access{store->buffer.get(), &store->indices, true});
    collect_accesses(store->value, out);
    for (const Expr& i : store->indices) collect_accesses(i, out);
  } else if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->seq) collect_accesses(x, out);
  } else if (const auto* branch = s.as<IfThenElseNode>()) {
    collect_accesses(branch->condition, out);
    collect_accesses(branch->then_case, out);
    collect_accesses(branch->else_case, out);
  } else if (const auto* eval = s.as<EvaluateNode>()) {
    collect_accesses(eval->value, out);
  }
}

// The accesses of a block: its init's (when `with_init`) then its body's.
std::vector<Access> block_accesses(const BlockNode* block, bool with_init) {
  std::vector<Access> out;
  if (with_init) collect_accesses(block->init, out);
  collect_accesses(block->body, out);
  return out;
}

std::string describe_accesses(const std::vector<Access>& accesses) {
  std::vector<std::string> parts;
  for (const Access& a : accesses) parts.push_back(fmt::format("{} {}", a.is_store ? "store" : "load", a.buffer->name));
  return fmt::format("{} accesses ({})", accesses.size(), fmt::join(parts, ", "));
}

// Structural comparison of the block's statements and expressions with the
// description's, buffers already paired and indices left to the layout check. The
// first difference is kept as a message showing both sides.
class PatternComparer {
 public:
  std::string difference;

  bool stmt(const Stmt& a, const Stmt& b) {
    if (a.defined() != b.defined()) return fail_stmt(a, b, "a statement on one side only");
    if (!a.defined()) return true;
    if (a.kind() != b.kind()) return fail_stmt(a, b, "different statements");
    if (const auto* x = a.as<BufferStoreNode>()) {
      const auto* y = b.as<BufferStoreNode>();
      return expr(x->value, y->value);
    }
    if (const auto* x = a.as<SeqStmtNode>()) {
      const auto* y = b.as<SeqStmtNode>();
      if (x->seq.size() != y->seq.size()) return fail_stmt(a, b, "sequences of different lengths");
      for (size_t i = 0; i < x->seq.size(); ++i) {
        if (!stmt(x->seq[i], y->seq[i])) return false;
      }
      return true;
    }
    if (const auto* x = a.as<IfThenElseNode>()) {
      const auto* y = b.as<IfThenElseNode>();
      return expr(x->condition, y->condition) && stmt(x->then_case, y->then_case) && stmt(x->else_case, y->else_case);
    }
    if (const auto* x = a.as<EvaluateNode>()) return expr(x->value, b.as<EvaluateNode>()->value);
    return fail_stmt(a, b, fmt::format("a {} (only stores, sequences, conditionals and evaluations are matched)",
                                       node_kind_name(a.kind())));
  }

  bool expr(const Expr& a, const Expr& b) {
    if (a.kind() != b.kind()) return fail_expr(a, b);
    if (a.dtype() != b.dtype()) return fail_expr(a, b);
    switch (a.kind()) {
      case NodeKind::IntImm:
        return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value || fail_expr(a, b);
      case NodeKind::FloatImm: {
        double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
        return x == y || (std::isnan(x) && std::isnan(y)) || fail_expr(a, b);
      }
      case NodeKind::Var:
        // A tile-local variable used as a value would differ from the description's by
        // the tile offset; such bodies are not intrinsics we know.
        return fail_expr(a, b);
#define DRAGON_BINARY_NODE(Name)                                                  \
  case NodeKind::Name: {                                                          \
    const auto* x = a.as<Name##Node>();                                           \
    const auto* y = b.as<Name##Node>();                                           \
    return expr(x->a, y->a) && expr(x->b, y->b);                                  \
  }
#include "dragon/ir/nodes.def"
      case NodeKind::Not: return expr(a.as<NotNode>()->a, b.as<NotNode>()->a);
      case NodeKind::Select: {
        const auto* x = a.as<SelectNode>();
        const auto* y = b.as<SelectNode>();
        return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
               expr(x->false_value, y->false_value);
      }
      case NodeKind::Cast: return expr(a.as<CastNode>()->value, b.as<CastNode>()->value);
      case NodeKind::Call: {
        const auto* x = a.as<CallNode>();
        const auto* y = b.as<CallNode>();
        if (x->op != y->op || x->args.size() != y->args.size()) return fail_expr(a, b);
        for (size_t i = 0; i < x->args.size(); ++i) {
          if (!expr(x->args[i], y->args[i])) return false;
        }
        return true;
      }
      case NodeKind::BufferLoad:
        // Which buffers pair up was settled before (BufferMismatch); indices are the
        // layout check's.
        return true;
      default: return fail_expr(a, b);
    }
  }

 private:
  bool fail_expr(const Expr& a, const Expr& b) {
    difference = fmt::format("the block has `{}` ({}) where the intrinsic has `{}` ({})", print_expr(a),
                             to_string(a.dtype()), print_expr(b), to_string(b.dtype()));
    return false;
  }
  bool fail_stmt(const Stmt& a, const Stmt& b, const std::string& what) {
    auto show = [](const Stmt& s) { return s.defined() ? std::string(node_kind_name(s.kind())) : std::string("nothing"); };
    difference = fmt::format("the block has a {} where the intrinsic has a {}: {}", show(a), show(b), what);
    return false;
  }
};

// One iteration variable of the matched inner block: its binding is base + (a position
// in [0, extent) enumerated by the inner loops), base depending on outer variables only.
struct TileIter {
  Expr base;
  int64_t extent = 1;
};

// Tensorize's preconditions 6-13 on `func` (blockized when a loop was given): the block
// `outer_name` is an outer block over one inner block that, when `intrin` is given,
// computes what the intrinsic's description computes. Throws the error of the first that
// fails; returns the outer block.
const BlockNode* match_tile(const PrimFunc& func, const std::string& outer_name, const TensorIntrin* intrin,
                            const std::string& operand) {
  // From here errors show the function being matched (blockized when a loop was given).
  auto fail = [&](int k, const char* name, std::string reason, std::string block_name) {
    return ScheduleError(kKind, k, name, operand, std::move(reason), func, ErrorLocus{nullptr, std::move(block_name)});
  };

  // 6) an outer block over a chain of loops down to one inner block.
  const BlockRealizeNode* outer_realize = detail::find_block_realize(func, outer_name);
  DRAGON_CHECK(outer_realize != nullptr, "block '{}' vanished", outer_name);
  const BlockNode* outer = outer_realize->block.get();
  if (outer == func.root_block()) throw fail(6, "NotOuterBlock", "the root block is not a tile", outer_name);
  if (outer->init.defined()) {
    throw fail(6, "NotOuterBlock", fmt::format("block '{}' has an init; only its inner block may", outer_name), outer_name);
  }
  std::vector<const ForNode*> inner_loops;
  Stmt s = outer->body;
  while (const auto* l = s.as<ForNode>()) {
    if (!as_const_int(l->min) || !as_const_int(l->extent) || l->for_kind == ForKind::kThreadBinding) {
      throw fail(6, "NotOuterBlock",
                 fmt::format("loop '{}' in block '{}' is not a loop over constant bounds without thread binding",
                             l->loop_var.name(), outer_name),
                 outer_name);
    }
    inner_loops.push_back(l);
    s = l->body;
  }
  const auto* realize = s.as<BlockRealizeNode>();
  if (realize == nullptr) {
    throw fail(6, "NotOuterBlock",
               fmt::format("block '{}' does not hold a chain of loops down to one block (found a {})", outer_name,
                           node_kind_name(s.kind())),
               outer_name);
  }
  const BlockNode* block = realize->block.get();

  // 7) not tensorized already.
  if (auto it = outer->annotations.find(kTensorIntrinAnnotation); it != outer->annotations.end()) {
    const auto* previous = std::get_if<std::string>(&it->second);
    throw fail(7, "AlreadyTensorized",
               fmt::format("block '{}' is already tensorized with '{}'", outer_name, previous ? *previous : "?"),
               outer_name);
  }

  if (intrin == nullptr) return outer;  // the rest reads the intrinsic

  // 8) the inner loops enumerate one tile of the intrinsic's shape, each point once.
  const BlockRealizeNode* desc_realize = intrin->desc_realize();
  const BlockNode* desc = desc_realize->block.get();
  Analyzer analyzer;
  std::vector<const VarNode*> outer_vars, loop_vars;
  for (const IterVar& iv : outer->iter_vars) {
    analyzer.bind(iv.var, iv.dom);
    outer_vars.push_back(iv.var.get());
  }
  std::unordered_map<const VarNode*, Expr> loops_at_zero;
  for (const ForNode* l : inner_loops) {
    analyzer.bind(l->loop_var, Range{l->min, l->extent});
    loop_vars.push_back(l->loop_var.get());
    loops_at_zero[l->loop_var.get()] = make_zero(l->loop_var.dtype());
  }
  auto tile_error = [&](std::string reason) { return fail(8, "TileMismatch", std::move(reason), block->name); };
  if (realize->predicate.defined() && !is_const_int(realize->predicate, 1)) {
    throw tile_error(fmt::format("block '{}' is guarded by {} inside the tile: a partial tile", block->name,
                                 print_expr(realize->predicate)));
  }
  std::vector<TileIter> tile(block->iter_vars.size());
  std::unordered_map<const VarNode*, std::string> loop_owner;  // inner loop -> the variable it feeds
  for (size_t p = 0; p < block->iter_vars.size(); ++p) {
    const IterVar& iv = block->iter_vars[p];
    const Expr& binding = realize->iter_values[p];
    Expr base = analyzer.simplify(detail::substitute_vars(binding, loops_at_zero));
    Expr local = analyzer.simplify(binding - base);
    auto not_a_tile = [&](const std::string& why) {
      return tile_error(fmt::format("the binding {} of '{}' {}", print_expr(binding), iv.var.name(), why));
    };
    if (detail::uses_any_var(local, outer_vars)) throw not_a_tile("is not a tile offset plus a position in the tile");
    // The position must be a mixed-radix number of the loops it uses: coefficients
    // 1, e0, e0 * e1, ... in some order, so that it takes each value of [0, extent) once.
    std::vector<std::pair<int64_t, const ForNode*>> digits;
    Expr rebuilt = make_zero(local.dtype());
    for (const ForNode* l : inner_loops) {
      if (*as_const_int(l->extent) == 1 || !detail::uses_any_var(local, {l->loop_var.get()})) continue;
      std::unordered_map<const VarNode*, Expr> unit = loops_at_zero;
      unit[l->loop_var.get()] = make_const(l->loop_var.dtype(), 1);
      auto coefficient = as_const_int(analyzer.simplify(detail::substitute_vars(local, unit)));
      if (!coefficient || *coefficient <= 0) throw not_a_tile("is not a positive multiple of each loop it uses");
      digits.emplace_back(*coefficient, l);
      rebuilt = rebuilt + make_const(local.dtype(), static_cast<double>(*coefficient)) * Expr(l->loop_var);
    }
    if (!analyzer.can_prove_equal(local, rebuilt)) throw not_a_tile("is not affine in the loops of the tile");
    std::sort(digits.begin(), digits.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    int64_t radix = 1;
    for (const auto& [coefficient, l] : digits) {
      if (coefficient != radix) {
        throw not_a_tile(fmt::format("does not visit each point of its tile once (loop '{}' has stride {}, {} expected)",
                                     l->loop_var.name(), coefficient, radix));
      }
      radix *= *as_const_int(l->extent);
      auto [it, fresh] = loop_owner.emplace(l->loop_var.get(), iv.var.name());
      if (!fresh) {
        throw tile_error(fmt::format("loop '{}' feeds both '{}' and '{}'", l->loop_var.name(), it->second,
                                     iv.var.name()));
      }
    }
    tile[p] = TileIter{base, radix};
  }
  for (const ForNode* l : inner_loops) {
    if (*as_const_int(l->extent) > 1 && !loop_owner.count(l->loop_var.get())) {
      throw tile_error(fmt::format("loop '{}' (extent {}) feeds no iteration variable: the tile would be computed {} times",
                                   l->loop_var.name(), *as_const_int(l->extent), *as_const_int(l->extent)));
    }
  }
  std::vector<size_t> varying;  // the block's variables that move inside the tile, in order
  for (size_t p = 0; p < tile.size(); ++p) {
    if (tile[p].extent > 1) varying.push_back(p);
  }
  auto describe_iters = [](const std::vector<std::string>& parts) { return fmt::format("[{}]", fmt::join(parts, ", ")); };
  std::vector<std::string> have, want;
  for (size_t p : varying) {
    have.push_back(fmt::format("{}: {} {}", block->iter_vars[p].var.name(),
                               iter_kind_name(block->iter_vars[p].kind).substr(0, 1), tile[p].extent));
  }
  for (const IterVar& iv : desc->iter_vars) {
    want.push_back(fmt::format("{}: {} {}", iv.var.name(), iter_kind_name(iv.kind).substr(0, 1), *as_const_int(iv.dom.extent)));
  }
  if (varying.size() != desc->iter_vars.size()) {
    throw tile_error(fmt::format("the tile of block '{}' varies {} iteration variables {}, the intrinsic '{}' {} {}",
                                 block->name, varying.size(), describe_iters(have), intrin->name,
                                 desc->iter_vars.size(), describe_iters(want)));
  }
  for (size_t q = 0; q < varying.size(); ++q) {
    const IterVar& iv = block->iter_vars[varying[q]];
    const IterVar& div = desc->iter_vars[q];
    if (iv.kind != div.kind || tile[varying[q]].extent != *as_const_int(div.dom.extent)) {
      throw tile_error(fmt::format("iteration variable {} of the tile is {} where the intrinsic '{}' has {} (tile {}, "
                                   "intrinsic {})",
                                   q, have[q], intrin->name, want[q], describe_iters(have), describe_iters(want)));
    }
  }

  // 9) the loads and stores pair one to one with the intrinsic's buffers.
  const bool with_init = block->init.defined() && desc->init.defined();
  std::vector<Access> accesses = block_accesses(block, with_init);
  std::vector<Access> desc_accesses = block_accesses(desc, with_init);
  auto buffer_error = [&](std::string reason) { return fail(9, "BufferMismatch", std::move(reason), block->name); };
  if (accesses.size() != desc_accesses.size()) {
    throw buffer_error(fmt::format("block '{}' makes {}, the intrinsic '{}' makes {}", block->name,
                                   describe_accesses(accesses), intrin->name, describe_accesses(desc_accesses)));
  }
  std::unordered_map<const BufferNode*, const BufferNode*> to_desc, from_desc;
  for (size_t a = 0; a < accesses.size(); ++a) {
    const Access& x = accesses[a];
    const Access& y = desc_accesses[a];
    auto [it, fresh] = to_desc.emplace(x.buffer, y.buffer);
    auto [back, back_fresh] = from_desc.emplace(y.buffer, x.buffer);
    if (x.is_store != y.is_store || it->second != y.buffer || back->second != x.buffer) {
      throw buffer_error(fmt::format("access {} of block '{}' is a {} of '{}' where the intrinsic '{}' has a {} of '{}' "
                                     "(block: {}; intrinsic: {})",
                                     a, block->name, x.is_store ? "store" : "load", x.buffer->name, intrin->name,
                                     y.is_store ? "store" : "load", y.buffer->name, describe_accesses(accesses),
                                     describe_accesses(desc_accesses)));
    }
  }
  std::vector<std::pair<const BufferNode*, size_t>> pairs;  // block buffer, intrinsic parameter index
  for (const auto& [mine, theirs] : to_desc) {
    for (size_t q = 0; q < intrin->desc->params.size(); ++q) {
      if (intrin->desc->params[q].buffer.get() == theirs) pairs.emplace_back(mine, q);
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });

  // 10) dtypes and 11) scopes of the paired buffers.
  for (const auto& [mine, q] : pairs) {
    const BufferNode* theirs = intrin->desc->params[q].buffer.get();
    if (mine->dtype != theirs->dtype) {
      throw fail(10, "DtypeMismatch",
                 fmt::format("buffer '{}' is {} where the intrinsic '{}' needs {} for its operand '{}'", mine->name,
                             to_string(mine->dtype), intrin->name, to_string(theirs->dtype), theirs->name),
                 block->name);
    }
  }
  for (const auto& [mine, q] : pairs) {
    const std::vector<std::string>& allowed = intrin->scopes[q];
    if (std::find(allowed.begin(), allowed.end(), mine->scope) == allowed.end()) {
      throw fail(11, "ScopeMismatch",
                 fmt::format("buffer '{}' is in scope '{}' where the intrinsic '{}' needs {} for its operand '{}'",
                             mine->name, mine->scope, intrin->name, fmt::join(allowed, " or "),
                             intrin->desc->params[q].buffer->name),
                 block->name);
    }
  }

  // 12) the same computation, operator for operator.
  PatternComparer compare;
  if (block->init.defined() != desc->init.defined()) {
    throw fail(12, "PatternMismatch",
               block->init.defined()
                   ? fmt::format("block '{}' has an init and the intrinsic '{}' has none: decompose the reduction "
                                 "first and tensorize the init separately",
                                 block->name, intrin->name)
                   : fmt::format("the intrinsic '{}' has an init and block '{}' has none", intrin->name, block->name),
               block->name);
  }
  if (!compare.stmt(block->init, desc->init) || !compare.stmt(block->body, desc->body)) {
    throw fail(12, "PatternMismatch", fmt::format("{} ('{}')", compare.difference, intrin->name), block->name);
  }

  // 13) each access is the intrinsic's, in tile coordinates, at one offset per buffer.
  // Tile coordinates are named after the description's variables.
  std::unordered_map<const VarNode*, Expr> at_offset, in_tile, desc_in_tile;
  for (size_t p = 0; p < tile.size(); ++p) at_offset[block->iter_vars[p].var.get()] = tile[p].base;
  in_tile = at_offset;
  for (size_t q = 0; q < varying.size(); ++q) {
    const IterVar& iv = block->iter_vars[varying[q]];
    Var coordinate(desc->iter_vars[q].var.name(), iv.var.dtype());
    analyzer.bind(coordinate, int64_t{0}, tile[varying[q]].extent);
    in_tile[iv.var.get()] = tile[varying[q]].base + coordinate;
    desc_in_tile[desc->iter_vars[q].var.get()] = coordinate;
  }
  auto show = [](const std::vector<Expr>& v) {
    std::vector<std::string> parts;
    for (const Expr& e : v) parts.push_back(print_expr(e));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  };
  std::unordered_map<const BufferNode*, std::vector<Expr>> offsets;
  for (size_t a = 0; a < accesses.size(); ++a) {
    const Access& x = accesses[a];
    const Access& y = desc_accesses[a];
    auto layout_error = [&](std::string why) {
      return fail(13, "LayoutMismatch",
                  fmt::format("{} of '{}' {} ('{}')", x.is_store ? "the store" : "a load", x.buffer->name, why,
                              intrin->name),
                  block->name);
    };
    std::vector<Expr> offset, local_kept, desc_kept;
    for (const Expr& index : *x.indices) {
      Expr at = analyzer.simplify(detail::substitute_vars(index, at_offset));
      Expr local = analyzer.simplify(detail::substitute_vars(index, in_tile) - at);
      if (detail::uses_any_var(local, outer_vars)) {
        throw layout_error(fmt::format("has index {}, not a tile offset plus a position in the tile", print_expr(index)));
      }
      offset.push_back(at);
      if (!analyzer.can_prove_equal(local, make_zero(local.dtype()))) local_kept.push_back(local);
    }
    for (const Expr& index : *y.indices) {
      Expr local = analyzer.simplify(detail::substitute_vars(index, desc_in_tile));
      if (!analyzer.can_prove_equal(local, make_zero(local.dtype()))) desc_kept.push_back(local);
    }
    bool same = local_kept.size() == desc_kept.size();
    for (size_t d = 0; same && d < local_kept.size(); ++d) {
      same = local_kept[d].dtype() == desc_kept[d].dtype() ? analyzer.can_prove_equal(local_kept[d], desc_kept[d])
                                                            : analyzer.can_prove_equal(local_kept[d], cast(local_kept[d].dtype(), desc_kept[d]));
    }
    if (!same) {
      throw layout_error(fmt::format("is at {} in the tile where the intrinsic accesses {}", show(local_kept),
                                     show(desc_kept)));
    }
    auto [it, fresh] = offsets.emplace(x.buffer, offset);
    if (!fresh) {
      bool equal = it->second.size() == offset.size();
      for (size_t d = 0; equal && d < offset.size(); ++d) equal = analyzer.can_prove_equal(it->second[d], offset[d]);
      if (!equal) {
        throw layout_error(fmt::format("is at tile offset {} where another access of it is at {}", show(offset),
                                       show(it->second)));
      }
    }
  }
  return outer;
}

}  // namespace

// What tensorize's construction needs: the function matched (blockized when a loop was
// given), its outer block, and the intrinsic.
struct detail::TensorizePlan {
  PrimFunc func;
  const BlockNode* outer = nullptr;
  const TensorIntrin* intrin = nullptr;
};

detail::Planned<detail::TensorizePlan> Schedule::plan_tensorize(const BlockOrLoop& target,
                                                                std::optional<std::string_view> intrin_name,
                                                                bool preserve_unit_iters) const {
  const bool is_loop = std::holds_alternative<LoopRV>(target);
  const ForNode* loop = nullptr;
  const BlockNode* given_block = nullptr;
  if (is_loop) {
    auto found = find(std::get<LoopRV>(target), kKind, "loop");
    if (!found.ok()) return std::move(found).take_error();
    loop = *found;
  } else {
    auto found = find(std::get<BlockRV>(target), kKind, "block");
    if (!found.ok()) return std::move(found).take_error();
    given_block = *found;
  }
  const Arg target_arg = is_loop ? Arg(std::get<LoopRV>(target)) : Arg(std::get<BlockRV>(target));
  auto operand = [&] { return fmt::format("{} {}", is_loop ? "loop" : "block", to_string(target_arg)); };
  const ErrorLocus target_locus =
      is_loop ? ErrorLocus{loop->loop_var.get(), {}} : ErrorLocus{nullptr, given_block->name};

  // 1) the intrinsic is registered.
  const TensorIntrin* intrin = intrin_name ? find_tensor_intrin(*intrin_name) : nullptr;
  if (intrin_name && intrin == nullptr) {
    return error(
        kKind, 1, "UnknownIntrinsic", operand,
        [&] {
          return fmt::format("no tensor intrinsic named '{}' (registered: {})", *intrin_name,
                             fmt::join(tensor_intrin_names(), ", "));
        },
        target_locus);
  }

  // 2-5) a loop is blockized first, with blockize's preconditions 1-4.
  detail::TensorizePlan plan;
  plan.intrin = intrin;
  PrimFunc& func = plan.func;
  func = func_;
  std::string outer_name;
  if (is_loop) {
    // Blockize's plan and construction, not blockize on a copy: the function is only
    // matched, never committed (no copy of the schedule, no BlockTree of its own).
    auto blockize_plan = plan_blockize(std::get<LoopRV>(target));
    if (!blockize_plan.ok()) {
      const ScheduleError& e = blockize_plan.error();
      return error(
          kKind, 1 + e.precondition(), e.error_name(), operand, [&] { return "blockize: " + e.reason(); },
          target_locus);
    }
    detail::Blockized blockized = detail::build_blockized(func_, *blockize_plan, preserve_unit_iters);
    if (ir_checks_enabled()) {
      // As blockize's commit verifies it.
      check_well_formed(blockized.func, fmt::format("after {}", instruction_kind_name(InstructionKind::Blockize)));
    }
    outer_name = std::move(blockized.outer_name);
    func = std::move(blockized.func);
  } else {
    outer_name = given_block->name;
  }
  try {
    plan.outer = match_tile(func, outer_name, intrin, operand());
  } catch (const ScheduleError& e) {
    return e;
  }
  return plan;
}

void Schedule::tensorize(BlockOrLoop target, std::string intrin_name, bool preserve_unit_iters) {
  const detail::TensorizePlan plan = plan_tensorize(target, intrin_name, preserve_unit_iters).take();
  const BlockNode* outer = plan.outer;
  const TensorIntrin* intrin = plan.intrin;
  Annotations annotations = outer->annotations;
  annotations[std::string(kTensorIntrinAnnotation)] = intrin->name;
  Block marked = BlockNode::make(outer->name, outer->iter_vars, outer->reads, outer->writes, outer->body, outer->init,
                                 outer->alloc_buffers, std::move(annotations));
  commit(detail::replace_in_func(plan.func, outer, marked),
         detail::make_instruction(kKind, {}, target, intrin->name, preserve_unit_iters));
}

CheckResult Schedule::check_tensorize(const detail::CheckedOperands& ops) const {
  ops.expect(1, 2);
  auto target = ops.block_or_loop(0);
  auto intrin_name = ops.string_attr(0);
  auto preserve_unit_iters = ops.bool_attr(1);
  if (!target) {
    // Precondition 1 reads the name alone.
    if (intrin_name && find_tensor_intrin(*intrin_name) == nullptr) return CheckResult{Verdict::kFails, {}, 0, {}};
    return detail::unknown();
  }
  return detail::verdict(plan_tensorize(*target, intrin_name, preserve_unit_iters.value_or(true)),
                         intrin_name.has_value(), 0);
}

namespace detail {

constexpr auto kTensorizeSlots = numbered_slots({
    slot::input("block_or_loop", ValueType::kBlockOrLoop),
    slot::attr("tensor_intrin", ValueType::kString),
    slot::attr("preserve_unit_iters", ValueType::kBool).defaults_to(true),
});

constinit const InstructionSignature kTensorizeSignature{
    .python_name = "tensorize",
    .slots = kTensorizeSlots,
    .replay = replay_method<&Schedule::tensorize>,
    .check = check_method<&Schedule::check_tensorize>,
};

}  // namespace detail
}  // namespace dragon::schedule
