// DecisionSampler (decision_sampler.h): the trace is read once for the tiles, the
// categoricals and the product constraints of the loops bound to threads; draws are
// checked against them before any replay.
#include "space/decision_sampler.h"

#include "dragon/ir/op.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/tensor_intrin.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>

namespace dragon::search {

using schedule::Arg;
using schedule::Instruction;
using schedule::InstructionKind;
using schedule::RandomVar;
using schedule::RVType;

namespace {

const RandomVar* rv_of(const Arg& arg) { return arg.as<RandomVar>(); }

}  // namespace

DecisionSampler::DecisionSampler(const schedule::Trace& sketch, const ir::PrimFunc& func, const lower::Target& target) {
  const std::vector<Instruction>& insts = sketch.instructions();
  size_t end = sketch.postproc_start().value_or(insts.size());
  std::map<int64_t, Factor> factor_of_value;              // ExprRV id -> where it comes from
  std::map<int64_t, std::optional<std::vector<Factor>>> factors_of_loop;  // nullopt: unknown
  struct Group {
    std::string tag;
    std::vector<Factor> factors;
    int64_t block = -1;  // the tiled block whose tiling made the binding, if any
  };
  std::vector<Group> groups;
  int64_t tiling_block = -1;
  std::map<int64_t, int64_t> low, high;
  std::map<int64_t, int64_t> tensorized;  // block RV id -> lanes running one tile (128 for wgmma's warpgroup)
  const int64_t warp = target.warp_size > 0 ? target.warp_size : 32;

  for (size_t i = 0; i < end; ++i) {
    const Instruction& inst = insts[i];
    switch (inst.kind) {
      case InstructionKind::SamplePerfectTile: {
        Tile t;
        t.instruction = i;
        t.n = static_cast<int>(inst.attrs.size() > 0 ? inst.attrs[0].int_or(1) : 1);
        t.max_innermost = inst.attrs.size() > 1 ? inst.attrs[1].int_or(-1) : -1;
        std::optional<Arg> recorded = sketch.decision(i);
        const auto* list = recorded ? recorded->as<Arg::List>() : nullptr;
        if (list == nullptr) break;  // no extent known: the replay samples it
        for (const Arg& f : *list) t.extent *= f.int_or(1);
        for (size_t k = 0; k < inst.outputs.size(); ++k) {
          factor_of_value[inst.outputs[k].id] = Factor{static_cast<int>(tiles_.size()), static_cast<int>(k), -1, 1};
        }
        tiles_.push_back(t);
        break;
      }
      case InstructionKind::SampleCategorical: {
        Categorical c;
        c.instruction = i;
        if (inst.attrs.size() < 2) break;
        const auto* candidates = inst.attrs[0].as<Arg::List>();
        const auto* probs = inst.attrs[1].as<Arg::List>();
        if (candidates == nullptr || probs == nullptr) break;
        for (const Arg& a : *candidates) c.candidates.push_back(a.int_or(0));
        for (const Arg& a : *probs) {
          if (const auto* d = a.as<double>()) c.probs.push_back(*d);
          else c.probs.push_back(static_cast<double>(a.int_or(0)));
        }
        if (!inst.outputs.empty()) {
          factor_of_value[inst.outputs[0].id] = Factor{-1, -1, static_cast<int>(categoricals_.size()), 1};
        }
        categoricals_.push_back(std::move(c));
        break;
      }
      case InstructionKind::Split: {
        for (size_t k = 0; k < inst.outputs.size() && k + 1 < inst.inputs.size(); ++k) {
          const Arg& f = inst.inputs[k + 1];
          std::optional<std::vector<Factor>> known;
          if (const RandomVar* rv = rv_of(f); rv != nullptr && rv->type == RVType::kExpr) {
            auto it = factor_of_value.find(rv->id);
            if (it != factor_of_value.end()) known = std::vector<Factor>{it->second};
          } else if (const auto* c = f.as<int64_t>()) {
            known = std::vector<Factor>{Factor{-1, -1, -1, *c}};
          }
          factors_of_loop[inst.outputs[k].id] = known;
        }
        break;
      }
      case InstructionKind::Fuse: {
        std::optional<std::vector<Factor>> fused = std::vector<Factor>{};
        for (const Arg& in : inst.inputs) {
          const RandomVar* rv = rv_of(in);
          auto it = rv != nullptr ? factors_of_loop.find(rv->id) : factors_of_loop.end();
          if (it == factors_of_loop.end() || !it->second) {
            fused.reset();
            break;
          }
          fused->insert(fused->end(), it->second->begin(), it->second->end());
        }
        if (!inst.outputs.empty()) factors_of_loop[inst.outputs[0].id] = fused;
        break;
      }
      case InstructionKind::Bind: {
        if (inst.inputs.empty() || inst.attrs.empty()) break;
        const RandomVar* loop = rv_of(inst.inputs[0]);
        const auto* tag = inst.attrs[0].as<std::string>();
        if (loop == nullptr || tag == nullptr) break;
        auto it = factors_of_loop.find(loop->id);
        if (it == factors_of_loop.end() || !it->second) break;
        if (tag->rfind("threadIdx.", 0) == 0 || tag->rfind("vthread.", 0) == 0) {
          groups.push_back({*tag, *it->second, tiling_block});
        }
        break;
      }
      case InstructionKind::Annotate: {
        if (inst.inputs.size() < 2 || inst.attrs.empty()) break;
        const RandomVar* target_rv = rv_of(inst.inputs[0]);
        const auto* key = inst.attrs[0].as<std::string>();
        if (target_rv == nullptr || target_rv->type != RVType::kBlock || key == nullptr) break;
        if (*key == "meta_schedule.tiling_structure") tiling_block = target_rv->id;
        if (*key == "meta_schedule.thread_extent_low_inclusive") low[target_rv->id] = inst.inputs[1].int_or(1);
        if (*key == "meta_schedule.thread_extent_high_inclusive") {
          high[target_rv->id] = inst.inputs[1].int_or(0);
          tiling_block = -1;  // the tiling's bindings end with its bounds
        }
        if (*key == "meta_schedule.auto_tensorize") {
          const auto* intrin = inst.inputs[1].as<std::string>();
          tensorized[target_rv->id] = intrin != nullptr ? schedule::tensor_intrin_lanes(*intrin) : warp;
        }
        break;
      }
      default:
        break;
    }
  }

  const int64_t max_threads = target.max_threads_per_block > 0 ? target.max_threads_per_block : 1024;
  const int64_t max_vthreads = target.max_vthreads > 0 ? target.max_vthreads : 8;
  std::map<int64_t, Constraint> per_block;  // a tiled block's threadIdx bindings together
  for (const Group& g : groups) {
    bool thread = g.tag.rfind("threadIdx.", 0) == 0;
    int64_t lanes = thread && g.block >= 0 && tensorized.count(g.block) != 0 ? tensorized.at(g.block) : 1;
    constraints_.push_back({g.factors, lanes, 1, thread ? max_threads : max_vthreads});
    if (thread && g.block >= 0) {
      Constraint& c = per_block[g.block];
      c.factors.insert(c.factors.end(), g.factors.begin(), g.factors.end());
      c.lanes = lanes;
    }
  }
  for (auto& [block, c] : per_block) {
    c.low = low.count(block) != 0 ? low[block] : 1;
    c.high = high.count(block) != 0 && high[block] > 0 ? high[block] : max_threads;
    constraints_.push_back(c);
  }
  if (target.is_gpu() && target.max_shared_memory_per_block > 0) {
    add_footprint_budgets(sketch, end, func, factor_of_value, tensorized, target);
  }
  // Pieces a thread or virtual-thread count reads stay as drawn when a footprint is shrunk:
  // shrinking them could break the count.
  for (const Constraint& c : constraints_) {
    for (const Factor& f : c.factors) {
      if (f.tile >= 0) counted_pieces_.insert({f.tile, f.slot});
    }
  }
}

void DecisionSampler::add_footprint_budgets(const schedule::Trace& sketch, size_t end, const ir::PrimFunc& func,
                                         const std::map<int64_t, Factor>& factor_of_value,
                                         const std::map<int64_t, int64_t>& tensorized, const lower::Target& target) {
  const std::vector<Instruction>& insts = sketch.instructions();
  // A loop of a tiled nest: a piece of an original loop (the block's iteration variable
  // `var`), `extent` and `stride` (the product of the pieces inside it) in draws.
  struct Piece {
    int64_t block = -1;
    int var = -1;
    Product extent, stride;
  };
  std::map<int64_t, std::string> block_names;      // block RV id -> name
  std::map<int64_t, std::vector<int64_t>> fused;   // loop RV id -> piece ids it fuses (itself if a piece)
  std::map<int64_t, Piece> pieces;                 // loop RV id -> piece
  std::map<int64_t, std::vector<int64_t>> order;   // block RV id -> pieces, outermost first
  std::map<int64_t, std::string> bound;            // piece id -> thread tag
  struct Pending {
    int64_t block = -1;
    size_t read = 0;
    int64_t lanes = 1;  // register arrays: the lanes sharing one (32 a warp's fragment)
  };
  std::map<int64_t, Pending> copies;               // copy block RV id -> what it copies
  std::map<int64_t, Pending> accumulators;         // local or warp write cache RV id -> whose write
  // A tiled block's output staged in shared memory (a tensor-core rule's write cache):
  // shared write cache RV id -> whose write, and the block that writes that cache's buffer
  // (the accumulator's copy made after it), whose storage_align pads its rows.
  std::map<int64_t, Pending> shared_outputs;
  std::map<int64_t, int64_t> shared_output_writer;
  std::map<int64_t, Pending> fragments;            // warp read cache RV id -> what it reads
  // A rule that presents a block in another layout first (implicit GEMM: ReIndex,
  // TransformLayout, TransformBlockLayout; whole tiles: PadEinsum; split-K: RFactor, whose
  // partial-sums block the function does not have; chunked scans: ChunkScan, whose totals
  // and carries it does not have either) looks its loops up in the function
  // those leave: that is the "unscheduled" nest the pieces below start from.
  ir::PrimFunc shaped = func;
  size_t last_layout = end;
  for (size_t i = 0; i < end; ++i) {
    const InstructionKind k = insts[i].kind;
    if (k == InstructionKind::ReIndex || k == InstructionKind::TransformLayout ||
        k == InstructionKind::TransformBlockLayout || k == InstructionKind::PadEinsum || k == InstructionKind::RFactor ||
        k == InstructionKind::ChunkScan) {
      last_layout = i;
    }
  }
  if (last_layout < end) {
    schedule::Trace prefix;
    for (size_t i = 0; i <= last_layout; ++i) prefix.append(insts[i], sketch.decision(i));
    try {
      schedule::Schedule replayed(func);
      prefix.apply_to(replayed);
      shaped = replayed.func();
    } catch (const std::exception&) {
      // The budget then reads the blocks as the function has them (a looser bound).
    }
  }
  std::map<int64_t, FootprintBudget> budgets;      // tiled block RV id -> its shared copies
  // Where each shared copy was placed, to apply its row padding and its loop's pipeline
  // depth once the trace has given them (both come after the compute_at).
  struct SharedCopySite {
    int64_t block = -1;
    size_t index = 0;
    int64_t copy_block = -1, at_loop = -1;
  };
  std::vector<SharedCopySite> shared_copy_sites;
  std::map<int64_t, std::tuple<int64_t, int64_t, int64_t>> row_aligns;  // copy block -> (axis, factor, offset)
  std::map<int64_t, Factor> pipeline_depths;                            // loop RV id -> its depth
  std::map<int64_t, FootprintBudget> registers;    // tiled block RV id -> its accumulator and fragments
  // The lanes holding one instance of a tiled block's "warp" buffer: a warp's, or wgmma's
  // warpgroup's.
  auto warp_lanes = [&](int64_t block) {
    auto it = tensorized.find(block);
    return it != tensorized.end() ? it->second : (target.warp_size > 0 ? target.warp_size : 32);
  };
  auto product_of = [&](const Product& p) {
    int64_t v = 1;
    for (const Factor& f : p) {
      if (f.tile >= 0 || f.categorical >= 0) return std::optional<int64_t>();
      v *= f.constant;
    }
    return std::optional<int64_t>(v);
  };
  // The footprint of one region of a tiled block (read `index`, or its write) held at loop
  // `at`: the split pieces after that loop, and those before it bound to a tag `above_too`
  // accepts. Nothing when the nest or the indices are not known (affine in the pieces).
  auto footprint_at = [&](int64_t block, size_t index, bool written, int64_t at,
                          const std::function<bool(const std::string&)>& above_too) -> std::optional<Copy> {
    auto nest = order.find(block);
    if (nest == order.end() || block_names.count(block) == 0 || fused.count(at) == 0) return std::nullopt;
    std::optional<BlockSite> site = find_block(shaped, block_names[block]);
    if (!site) return std::nullopt;
    const std::vector<ir::BufferRegion>& regions = written ? site->block->writes : site->block->reads;
    if (index >= regions.size()) return std::nullopt;
    const ir::BufferRegion& region = regions[index];
    const std::vector<int64_t>& at_pieces = fused[at];
    size_t position = nest->second.size();
    for (size_t k = 0; k < nest->second.size(); ++k) {
      if (std::find(at_pieces.begin(), at_pieces.end(), nest->second[k]) != at_pieces.end()) position = k;
    }
    if (position == nest->second.size()) return std::nullopt;
    Copy c;
    c.bytes = region.buffer->dtype.bytes();
    for (const ir::Range& range : region.region) {
      std::vector<Term> dim;
      for (size_t k = 0; k < nest->second.size(); ++k) {
        auto tag = bound.find(nest->second[k]);
        if (k <= position && (tag == bound.end() || !above_too(tag->second))) continue;
        const Piece& piece = pieces[nest->second[k]];
        std::optional<int64_t> coef = linear_coefficient(range.min, site->block->iter_vars[piece.var].var);
        if (!coef) return std::nullopt;
        if (*coef != 0) dim.push_back(Term{*coef < 0 ? -*coef : *coef, piece.extent, piece.stride});
      }
      c.dims.push_back(std::move(dim));
    }
    return c;
  };
  // A register array of a tiled block held at loop `at`: the region below it (and its
  // virtual threads' copies), a lane's share where `pending` is a warp's, in the block's
  // register budget (bytes of 32-bit registers).
  auto add_register_array = [&](const Pending& pending, bool written, int64_t at) {
    std::optional<Copy> c = footprint_at(pending.block, pending.read, written, at,
                                         [](const std::string& tag) { return tag.rfind("vthread", 0) == 0; });
    if (!c) return;
    c->lanes = pending.lanes;
    FootprintBudget& budget = registers[pending.block];
    budget.limit = (kMaxRegistersPerThread - kRegisterOverhead) * 4;
    budget.copies.push_back(std::move(*c));
  };
  for (size_t i = 0; i < end; ++i) {
    const Instruction& inst = insts[i];
    switch (inst.kind) {
      case InstructionKind::GetBlock:
        if (!inst.attrs.empty() && !inst.outputs.empty()) {
          if (const auto* name = inst.attrs[0].as<std::string>()) block_names[inst.outputs[0].id] = *name;
        }
        break;
      case InstructionKind::GetLoops: {
        const RandomVar* b = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        if (b == nullptr || block_names.count(b->id) == 0 || order.count(b->id) != 0) break;
        // The block's first lookup: its loops are still the unscheduled nest, one per
        // iteration variable it binds directly.
        std::optional<BlockSite> site = find_block(shaped, block_names[b->id]);
        if (!site || site->loops.size() != inst.outputs.size()) break;
        for (size_t k = 0; k < inst.outputs.size(); ++k) {
          int var = -1;
          for (size_t v = 0; v < site->realize->iter_values.size(); ++v) {
            if (site->realize->iter_values[v].get() == site->loops[k]->loop_var.get()) var = static_cast<int>(v);
          }
          std::optional<int64_t> extent = ir::as_const_int(site->loops[k]->extent);
          if (var < 0 || !extent) continue;
          pieces[inst.outputs[k].id] = Piece{b->id, var, {Factor{-1, -1, -1, *extent}}, {}};
          fused[inst.outputs[k].id] = {inst.outputs[k].id};
        }
        break;
      }
      case InstructionKind::Split: {
        const RandomVar* loop = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        auto parent = loop != nullptr ? pieces.find(loop->id) : pieces.end();
        if (parent == pieces.end()) break;
        std::vector<std::optional<Factor>> factors;
        int inferred = -1;
        for (size_t k = 1; k < inst.inputs.size(); ++k) {
          const Arg& f = inst.inputs[k];
          if (f.is_none()) {
            inferred = static_cast<int>(k - 1);
            factors.emplace_back();
          } else if (const auto* c = f.as<int64_t>()) {
            factors.emplace_back(Factor{-1, -1, -1, *c});
          } else if (const RandomVar* rv = rv_of(f); rv != nullptr && factor_of_value.count(rv->id) != 0) {
            factors.emplace_back(factor_of_value.at(rv->id));
          } else {
            factors.emplace_back();
            inferred = -2;  // unknown
          }
        }
        if (inferred == -2) break;
        if (inferred >= 0) {
          // The inferred factor: the parent's (constant) extent over the others.
          std::optional<int64_t> whole = product_of(parent->second.extent);
          int64_t others = 1;
          for (const auto& f : factors) {
            if (f && (f->tile >= 0 || f->categorical >= 0)) whole.reset();
            if (f) others *= f->constant;
          }
          if (!whole || others == 0) break;
          factors[inferred] = Factor{-1, -1, -1, (*whole + others - 1) / others};
        }
        Piece p = parent->second;
        for (size_t k = 0; k < factors.size() && k < inst.outputs.size(); ++k) {
          Piece piece{p.block, p.var, {*factors[k]}, p.stride};
          for (size_t j = k + 1; j < factors.size(); ++j) piece.stride.push_back(*factors[j]);
          pieces[inst.outputs[k].id] = piece;
          fused[inst.outputs[k].id] = {inst.outputs[k].id};
        }
        break;
      }
      case InstructionKind::Reorder: {
        std::vector<int64_t> ids;
        int64_t block = -1;
        for (const Arg& a : inst.inputs) {
          const RandomVar* rv = rv_of(a);
          if (rv == nullptr || pieces.count(rv->id) == 0) {
            ids.clear();
            break;
          }
          ids.push_back(rv->id);
          block = pieces[rv->id].block;
        }
        if (!ids.empty()) order[block] = ids;
        break;
      }
      case InstructionKind::Fuse: {
        std::vector<int64_t> members;
        for (const Arg& a : inst.inputs) {
          const RandomVar* rv = rv_of(a);
          if (rv == nullptr || fused.count(rv->id) == 0) {
            members.clear();
            break;
          }
          members.insert(members.end(), fused[rv->id].begin(), fused[rv->id].end());
        }
        if (!members.empty() && !inst.outputs.empty()) fused[inst.outputs[0].id] = members;
        break;
      }
      case InstructionKind::Bind: {
        const RandomVar* loop = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        const auto* tag = inst.attrs.empty() ? nullptr : inst.attrs[0].as<std::string>();
        if (loop == nullptr || tag == nullptr || fused.count(loop->id) == 0) break;
        for (int64_t piece : fused[loop->id]) bound[piece] = *tag;
        break;
      }
      case InstructionKind::CacheRead: {
        const RandomVar* b = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        const auto* scope = inst.attrs.size() > 1 ? inst.attrs[1].as<std::string>() : nullptr;
        if (b == nullptr || scope == nullptr || inst.outputs.empty()) break;
        const size_t read = static_cast<size_t>(inst.attrs[0].int_or(0));
        if (scope->rfind("shared", 0) == 0) copies[inst.outputs[0].id] = Pending{b->id, read, 1};
        if (*scope == "warp") fragments[inst.outputs[0].id] = Pending{b->id, read, warp_lanes(b->id)};
        break;
      }
      case InstructionKind::CacheWrite: {
        const RandomVar* b = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        const auto* scope = inst.attrs.size() > 1 ? inst.attrs[1].as<std::string>() : nullptr;
        if (b == nullptr || scope == nullptr || inst.outputs.empty()) break;
        if (scope->rfind("shared", 0) == 0) {
          shared_outputs[inst.outputs[0].id] = Pending{b->id, static_cast<size_t>(inst.attrs[0].int_or(0)), 1};
          break;
        }
        if (*scope != "local" && *scope != "warp") break;
        // The block's write goes to this cache now, which writes the staged buffer.
        for (auto& [staged, pending] : shared_outputs) {
          if (pending.block == b->id && shared_output_writer.count(staged) == 0) {
            shared_output_writer[staged] = inst.outputs[0].id;
          }
        }
        accumulators[inst.outputs[0].id] =
            Pending{b->id, static_cast<size_t>(inst.attrs[0].int_or(0)), *scope == "warp" ? warp_lanes(b->id) : 1};
        break;
      }
      case InstructionKind::ReverseComputeAt: {
        // A tiled block's accumulator written back at one of its loops: a thread holds the
        // part of the block's write below that loop, for each of its virtual threads, or
        // its lane's share of a warp's ("warp" scope: mma fragments) (verify_gpu_code's
        // count of register arrays, which past 255 registers spill).
        const RandomVar* cache = inst.inputs.size() < 2 ? nullptr : rv_of(inst.inputs[0]);
        const RandomVar* at = inst.inputs.size() < 2 ? nullptr : rv_of(inst.inputs[1]);
        if (cache != nullptr && at != nullptr && shared_outputs.count(cache->id) != 0) {
          // A staged output tile: the block's whole tile below that loop, in shared memory
          // beside the operands' copies; its rows padded by its writer's storage_align.
          const Pending& pending = shared_outputs[cache->id];
          std::optional<Copy> c = footprint_at(pending.block, pending.read, /*written=*/true, at->id,
                                               [](const std::string& tag) { return tag.rfind("blockIdx.", 0) != 0; });
          if (!c) break;
          c->after_the_others = true;
          FootprintBudget& budget = budgets[pending.block];
          budget.limit = target.max_shared_memory_per_block;
          budget.copies.push_back(std::move(*c));
          auto writer = shared_output_writer.find(cache->id);
          shared_copy_sites.push_back({pending.block, budget.copies.size() - 1,
                                       writer != shared_output_writer.end() ? writer->second : cache->id, at->id});
          break;
        }
        if (cache == nullptr || at == nullptr || accumulators.count(cache->id) == 0) break;
        add_register_array(accumulators[cache->id], /*written=*/true, at->id);
        break;
      }
      case InstructionKind::ComputeAt: {
        // A shared copy computed at one of a tiled block's loops: it covers the pieces
        // after that loop and the thread pieces before it (other threads' reads).
        const RandomVar* copy = inst.inputs.size() < 2 ? nullptr : rv_of(inst.inputs[0]);
        const RandomVar* at = inst.inputs.size() < 2 ? nullptr : rv_of(inst.inputs[1]);
        if (copy != nullptr && at != nullptr && fragments.count(copy->id) != 0) {
          // An operand's mma fragments loaded at one of its loops: a warp holds the pieces
          // after it, a lane its share, in registers beside the accumulator.
          add_register_array(fragments[copy->id], /*written=*/false, at->id);
          break;
        }
        if (copy == nullptr || at == nullptr || copies.count(copy->id) == 0) break;
        const Pending& pending = copies[copy->id];
        std::optional<Copy> c = footprint_at(pending.block, pending.read, /*written=*/false, at->id,
                                             [](const std::string& tag) { return tag.rfind("blockIdx.", 0) != 0; });
        if (!c) break;
        FootprintBudget& budget = budgets[pending.block];
        budget.limit = target.max_shared_memory_per_block;
        budget.copies.push_back(std::move(*c));
        shared_copy_sites.push_back({pending.block, budget.copies.size() - 1, copy->id, at->id});
        break;
      }
      case InstructionKind::StorageAlign: {
        // Rows a shared copy pads (after its compute_at in the trace: applied below).
        const RandomVar* b = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        if (b == nullptr || inst.attrs.size() < 4) break;
        row_aligns[b->id] = {inst.attrs[1].int_or(0), inst.attrs[2].int_or(1), inst.attrs[3].int_or(0)};
        break;
      }
      case InstructionKind::Annotate: {
        // A loop's software-pipeline depth: its copies are held once per stage.
        const RandomVar* loop = inst.inputs.empty() ? nullptr : rv_of(inst.inputs[0]);
        const auto* key = inst.attrs.empty() ? nullptr : inst.attrs[0].as<std::string>();
        if (loop == nullptr || loop->type != RVType::kLoop || key == nullptr || inst.inputs.size() < 2 ||
            *key != kSoftwarePipelineDepth) {
          break;
        }
        if (const auto* depth = inst.inputs[1].as<int64_t>()) {
          pipeline_depths[loop->id] = Factor{-1, -1, -1, *depth};
        } else if (const RandomVar* rv = rv_of(inst.inputs[1]); rv != nullptr && factor_of_value.count(rv->id) != 0) {
          pipeline_depths[loop->id] = factor_of_value.at(rv->id);
        }
        break;
      }
      default:
        break;
    }
  }
  for (const SharedCopySite& site : shared_copy_sites) {
    Copy& copy = budgets[site.block].copies[site.index];
    if (auto it = row_aligns.find(site.copy_block); it != row_aligns.end()) {
      const auto [axis, factor, offset] = it->second;
      const int rank = static_cast<int>(copy.dims.size());
      const int normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
      if (normalized >= 0 && normalized < rank && factor > 0 && offset >= 0 && offset < factor) {
        copy.aligns = {ir::BufferDimAlign{"", normalized, factor, offset}};
      }
    }
    if (auto it = pipeline_depths.find(site.at_loop); it != pipeline_depths.end()) copy.stages = it->second;
  }
  for (auto& [block, budget] : budgets) footprint_budgets_.push_back(std::move(budget));
  for (auto& [block, budget] : registers) footprint_budgets_.push_back(std::move(budget));
}

int64_t DecisionSampler::value(const Factor& f, const Draw& draw) const {
  if (f.tile >= 0) return draw.tiles[f.tile][f.slot];
  if (f.categorical >= 0) return categoricals_[f.categorical].candidates[draw.categories[f.categorical]];
  return f.constant;
}

int64_t DecisionSampler::value(const Product& p, const Draw& draw) const {
  int64_t v = 1;
  for (const Factor& f : p) v *= value(f, draw);
  return v;
}

bool DecisionSampler::fits(const Draw& draw) const {
  for (const Constraint& c : constraints_) {
    int64_t product = c.lanes;
    for (const Factor& f : c.factors) {
      product *= value(f, draw);
      if (product > c.high) return false;
    }
    if (product < c.low) return false;
  }
  for (const FootprintBudget& budget : footprint_budgets_) {
    if (footprint_bytes(budget, draw) > budget.limit) return false;
  }
  return true;
}

int64_t DecisionSampler::footprint_bytes(const FootprintBudget& budget, const Draw& draw) const {
  auto bytes_of = [&](const Copy& copy) {
    std::vector<int64_t> extents;
    for (const std::vector<Term>& dim : copy.dims) {
      int64_t extent = 1;
      for (const Term& t : dim) extent += t.coef * (value(t.extent, draw) - 1) * value(t.stride, draw);
      extents.push_back(extent);
    }
    const std::vector<int64_t> strides = ir::aligned_strides("", extents, copy.aligns);
    int64_t elements = copy.bytes * ir::aligned_allocation_size(extents, strides);
    if (copy.stages) elements *= value(*copy.stages, draw);
    // A lane's share of a warp's fragment, in whole 32-bit registers.
    return copy.lanes == 1 ? elements : 4 * ((elements + 4 * copy.lanes - 1) / (4 * copy.lanes));
  };
  int64_t bytes = 0;
  std::map<int64_t, int64_t> largest_by_element_size;  // of the copies live together
  for (const Copy& copy : budget.copies) {
    if (copy.after_the_others) continue;
    const int64_t b = bytes_of(copy);
    bytes += b;
    int64_t& largest = largest_by_element_size[copy.bytes];
    largest = std::max(largest, b);
  }
  for (const Copy& copy : budget.copies) {
    if (!copy.after_the_others) continue;
    int64_t& reusable = largest_by_element_size[copy.bytes];
    const int64_t b = bytes_of(copy);
    bytes += std::max<int64_t>(0, b - reusable);
    reusable = std::max(reusable, b);
  }
  return bytes;
}

bool DecisionSampler::shrink_footprints(Draw& draw) const {
  const std::set<std::pair<int, int>>& counted = counted_pieces_;
  for (int step = 0; step < 256; ++step) {
    const FootprintBudget* over = nullptr;
    for (const FootprintBudget& budget : footprint_budgets_) {
      if (footprint_bytes(budget, draw) > budget.limit) over = &budget;
    }
    if (over == nullptr) return true;
    // The largest movable piece of the copies: a non-outermost slot whose tile's
    // outermost slot no count reads either.
    std::optional<std::pair<int, int>> largest;
    for (const Copy& copy : over->copies) {
      for (const std::vector<Term>& dim : copy.dims) {
        for (const Term& t : dim) {
          for (const Factor& f : t.extent) {
            if (f.tile < 0 || f.slot == 0 || counted.contains({f.tile, f.slot}) || counted.contains({f.tile, 0})) continue;
            if (draw.tiles[f.tile][f.slot] <= 1) continue;
            if (!largest || draw.tiles[f.tile][f.slot] > draw.tiles[largest->first][largest->second]) {
              largest = std::pair{f.tile, f.slot};
            }
          }
        }
      }
    }
    if (!largest) return false;
    int64_t& piece = draw.tiles[largest->first][largest->second];
    int64_t prime = 2;
    while (piece % prime != 0) ++prime;
    piece /= prime;
    draw.tiles[largest->first][0] *= prime;
  }
  return false;
}

std::map<size_t, Arg> DecisionSampler::draw(schedule::RandomEngine& rng, int max_draws) const {
  Draw d;
  auto fresh = [&] {
    d.tiles.clear();
    d.categories.clear();
    for (const Tile& t : tiles_) d.tiles.push_back(schedule::sample_perfect_tile(rng, t.extent, t.n, t.max_innermost));
    for (const Categorical& c : categoricals_) d.categories.push_back(rng.categorical(c.probs));
  };
  // Draws as the schedule's samplers make them first; only where none of those fits are
  // draws shrunk to fit (the space's own distribution stays wherever it can be kept).
  bool found = false;
  for (int attempt = 0; attempt < std::max(1, max_draws) && !found; ++attempt) {
    fresh();
    found = constraint_count() == 0 || fits(d);
  }
  for (int attempt = 0; attempt < max_draws && !found && !footprint_budgets_.empty(); ++attempt) {
    fresh();
    found = shrink_footprints(d) && fits(d);
  }
  std::map<size_t, Arg> decisions;
  for (size_t t = 0; t < tiles_.size(); ++t) decisions[tiles_[t].instruction] = Arg::int_list(d.tiles[t]);
  for (size_t c = 0; c < categoricals_.size(); ++c) decisions[categoricals_[c].instruction] = Arg(d.categories[c]);
  return decisions;
}

}  // namespace dragon::search
