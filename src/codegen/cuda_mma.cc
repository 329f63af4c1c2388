// The mma.sync families on CUDA (m16n8k16 f16/bf16, m16n8k8 tf32; tensor_intrin.h's
// registered intrinsics): each tensorized block's scalar loops are read back into operands
// (buffer, base offset with the tile's loop variables at 0, row stride) and planned as one
// call of a warp helper of the prelude below (inline PTX: ldmatrix, mma.sync; fill and
// store per lane; the tf32 helpers are cuda_mma_tf32.cc). Not the dispatch or the printing
// (cuda_tensor_intrin.cc), and not the wgmma family (cuda_wgmma.cc).
#include <string_view>

#include <fmt/ranges.h>

#include "cuda_warp_intrin.h"
#include "index_widening.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/substitute.h"
#include "dragon/ir/uses_var.h"

namespace dragon::codegen {

namespace {

// The nest variable `e` is, read through widening integer casts (the i64 index of a
// buffer past 2^31 elements reads cast(i64, v)); -1 when it is none.
int nest_var_of(const ir::Expr& e, const TileNest& nest) {
  const ir::Expr* inner = &e;
  while (const auto* cast = inner->as<ir::CastNode>()) {
    const ir::DataType from = cast->value.dtype(), to = inner->dtype();
    if (!from.is_int() || !to.is_int() || to.lanes() != 1 || to.bits() < from.bits()) return -1;
    inner = &cast->value;
  }
  for (size_t v = 0; v < nest.vars.size(); ++v) {
    if (inner->get() == nest.vars[v].get()) return static_cast<int>(v);
  }
  return -1;
}

bool uses_nest_var(const ir::Expr& e, const TileNest& nest) {
  for (const ir::Var& v : nest.vars) {
    if (ir::uses_var(e, v.get())) return true;
  }
  return false;
}

// Adds sign * the coefficient of each nest variable in `e`, a simplified sum, to `coefs`:
// true when every term that mentions a nest variable is that variable (or a constant
// times it), so e == base + sum(coefs[v] * v) exactly; false when some term is not.
bool read_nest_coefficients(const ir::Expr& e, int64_t sign, const TileNest& nest, std::vector<int64_t>& coefs) {
  if (const auto* add = e.as<ir::AddNode>()) {
    return read_nest_coefficients(add->a, sign, nest, coefs) && read_nest_coefficients(add->b, sign, nest, coefs);
  }
  if (const auto* sub = e.as<ir::SubNode>()) {
    return read_nest_coefficients(sub->a, sign, nest, coefs) && read_nest_coefficients(sub->b, -sign, nest, coefs);
  }
  int var = nest_var_of(e, nest);
  int64_t factor = 1;
  if (const auto* mul = e.as<ir::MulNode>(); mul && var < 0) {
    for (auto [x, c] : {std::pair{&mul->a, &mul->b}, std::pair{&mul->b, &mul->a}}) {
      std::optional<int64_t> constant = ir::as_const_int(*c);
      if (int v = nest_var_of(*x, nest); v >= 0 && constant) {
        var = v;
        factor = *constant;
        break;
      }
    }
  }
  if (var < 0) return !uses_nest_var(e, nest);  // a term of the base
  int64_t term = 0;
  if (__builtin_mul_overflow(factor, sign, &term) || __builtin_add_overflow(coefs[var], term, &coefs[var])) return false;
  return true;
}

}  // namespace

std::optional<Affine> decompose(const ir::Expr& original, const TileNest& nest, const ir::Analyzer& outer) {
  // A buffer past 2^31 elements is indexed as i64(i32 row index) * stride + ...: read
  // through the casts (index_widening.h), or the coefficient of a loop under one is not
  // constant to the analyzer. The tile's loops range over their extents, which is what
  // bounds the row index inside i32. Indices without such casts are analyzed as they are,
  // so their base, and the code printed from it, does not change.
  ir::Analyzer analyzer = outer;
  for (size_t v = 0; v < nest.vars.size(); ++v) analyzer.bind(nest.vars[v], 0, nest.extents[v]);
  const ir::Expr index = widen_index_casts(original, analyzer);
  auto at = [&](int unit_var) {
    ir::VarMap values;
    for (size_t v = 0; v < nest.vars.size(); ++v) {
      values[nest.vars[v].get()] = ir::make_const(nest.vars[v].dtype(), static_cast<int>(v) == unit_var ? 1 : 0);
    }
    return analyzer.simplify(ir::substitute(index, values));
  };
  Affine affine{at(-1), {}};
  // Usually the simplified index is already a sum whose nest-variable terms are constant
  // multiples: the coefficients are read off it (two simplifications in all). Otherwise
  // each is the difference of the index at a unit point and at the origin, and the sum
  // they make is proven equal to the index (2 + 2 * loops simplifications; this was a
  // tensor-core candidate's largest cost in code generation).
  std::vector<int64_t> coefs(nest.vars.size(), 0);
  if (read_nest_coefficients(analyzer.simplify(index), 1, nest, coefs)) {
    affine.coefs = std::move(coefs);
    return affine;
  }
  ir::Expr rebuilt = affine.base;
  for (size_t v = 0; v < nest.vars.size(); ++v) {
    auto coef = ir::as_const_int(analyzer.simplify(at(static_cast<int>(v)) - affine.base));
    if (!coef) return std::nullopt;
    affine.coefs.push_back(*coef);
    // The loop counts in i32, an index past 2^31 elements in i64.
    rebuilt = rebuilt + ir::make_const(index.dtype(), static_cast<double>(*coef)) *
                            ir::cast(index.dtype(), nest.vars[v]);
  }
  if (!analyzer.can_prove_equal(index, rebuilt)) return std::nullopt;
  return affine;
}

namespace {

// The row stride of a row-major tile whose row is loop `row_var` and column `col_var`
// (coefficient 1), every other tile variable unused; 0 when the access is not that.
int64_t row_stride_of(const Affine& a, size_t row_var, size_t col_var) {
  if (a.coefs[col_var] != 1 || a.coefs[row_var] <= 0) return 0;
  for (size_t v = 0; v < a.coefs.size(); ++v) {
    if (v != row_var && v != col_var && a.coefs[v] != 0) return 0;
  }
  return a.coefs[row_var];
}

}  // namespace

std::string describe_access(const ir::Buffer& buffer, const ir::Expr& index) {
  return fmt::format("{}[{}]", buffer->name, ir::print_expr(index));
}

std::optional<ir::Expr> fragment_slot(const ir::Buffer& buffer, const ir::Expr& index, const TileNest& nest,
                                      size_t row_var, size_t col_var, int64_t rows, int64_t cols, int64_t lanes,
                                      ir::DataType dtype, WarpPlanContext& context, std::string& why) {
  if (buffer->scope != "warp") {
    why = fmt::format("fragment {} is in scope '{}', not \"warp\"", buffer->name, buffer->scope);
    return std::nullopt;
  }
  if (buffer->dtype != dtype) {
    why = fmt::format("fragment {} is {}, the instruction needs {}", buffer->name, ir::to_string(buffer->dtype),
                      ir::to_string(dtype));
    return std::nullopt;
  }
  std::optional<Affine> a = decompose(index, nest, context.analyzer);
  int64_t stride = a ? row_stride_of(*a, row_var, col_var) : 0;
  if (stride == 0) {
    why = fmt::format("fragment access {} is not a row-major {}x{} tile of the block's loops", describe_access(buffer, index),
                      rows, cols);
    return std::nullopt;
  }
  if (stride % cols != 0 || buffer->num_elements() % (stride * rows) != 0) {
    why = fmt::format("fragment {} ({} elements, rows of {}) is not a whole number of {}x{} tiles", buffer->name,
                      buffer->num_elements(), stride, rows, cols);
    return std::nullopt;
  }
  FragmentLayout layout{stride, rows, cols, lanes};
  auto [it, fresh] = context.fragments.emplace(buffer.get(), layout);
  if (!fresh && (it->second.row_stride != stride || it->second.rows != rows || it->second.cols != cols ||
                 it->second.lanes != lanes)) {
    why = fmt::format(
        "fragment {} is used both as {}x{} tiles over {} lanes with rows of {} and as {}x{} tiles over {} lanes with "
        "rows of {}",
        buffer->name, it->second.rows, it->second.cols, it->second.lanes, it->second.row_stride, rows, cols, lanes,
        stride);
    return std::nullopt;
  }
  const ir::Expr& base = a->base;
  if (!context.analyzer.can_prove(ir::eq(ir::floormod(base, cols), 0)) ||
      !context.analyzer.can_prove(ir::eq(ir::floormod(ir::floordiv(base, stride), rows), 0))) {
    why = fmt::format("fragment tile {} does not start on a {}x{} tile boundary", describe_access(buffer, index), rows, cols);
    return std::nullopt;
  }
  ir::Expr tile = ir::floordiv(base, stride * rows) * (stride / cols) + ir::floordiv(ir::floormod(base, stride), cols);
  return context.analyzer.simplify(tile * (rows * cols / lanes));
}

std::optional<MemoryTile> memory_tile(const ir::Buffer& buffer, const ir::Expr& index, const TileNest& nest,
                                      size_t row_var, size_t col_var, std::initializer_list<std::string_view> scopes,
                                      int64_t align, WarpPlanContext& context, std::string& why) {
  bool scope_ok = false;
  for (std::string_view s : scopes) scope_ok = scope_ok || buffer->scope == s;
  if (!scope_ok) {
    why = fmt::format("{} is in scope '{}', which the instruction cannot address", buffer->name, buffer->scope);
    return std::nullopt;
  }
  std::optional<Affine> a = decompose(index, nest, context.analyzer);
  int64_t stride = a ? row_stride_of(*a, row_var, col_var) : 0;
  if (stride == 0) {
    why = fmt::format("access {} is not a row-major tile of the block's loops with constant strides",
                      describe_access(buffer, index));
    return std::nullopt;
  }
  if (align > 0 && (stride % align != 0 || !context.analyzer.can_prove(ir::eq(ir::floormod(a->base, align), 0)))) {
    why = fmt::format("ldmatrix needs 16-byte aligned rows: access {} has rows of {} elements and a base not "
                      "provably a multiple of {}",
                      describe_access(buffer, index), stride, align);
    return std::nullopt;
  }
  return MemoryTile{a->base, stride};
}

bool expect_extents(const TileNest& nest, std::vector<int64_t> extents, std::string& why) {
  if (nest.extents == extents) return true;
  why = fmt::format("the block's loops have extents [{}], the instruction's tile is [{}]",
                    fmt::join(nest.extents, ", "), fmt::join(extents, ", "));
  return false;
}

const ir::BufferLoadNode* widened_load(const ir::Expr& e) {
  const auto* cast = e.as<ir::CastNode>();
  return cast != nullptr ? cast->value.as<ir::BufferLoadNode>() : nullptr;
}

std::optional<MultiplyAccumulate> match_multiply_accumulate(const TileNest& nest, WarpPlanContext& context,
                                                            std::string& why) {
  // C = C + f32(A) * f32(B), in either operand order.
  const auto* add = nest.store->value.as<ir::AddNode>();
  const ir::BufferLoadNode* acc = nullptr;
  const ir::MulNode* mul = nullptr;
  if (add != nullptr) {
    acc = add->a.as<ir::BufferLoadNode>();
    mul = add->b.as<ir::MulNode>();
    if (acc == nullptr || mul == nullptr) {
      acc = add->b.as<ir::BufferLoadNode>();
      mul = add->a.as<ir::MulNode>();
    }
  }
  // f32 operands (the tf32 family) are loaded without a cast.
  auto operand = [](const ir::Expr& e) {
    const ir::BufferLoadNode* load = widened_load(e);
    return load != nullptr ? load : e.as<ir::BufferLoadNode>();
  };
  const ir::BufferLoadNode* a = mul ? operand(mul->a) : nullptr;
  const ir::BufferLoadNode* b = mul ? operand(mul->b) : nullptr;
  if (acc == nullptr || a == nullptr || b == nullptr || !acc->buffer.same_as(nest.store->buffer) ||
      !context.analyzer.can_prove_equal(acc->indices[0], nest.store->indices[0])) {
    why = "the body is not C = C + f32(A) * f32(B) (or C = C + A * B with f32 A and B)";
    return std::nullopt;
  }
  // A is the operand indexed by the tile's row (loop 0).
  std::optional<Affine> a_affine = decompose(a->indices[0], nest, context.analyzer);
  if (!a_affine || a_affine->coefs[0] == 0) std::swap(a, b);
  return MultiplyAccumulate{a, b};
}

namespace {

WarpHelperArg at(const ir::Buffer& buffer, ir::Expr offset) { return {buffer, std::move(offset)}; }
WarpHelperArg value(int64_t v) { return {ir::Buffer(), ir::make_const(ir::DataType::i32(), static_cast<double>(v))}; }

// ---- Planners, one per intrinsic shape ------------------------------------------------

std::optional<WarpCall> plan_fill(const TileNest& nest, WarpPlanContext& context, std::string& why) {
  if (!expect_extents(nest, {16, 8}, why)) return std::nullopt;
  const auto* zero = nest.store->value.as<ir::FloatImmNode>();
  if (zero == nullptr || zero->value != 0) {
    why = "the fill does not store 0";
    return std::nullopt;
  }
  auto slot = fragment_slot(nest.store->buffer, nest.store->indices[0], nest, 0, 1, 16, 8, 32, ir::DataType::f32(),
                            context, why);
  if (!slot) return std::nullopt;
  return WarpCall{"dragon_mma_fill_m16n8_f32", {at(nest.store->buffer, *slot)}, false};
}

std::optional<WarpCall> plan_store(const TileNest& nest, WarpPlanContext& context, std::string& why) {
  if (!expect_extents(nest, {16, 8}, why)) return std::nullopt;
  const auto* load = nest.store->value.as<ir::BufferLoadNode>();
  if (load == nullptr) {
    why = "the store's value is not a fragment load";
    return std::nullopt;
  }
  auto slot = fragment_slot(load->buffer, load->indices[0], nest, 0, 1, 16, 8, 32, ir::DataType::f32(), context, why);
  if (!slot) return std::nullopt;
  const ir::Buffer& dst = nest.store->buffer;
  if (dst->dtype != ir::DataType::f32()) {
    why = fmt::format("the store's destination {} is {}, not f32", dst->name, ir::to_string(dst->dtype));
    return std::nullopt;
  }
  auto tile = memory_tile(dst, nest.store->indices[0], nest, 0, 1, {"global", "shared", "shared.dyn"}, 0, context, why);
  if (!tile) return std::nullopt;
  return WarpCall{"dragon_mma_store_m16n8_f32",
                  {at(dst, tile->base), value(tile->row_stride), at(load->buffer, *slot)},
                  true};
}

// How a fragment load's shared tile is laid out: as the fragment (rows x cols), or
// transposed (cols x rows: an A staged [k, m]).
enum class TileLayout { kSame, kTransposed };

// A load of a rows x cols tile from shared memory into a fragment: ldmatrix (16-bit
// elements, `align` 8: 16-byte rows) or per-lane loads (f32, `align` 0).
std::optional<WarpCall> plan_fragment_load(const TileNest& nest, WarpPlanContext& context, std::string& why,
                                           int64_t rows, int64_t cols, ir::DataType dtype, int64_t align,
                                           const char* helper, TileLayout layout = TileLayout::kSame) {
  if (!expect_extents(nest, {rows, cols}, why)) return std::nullopt;
  const auto* load = nest.store->value.as<ir::BufferLoadNode>();
  if (load == nullptr || load->buffer->dtype != dtype) {
    why = fmt::format("the copy's value is not a load of a {} buffer", ir::to_string(dtype));
    return std::nullopt;
  }
  auto slot = fragment_slot(nest.store->buffer, nest.store->indices[0], nest, 0, 1, rows, cols, 32, dtype, context, why);
  if (!slot) return std::nullopt;
  // The shared tile's rows are the fragment's rows, or its columns when transposed.
  const size_t row_var = layout == TileLayout::kSame ? 0 : 1;
  auto tile =
      memory_tile(load->buffer, load->indices[0], nest, row_var, 1 - row_var, {"shared", "shared.dyn"}, align, context, why);
  if (!tile) return std::nullopt;
  return WarpCall{
      helper, {at(nest.store->buffer, *slot), at(load->buffer, tile->base), value(tile->row_stride)}, false};
}

// An f32 fragment load of the tf32 family: ldmatrix (`ldmatrix_helper`) where the tile's
// rows are provably 16-byte aligned (4 floats), else per-lane 4-byte loads (`lane_helper`).
std::optional<WarpCall> plan_f32_fragment_load(const TileNest& nest, WarpPlanContext& context, std::string& why,
                                               int64_t rows, int64_t cols, const char* ldmatrix_helper,
                                               const char* lane_helper) {
  if (ldmatrix_helper != nullptr) {
    std::optional<WarpCall> call =
        plan_fragment_load(nest, context, why, rows, cols, ir::DataType::f32(), 4, ldmatrix_helper);
    if (call) return call;
  }
  return plan_fragment_load(nest, context, why, rows, cols, ir::DataType::f32(), 0, lane_helper);
}

// C[16,8] += A[16,k] * B[k,8] (B[8,k] with trans_b): k 16 for f16/bf16, 8 for tf32.
std::optional<WarpCall> plan_mma(const TileNest& nest, WarpPlanContext& context, std::string& why, ir::DataType a_dtype,
                                 ir::DataType b_dtype, int64_t k, bool trans_b, const char* helper) {
  if (!expect_extents(nest, {16, 8, k}, why)) return std::nullopt;
  std::optional<MultiplyAccumulate> mac = match_multiply_accumulate(nest, context, why);
  if (!mac) return std::nullopt;
  const ir::BufferLoadNode *a = mac->a, *b = mac->b;
  const ir::Buffer& c_buf = nest.store->buffer;
  auto c_slot = fragment_slot(c_buf, nest.store->indices[0], nest, 0, 1, 16, 8, 32, ir::DataType::f32(), context, why);
  if (!c_slot) return std::nullopt;
  auto a_slot = fragment_slot(a->buffer, a->indices[0], nest, 0, 2, 16, k, 32, a_dtype, context, why);
  if (!a_slot) return std::nullopt;
  auto b_slot = trans_b ? fragment_slot(b->buffer, b->indices[0], nest, 1, 2, 8, k, 32, b_dtype, context, why)
                        : fragment_slot(b->buffer, b->indices[0], nest, 2, 1, k, 8, 32, b_dtype, context, why);
  if (!b_slot) return std::nullopt;
  return WarpCall{helper, {at(c_buf, *c_slot), at(a->buffer, *a_slot), at(b->buffer, *b_slot)}, false};
}

}  // namespace

std::optional<TileNest> read_tile_nest(const ir::ForNode* unit) {
  TileNest nest;
  ir::Stmt s = unit->body;
  while (const auto* loop = s.as<ir::ForNode>()) {
    auto min = ir::as_const_int(loop->min);
    auto extent = ir::as_const_int(loop->extent);
    if (!min || *min != 0 || !extent) return std::nullopt;
    nest.vars.push_back(loop->loop_var);
    nest.extents.push_back(*extent);
    s = loop->body;
  }
  nest.store = s.as<ir::BufferStoreNode>();
  if (nest.store == nullptr || nest.store->indices.size() != 1) return std::nullopt;
  return nest;
}

const std::map<std::string, WarpPlanner, std::less<>>& warp_intrin_planners() {
  static const std::map<std::string, WarpPlanner, std::less<>> planners = [] {
    std::map<std::string, WarpPlanner, std::less<>> table = {
      {"mma_fill_m16n8_f32", &plan_fill},
      {"mma_store_m16n8_f32", &plan_store},
    };
    // The f16/bf16 family (k 16): ldmatrix loads (16-byte rows) of A [m, k], B [k, n]
    // (.trans), B [n, k], and of the operands staged by columns, transposed into the
    // fragments the mma reads; then the mma, B [k, n] or [n, k].
    for (ir::DataType half : {ir::DataType::f16(), ir::DataType::bf16()}) {
      const std::string t = ir::to_string(half);
      struct Load {
        std::string name;
        int64_t rows, cols;
        const char* helper;
        TileLayout layout;
      };
      for (const Load& l : {Load{"mma_ldmatrix_a_m16k16_", 16, 16, "dragon_ldmatrix_a_m16k16", TileLayout::kSame},
                            Load{"mma_ldmatrix_b_k16n8_", 16, 8, "dragon_ldmatrix_b_k16n8", TileLayout::kSame},
                            Load{"mma_ldmatrix_b_trans_n8k16_", 8, 16, "dragon_ldmatrix_b_trans_n8k16", TileLayout::kSame},
                            Load{"mma_ldmatrix_a_m16k16_from_k16m16_", 16, 16, "dragon_ldmatrix_a_trans_k16m16",
                                 TileLayout::kTransposed},
                            Load{"mma_ldmatrix_b_n8k16_from_k16n8_", 8, 16, "dragon_ldmatrix_b_k16n8",
                                 TileLayout::kTransposed}}) {
        table.emplace(l.name + t, [half, l](const TileNest& n, WarpPlanContext& c, std::string& why) {
          return plan_fragment_load(n, c, why, l.rows, l.cols, half, 8, l.helper, l.layout);
        });
      }
      const char* mma_helper = half == ir::DataType::f16() ? "dragon_mma_m16n8k16_f16" : "dragon_mma_m16n8k16_bf16";
      for (bool trans_b : {false, true}) {
        table.emplace(fmt::format("mma_m16n8k16_{0}{0}f32{1}", t, trans_b ? "_trans_b" : ""),
                      [half, trans_b, mma_helper](const TileNest& n, WarpPlanContext& c, std::string& why) {
                        return plan_mma(n, c, why, half, half, 16, trans_b, mma_helper);
                      });
      }
    }
    // The tf32 family (f32 operands, k 8): fragment loads, then the rounding mma helpers
    // (cuda_mma_tf32.cc). A B stored [k, n] has no ldmatrix: .trans moves 16-bit elements,
    // not 32-bit ones.
    const ir::DataType f32 = ir::DataType::f32();
    table.emplace("mma_load_a_m16k8_f32", [](const TileNest& n, WarpPlanContext& c, std::string& why) {
      return plan_f32_fragment_load(n, c, why, 16, 8, "dragon_tf32_ldmatrix_a_m16k8", "dragon_tf32_load_a_m16k8");
    });
    // Operands staged by columns, f32 or 16-bit: per-lane loads, as for a [k, n] B. An A
    // stored [k, m]; a B stored [k, n] into a _trans_b mma's [n, k] fragment (the
    // registers of a [k, n] load).
    for (ir::DataType t : {f32, ir::DataType::bf16(), ir::DataType::f16()}) {
      const std::string name = ir::to_string(t);
      table.emplace("mma_load_a_m16k8_from_k8m16_" + name, [t](const TileNest& n, WarpPlanContext& c, std::string& why) {
        return plan_fragment_load(n, c, why, 16, 8, t, 0, "dragon_tf32_load_a_trans_k8m16", TileLayout::kTransposed);
      });
      table.emplace("mma_load_b_n8k8_from_k8n8_" + name, [t](const TileNest& n, WarpPlanContext& c, std::string& why) {
        return plan_fragment_load(n, c, why, 8, 8, t, 0, "dragon_tf32_load_b_k8n8", TileLayout::kTransposed);
      });
    }
    table.emplace("mma_load_b_k8n8_f32", [](const TileNest& n, WarpPlanContext& c, std::string& why) {
      return plan_f32_fragment_load(n, c, why, 8, 8, nullptr, "dragon_tf32_load_b_k8n8");
    });
    table.emplace("mma_load_b_trans_n8k8_f32", [](const TileNest& n, WarpPlanContext& c, std::string& why) {
      return plan_f32_fragment_load(n, c, why, 8, 8, "dragon_tf32_ldmatrix_b_trans_n8k8",
                                    "dragon_tf32_load_b_trans_n8k8");
    });
    // 16-bit operands of the tf32 mma (beside an f32 one): loaded by lane as they are (the
    // same per-lane helpers, templates), widened exactly to TF32 by the mixed mma helpers.
    for (ir::DataType narrow : {ir::DataType::bf16(), ir::DataType::f16()}) {
      const std::string t = ir::to_string(narrow);
      table.emplace("mma_load_a_m16k8_" + t, [narrow](const TileNest& n, WarpPlanContext& c, std::string& why) {
        return plan_fragment_load(n, c, why, 16, 8, narrow, 0, "dragon_tf32_load_a_m16k8");
      });
      table.emplace("mma_load_b_k8n8_" + t, [narrow](const TileNest& n, WarpPlanContext& c, std::string& why) {
        return plan_fragment_load(n, c, why, 8, 8, narrow, 0, "dragon_tf32_load_b_k8n8");
      });
      table.emplace("mma_load_b_trans_n8k8_" + t, [narrow](const TileNest& n, WarpPlanContext& c, std::string& why) {
        return plan_fragment_load(n, c, why, 8, 8, narrow, 0, "dragon_tf32_load_b_trans_n8k8");
      });
    }
    // Names as schedule::tf32_mma_intrin_name spells them (codegen does not include the
    // schedule; test_cuda_mma checks every registered mma intrinsic has a row here).
    const std::vector<std::pair<ir::DataType, ir::DataType>> operand_types = {
        {f32, f32}, {f32, ir::DataType::bf16()}, {f32, ir::DataType::f16()}, {ir::DataType::bf16(), f32},
        {ir::DataType::f16(), f32}};
    for (int passes : {1, 3}) {
      for (const auto& [a, b] : operand_types) {
        for (bool trans_b : {false, true}) {
          const bool mixed = a != b;
          const char* helper = tf32_mma_helper(passes, mixed);
          const std::string trans = trans_b ? "_trans_b" : "";
          std::string name = mixed ? fmt::format("mma_m16n8k8_{}_{}{}f32{}", passes == 1 ? "tf32" : "3xtf32",
                                                 ir::to_string(a), ir::to_string(b), trans)
                                   : fmt::format("mma_m16n8k8_{}f32{}", passes == 1 ? "tf32tf32" : "3xtf32", trans);
          table.emplace(std::move(name),
                        [a = a, b = b, trans_b, helper](const TileNest& n, WarpPlanContext& c, std::string& why) {
                          return plan_mma(n, c, why, a, b, 8, trans_b, helper);
                        });
        }
      }
    }
    add_wgmma_planners(table);
    return table;
  }();
  return planners;
}

std::string_view shared_address_prelude() {
  return "DRAGON_INLINE unsigned dragon_shared_address(const void* p) { return "
         "(unsigned)__cvta_generic_to_shared(p); }\n";
}

std::string_view mma_prelude() {
  // Fragments are per-lane arrays (cuda_warp_intrin.h's FragmentLayout); 16-bit elements
  // travel in pairs as the b32 registers PTX's fragments are made of. The B fragment is the
  // same registers whether it was loaded from [k, n] (ldmatrix .trans) or [n, k].
  return R"(DRAGON_INLINE void dragon_mma_fill_m16n8_f32(float* c, int lane) {
  (void)lane;
  c[0] = 0.0f; c[1] = 0.0f; c[2] = 0.0f; c[3] = 0.0f;
}
DRAGON_INLINE void dragon_mma_store_m16n8_f32(float* tile, int row_stride, const float* c, int lane) {
  const int g = lane / 4, t = lane % 4;
  tile[g * row_stride + 2 * t] = c[0];
  tile[g * row_stride + 2 * t + 1] = c[1];
  tile[(g + 8) * row_stride + 2 * t] = c[2];
  tile[(g + 8) * row_stride + 2 * t + 1] = c[3];
}
DRAGON_INLINE void dragon_ldmatrix_a_m16k16(void* fragment, const void* tile, int row_stride, int lane) {
  unsigned* r = (unsigned*)fragment;
  const unsigned short* row = (const unsigned short*)tile + (lane % 16) * row_stride + (lane / 16) * 8;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(dragon_shared_address(row)));
}
// A stored [k, m]: matrix q of a0..a3 (m 0-7 or 8-15, k 0-7 or 8-15) is 8 rows k of 8
// m each, read transposed, so lane l holds (m g, k 2t and 2t + 1) as from [m, k].
DRAGON_INLINE void dragon_ldmatrix_a_trans_k16m16(void* fragment, const void* tile, int row_stride, int lane) {
  unsigned* r = (unsigned*)fragment;
  const int q = lane / 8;
  const unsigned short* row = (const unsigned short*)tile + (lane % 8 + 8 * (q / 2)) * row_stride + 8 * (q % 2);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(dragon_shared_address(row)));
}
DRAGON_INLINE void dragon_ldmatrix_b_k16n8(void* fragment, const void* tile, int row_stride, int lane) {
  unsigned* r = (unsigned*)fragment;
  const unsigned short* row = (const unsigned short*)tile + (lane % 16) * row_stride;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1]) : "r"(dragon_shared_address(row)));
}
DRAGON_INLINE void dragon_ldmatrix_b_trans_n8k16(void* fragment, const void* tile, int row_stride, int lane) {
  unsigned* r = (unsigned*)fragment;
  const unsigned short* row = (const unsigned short*)tile + (lane % 8) * row_stride + ((lane / 8) % 2) * 8;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1]) : "r"(dragon_shared_address(row)));
}
DRAGON_INLINE void dragon_mma_m16n8k16_f16(float* c, const void* a, const void* b, int lane) {
  (void)lane;
  const unsigned* A = (const unsigned*)a;
  const unsigned* B = (const unsigned*)b;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
DRAGON_INLINE void dragon_mma_m16n8k16_bf16(float* c, const void* a, const void* b, int lane) {
  (void)lane;
  const unsigned* A = (const unsigned*)a;
  const unsigned* B = (const unsigned*)b;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
)";
}

}  // namespace dragon::codegen
