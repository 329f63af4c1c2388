// present_as_gemm (implicit_gemm.h): the variables' roles read from the block's regions,
// then reindex, transform_layout and transform_block_layout by IndexMap::fusing maps.
#include "space/implicit_gemm.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/substitute.h"
#include "dragon/ir/uses_var.h"
#include "dragon/lower/async_copy_source.h"
#include "dragon/schedule/index_map.h"
#include "dragon/schedule/schedule_error.h"
#include "space/block_analysis.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::IndexMap;
using Type = schedule::Schedule::BufferIndexType;

// Whether some index of `region` mentions `var`.
bool reads_var(const ir::BufferRegion& region, const ir::Var& var) {
  return std::any_of(region.region.begin(), region.region.end(), [&](const ir::Range& r) {
    return ir::uses_var(r.min, var.get()) || ir::uses_var(r.extent, var.get());
  });
}

// The positions among the block's reads of its two inputs, A then B (fewer when an input
// is read otherwise than once).
std::vector<int64_t> operand_read_indices(const ir::BlockNode* block) {
  std::vector<int64_t> read_index;
  for (const ir::BufferRegion& in : inputs_of(block)) {
    for (size_t r = 0; r < block->reads.size(); ++r) {
      if (block->reads[r].buffer.same_as(in.buffer)) read_index.push_back(static_cast<int64_t>(r));
    }
  }
  return read_index;
}

// The block's iteration variables by name and extent, and the groups batch, m, n, k.
struct Roles {
  enum Group : size_t { kBatch, kM, kN, kK, kGroups };
  std::vector<std::string> names;
  std::vector<int64_t> extents;
  std::vector<std::vector<size_t>> groups;  // batch, m, n, k: block positions
};

// The fusion map of the variables `used` (block positions, in order): the groups
// restricted to them, empty ones left out.
IndexMap restricted(const Roles& roles, const std::vector<size_t>& used) {
  std::vector<std::string> names;
  std::vector<int64_t> extents;
  std::vector<std::vector<size_t>> groups;
  for (size_t p : used) {
    names.push_back(roles.names[p]);
    extents.push_back(roles.extents[p]);
  }
  for (const std::vector<size_t>& group : roles.groups) {
    std::vector<size_t> kept;
    for (size_t p : group) {
      auto at = std::find(used.begin(), used.end(), p);
      if (at != used.end()) kept.push_back(static_cast<size_t>(at - used.begin()));
    }
    if (!kept.empty()) groups.push_back(std::move(kept));
  }
  return IndexMap::fusing(names, extents, groups);
}

}  // namespace

std::optional<ImplicitGemm> present_as_gemm(schedule::Schedule& sch, const std::string& name, KOrder k_order) {
  std::optional<BlockSite> site = find_block(sch.func(), name);
  if (!site || !is_reduction(site->block) || has_ordered_vars(site->block) || !has_trivial_bindings(*site)) {
    return std::nullopt;
  }
  const ir::BlockNode* b = site->block;
  if (b->writes.size() != 1 || site->loops.size() != b->iter_vars.size()) return std::nullopt;
  std::vector<ir::BufferRegion> inputs = inputs_of(b);
  if (inputs.size() != 2) return std::nullopt;
  const std::vector<int64_t> read_index = operand_read_indices(b);
  if (read_index.size() != 2) return std::nullopt;

  Roles roles;
  roles.groups.assign(Roles::kGroups, {});
  std::vector<size_t> a_used, b_used, c_used;
  for (size_t p = 0; p < b->iter_vars.size(); ++p) {
    const ir::IterVar& iv = b->iter_vars[p];
    std::optional<int64_t> extent = ir::as_const_int(iv.dom.extent);
    if (!extent || !ir::is_const_int(iv.dom.min, 0)) return std::nullopt;
    roles.names.push_back(iv.var.name());
    roles.extents.push_back(*extent);
    const bool in_a = reads_var(inputs[0], iv.var), in_b = reads_var(inputs[1], iv.var),
               in_c = reads_var(b->writes[0], iv.var);
    if (in_a) a_used.push_back(p);
    if (in_b) b_used.push_back(p);
    if (in_c) c_used.push_back(p);
    if (iv.kind == ir::IterKind::kReduce) {
      if (!(in_a && in_b) && *extent > 1) return std::nullopt;
      roles.groups[Roles::kK].push_back(p);
    } else if (in_a && in_b && *extent > 1) {
      // Read by both inputs: a batch of GEMMs when the output keeps it apart too (a split-K
      // GEMM's chunk, add_rfactor's partial sums), and only then.
      if (!in_c) return std::nullopt;
      roles.groups[Roles::kBatch].push_back(p);
    } else {
      roles.groups[in_b && !in_a ? Roles::kN : Roles::kM].push_back(p);
    }
  }
  if (roles.groups[Roles::kM].empty() || roles.groups[Roles::kN].empty() || roles.groups[Roles::kK].empty()) {
    return std::nullopt;
  }
  // Taps first: a reduction variable that some index of A shares with an m variable (a
  // kernel's row or column beside the output's) is a tap, the others are channels.
  bool taps_reordered = false;
  if (k_order == KOrder::kTapsOuter) {
    auto is_tap = [&](size_t p) {
      const ir::Var& v = b->iter_vars[p].var;
      return std::any_of(inputs[0].region.begin(), inputs[0].region.end(), [&](const ir::Range& r) {
        if (!ir::uses_var(r.min, v.get())) return false;
        return std::any_of(roles.groups[Roles::kM].begin(), roles.groups[Roles::kM].end(),
                           [&](size_t q) { return ir::uses_var(r.min, b->iter_vars[q].var.get()); });
      });
    };
    std::vector<size_t>& k = roles.groups[Roles::kK];
    std::vector<size_t> ordered = k;
    std::stable_partition(ordered.begin(), ordered.end(), is_tap);
    taps_reordered = ordered != k;
    if (!taps_reordered) return std::nullopt;
    k = std::move(ordered);
  }
  // The variable of the output's innermost index, when it is one (trivial bindings: its
  // block position names its group).
  bool output_follows_m = false;
  if (const auto* innermost = b->writes[0].region.back().min.as<ir::VarNode>()) {
    for (size_t p : roles.groups[Roles::kM]) output_follows_m |= b->iter_vars[p].var.get() == innermost;
  }

  schedule::Schedule attempt = sch.copy();
  BlockRV block = attempt.get_block(name);
  ImplicitGemm out;
  out.output_follows_m = output_follows_m;
  out.taps_outer = taps_reordered;
  out.a_copy = attempt.reindex(block, read_index[0], Type::kRead);
  out.b_copy = attempt.reindex(block, read_index[1], Type::kRead);
  out.c_back = attempt.reindex(block, 0, Type::kWrite);
  const IndexMap a_map = restricted(roles, a_used), b_map = restricted(roles, b_used), c_map = restricted(roles, c_used);
  attempt.transform_layout(out.a_copy, 0, Type::kWrite, a_map);
  attempt.transform_layout(out.b_copy, 0, Type::kWrite, b_map);
  attempt.transform_layout(*out.c_back, 0, Type::kRead, c_map);
  // The copies iterate over the new layouts too: writing A'[m, k] at distinct variables,
  // a copy inlines into its consumer.
  attempt.transform_block_layout(out.a_copy, a_map);
  attempt.transform_block_layout(out.b_copy, b_map);
  attempt.transform_block_layout(*out.c_back, c_map);
  std::vector<size_t> every(roles.names.size());
  for (size_t p = 0; p < every.size(); ++p) every[p] = p;
  attempt.transform_block_layout(block, restricted(roles, every));  // no batch: (m, n, k)
  sch = std::move(attempt);
  return out;
}

namespace {

// The element offset an operand copy (writing X'[.., s, k]) reads at a point (s, k), the
// variables before them (a batch) at 0, row-major over the source's shape; and the points
// at which the predicates below probe it: spread by the golden ratio's fractions (evenly
// spaced ones land on the ends of rows and planes together when the extents are products
// of them) and along the first run of each variable, long enough to cross a kernel's rows
// and channels.
class CopyAddresses {
 public:
  static std::optional<CopyAddresses> of(const schedule::Schedule& sch, BlockRV copy) {
    const ir::BlockNode* b = sch.get(copy);
    const auto* store = b->body.as<ir::BufferStoreNode>();
    if (store == nullptr || b->iter_vars.size() < 2) return std::nullopt;
    const ir::BufferLoadNode* load = lower::peel_zero_selects(store->value).load;
    if (load == nullptr || load->indices.size() != load->buffer->shape.size()) return std::nullopt;
    CopyAddresses out;
    int64_t stride = 1;
    for (size_t d = load->indices.size(); d-- > 0;) {
      ir::Expr term = ir::cast(ir::DataType::i64(), load->indices[d]) * stride;
      out.address_ = out.address_.defined() ? out.address_ + term : term;
      stride *= load->buffer->shape[d];
    }
    if (!out.address_.defined()) return std::nullopt;
    for (const ir::IterVar& iv : b->iter_vars) {
      std::optional<int64_t> e = ir::as_const_int(iv.dom.extent);
      if (!e) return std::nullopt;
      out.vars_.push_back(iv.var);
    }
    out.s_extent = *ir::as_const_int(b->iter_vars[b->iter_vars.size() - 2].dom.extent);
    out.k_extent = *ir::as_const_int(b->iter_vars.back().dom.extent);
    return out;
  }

  // Remembered, since a run's next point is the step its previous point checked.
  std::optional<int64_t> at(int64_t s, int64_t k) {
    if (auto it = addresses_.find({s, k}); it != addresses_.end()) return it->second;
    ir::VarMap values;
    const size_t n = vars_.size();
    for (size_t v = 0; v < n; ++v) {
      const int64_t x = v == n - 2 ? s : v == n - 1 ? k : 0;
      values[vars_[v].get()] = ir::make_const(vars_[v].dtype(), static_cast<double>(x));
    }
    return addresses_[{s, k}] = ir::as_const_int(ir::simplify(ir::substitute(address_, values)));
  }

  std::vector<std::pair<int64_t, int64_t>> probe_points() const {
    constexpr int kPoints = 8;
    constexpr int64_t kRun = 512;
    auto spread = [](int i, int64_t extent) {
      const double golden = 0.6180339887498949;
      const double fraction = static_cast<double>(i) * golden - std::floor(static_cast<double>(i) * golden);
      return std::min(extent - 1, static_cast<int64_t>(fraction * static_cast<double>(extent)));
    };
    std::vector<std::pair<int64_t, int64_t>> points;
    for (int i = 0; i < kPoints; ++i) {
      for (int j = 0; j < kPoints; ++j) points.emplace_back(spread(i, s_extent), spread(j, k_extent));
    }
    for (int64_t r = 0; r < kRun; ++r) {
      points.emplace_back(std::min(r, s_extent - 1), spread(3, k_extent));
      points.emplace_back(spread(3, s_extent), std::min(r, k_extent - 1));
    }
    return points;
  }

  int64_t s_extent = 1, k_extent = 1;

 private:
  ir::Expr address_;
  std::vector<ir::Var> vars_;
  std::map<std::pair<int64_t, int64_t>, std::optional<int64_t>> addresses_;
};

}  // namespace

bool copy_reads_transposed(const schedule::Schedule& sch, BlockRV copy) {
  std::optional<CopyAddresses> addresses = CopyAddresses::of(sch, copy);
  if (!addresses) return false;
  // Every step of s checked must move the address by one element and every step of k by
  // one and the same other amount: the copy reads a transposed matrix.
  std::optional<int64_t> k_step;
  for (const auto& [s, k] : addresses->probe_points()) {
    std::optional<int64_t> here = addresses->at(s, k);
    if (!here) return false;
    if (s + 1 < addresses->s_extent) {
      std::optional<int64_t> next = addresses->at(s + 1, k);
      if (!next || *next != *here + 1) return false;
    }
    if (k + 1 < addresses->k_extent) {
      std::optional<int64_t> next = addresses->at(s, k + 1);
      if (!next || *next - *here == 1 || (k_step && *k_step != *next - *here)) return false;
      k_step = *next - *here;
    }
  }
  return k_step.has_value();
}

bool copy_is_unguarded(const schedule::Schedule& sch, BlockRV copy) {
  const auto* store = sch.get(copy)->body.as<ir::BufferStoreNode>();
  return store != nullptr && store->value.as<ir::BufferLoadNode>() != nullptr;
}

bool copy_reads_along_s(const schedule::Schedule& sch, BlockRV copy) {
  std::optional<CopyAddresses> addresses = CopyAddresses::of(sch, copy);
  if (!addresses || addresses->s_extent < 2) return false;
  int64_t steps = 0, unit = 0;
  for (const auto& [s, k] : addresses->probe_points()) {
    if (s + 1 >= addresses->s_extent) continue;
    std::optional<int64_t> here = addresses->at(s, k), next = addresses->at(s + 1, k);
    if (!here || !next) return false;
    ++steps;
    if (*next == *here + 1) ++unit;
  }
  return steps > 0 && unit * 8 >= steps * 7;
}

std::optional<TensorCoreGemm> tensor_core_gemm(const schedule::Schedule& sch, const std::string& block, KOrder k_order) {
  std::optional<BlockSite> site = find_block(sch.func(), block);
  if (!site || site->block->annotations.count("meta_schedule.tiling_structure") != 0) return std::nullopt;
  for (const ir::ForNode* l : site->loops) {
    if (l->for_kind != ir::ForKind::kSerial || !l->annotations.empty()) return std::nullopt;
  }
  TensorCoreGemm out{sch.copy(), {}, std::nullopt, std::nullopt, std::nullopt};
  if (std::optional<GemmMatch> match = match_gemm(*site)) {
    if (k_order == KOrder::kTapsOuter) return std::nullopt;  // a plain GEMM has no taps
    out.match = *match;
    out.epilogue = epilogue_of(sch.func(), block);
    return out;
  }
  try {
    out.implicit = present_as_gemm(out.schedule, block, k_order);
  } catch (const schedule::ScheduleError&) {
    return std::nullopt;
  }
  if (!out.implicit) return std::nullopt;
  out.copies = out.implicit;
  site = find_block(out.schedule.func(), block);
  std::optional<GemmMatch> match = site ? match_gemm(*site) : std::nullopt;
  if (!match) return std::nullopt;
  out.match = *match;
  return out;
}

std::optional<std::string> epilogue_of(const ir::PrimFunc& func, const std::string& gemm) {
  std::optional<BlockSite> producer = find_block(func, gemm);
  if (!producer || producer->block->writes.size() != 1 || producer->parent == nullptr) return std::nullopt;
  const ir::Buffer& output = producer->block->writes[0].buffer;
  const bool intermediate = std::any_of(producer->parent->alloc_buffers.begin(), producer->parent->alloc_buffers.end(),
                                        [&](const ir::Buffer& a) { return a.same_as(output); });
  if (!intermediate) return std::nullopt;
  // Whether `region` indexes its buffer at exactly `block`'s iteration variables, in order.
  auto at_own_variables = [](const ir::BufferRegion& region, const ir::BlockNode* block) {
    if (region.region.size() != block->iter_vars.size()) return false;
    for (size_t d = 0; d < region.region.size(); ++d) {
      const auto* var = region.region[d].min.as<ir::VarNode>();
      if (var == nullptr || var != block->iter_vars[d].var.get() || !ir::is_const_int(region.region[d].extent, 1)) {
        return false;
      }
    }
    return true;
  };
  std::optional<std::string> consumer;
  for (const std::string& name : block_names(func)) {
    if (name == gemm) continue;
    std::optional<BlockSite> site = find_block(func, name);
    if (!site) continue;
    const ir::BlockNode* b = site->block;
    const bool reads = std::any_of(b->reads.begin(), b->reads.end(),
                                   [&](const ir::BufferRegion& r) { return r.buffer.same_as(output); });
    if (!reads) continue;
    if (consumer) return std::nullopt;  // a second reader
    if (!is_spatial(b) || b->writes.size() != 1 || !has_trivial_bindings(*site)) return std::nullopt;
    for (const ir::BufferRegion& r : b->reads) {
      if (r.buffer.same_as(output) && !at_own_variables(r, b)) return std::nullopt;
    }
    if (!at_own_variables(b->writes[0], b)) return std::nullopt;
    consumer = name;
  }
  return consumer;
}

schedule::LoopRV stage_output_tile(schedule::Schedule& s, BlockRV c_shared, BlockRV c_warp, schedule::LoopRV block_loop,
                                   const TensorCoreGemm& gemm) {
  s.reverse_compute_at(c_shared, block_loop, true, -1);
  const bool copied_back = gemm.copies && gemm.copies->c_back;
  s.reverse_compute_inline(copied_back ? *gemm.copies->c_back : s.get_block(gemm.epilogue.value()));
  std::vector<schedule::LoopRV> loops = s.get_loops(c_shared);
  schedule::LoopRV rows = loops[loops.size() - 2], cols = loops[loops.size() - 1];
  if (copied_back && gemm.copies->output_follows_m) {
    s.reorder({cols, rows});
    s.storage_align(c_warp, 0, -2, 32, 1);
    return s.fuse({cols, rows});
  }
  s.storage_align(c_warp, 0, -2, 32, 8);
  return s.fuse({rows, cols});
}

std::optional<schedule::Schedule> staged_sketch_or_plain(
    const TensorCoreGemm& gemm, const lower::Target& target,
    const std::function<void(schedule::Schedule& s, bool staged)>& sketch) {
  const bool foldable = (gemm.copies && gemm.copies->c_back) || gemm.epilogue;
  for (bool staged : foldable ? std::vector<bool>{true, false} : std::vector<bool>{false}) {
    schedule::Schedule s = gemm.schedule.copy();
    try {
      sketch(s, staged);
    } catch (const schedule::ScheduleError&) {
      continue;
    }
    if (tensorizes(s, target)) return s;
  }
  return std::nullopt;
}

bool pad_to_tiles(TensorCoreGemm& gemm, const std::string& block, int64_t tile_i, int64_t tile_j, int64_t tile_k,
                  bool copy_operands) {
  const GemmMatch& m = gemm.match;
  auto rounded = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile * tile; };
  const int64_t i = rounded(m.i_extent, tile_i), j = rounded(m.j_extent, tile_j), k = rounded(m.k_extent, tile_k);
  const bool whole = i == m.i_extent && j == m.j_extent && k == m.k_extent;
  if (whole && (!copy_operands || gemm.copies)) return true;
  const double work = static_cast<double>(i) * static_cast<double>(j) * static_cast<double>(k) /
                      (static_cast<double>(m.i_extent) * static_cast<double>(m.j_extent) * static_cast<double>(m.k_extent));
  if (work > kMaxPaddedWork) return false;

  schedule::Schedule attempt = gemm.schedule.copy();
  std::optional<ImplicitGemm> copies = gemm.copies;
  try {
    BlockRV b = attempt.get_block(block);
    std::optional<BlockSite> site = find_block(attempt.func(), block);
    if (!site) return false;
    if (!copies) {
      // A plain GEMM: pad_einsum grows intermediates, so the operands get copies.
      const ir::BlockNode* node = site->block;
      const std::vector<int64_t> read_index = operand_read_indices(node);
      if (read_index.size() != 2) return false;
      const ir::Buffer& output = node->writes[0].buffer;
      const bool output_allocated =
          site->parent != nullptr &&
          std::any_of(site->parent->alloc_buffers.begin(), site->parent->alloc_buffers.end(),
                      [&](const ir::Buffer& a) { return a.same_as(output); });
      ImplicitGemm made;
      made.a_copy = attempt.reindex(b, read_index[0], Type::kRead);
      made.b_copy = attempt.reindex(b, read_index[1], Type::kRead);
      if (!output_allocated) made.c_back = attempt.reindex(b, 0, Type::kWrite);
      copies = made;
      site = find_block(attempt.func(), block);
      if (!site) return false;
    }
    // One padding per iteration variable, by the loop binding it (trivial bindings).
    std::vector<int64_t> padding;
    for (size_t p = 0; p < site->block->iter_vars.size(); ++p) {
      int64_t pad = 1;
      for (size_t l = 0; l < site->loops.size(); ++l) {
        if (site->realize->iter_values[p].get() != site->loops[l]->loop_var.get()) continue;
        if (l == m.i) pad = tile_i;
        if (l == m.j) pad = tile_j;
        if (l == m.k) pad = tile_k;
      }
      padding.push_back(pad);
    }
    if (!whole) attempt.pad_einsum(b, padding);
  } catch (const schedule::ScheduleError&) {
    return false;
  }
  std::optional<BlockSite> site = find_block(attempt.func(), block);
  std::optional<GemmMatch> match = site ? match_gemm(*site) : std::nullopt;
  if (!match || match->i_extent % tile_i != 0 || match->j_extent % tile_j != 0 || match->k_extent % tile_k != 0) {
    return false;
  }
  gemm.schedule = std::move(attempt);
  gemm.match = *match;
  gemm.copies = copies;
  gemm.epilogue.reset();  // it reads the valid region of the grown intermediate, not the tiles
  return true;
}

}  // namespace dragon::search
