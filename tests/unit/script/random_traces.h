// Random traces for the script codec's property tests and compactness report:
// - schedule_trace: random primitives (lookups, sampling, loops, annotations, caches,
//   compute locations, inlining, reductions, blockize) applied to a workload, as search
//   would record them (failed primitives are skipped; their lookups stay recorded);
// - schema_trace: random well-typed instructions of every kind straight from the script
//   schema, with awkward strings and numbers (no IR; never replayed).
// Header-only so bench/script_compactness.cc can share it. Not a search strategy.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/ir/op.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script_schema.h"

namespace dragon::script::testing {

using schedule::Arg;
using schedule::BlockOrLoop;
using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::RandomEngine;
using schedule::Schedule;
using schedule::ScheduleError;
using schedule::SplitFactor;

namespace detail {

template <typename T>
const T& pick(const std::vector<T>& v, RandomEngine& rng) {
  return v[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(v.size())))];
}

inline std::vector<BlockRV> root_children(Schedule& sch) { return sch.get_child_blocks(sch.get_block("root")); }

// One random primitive on `sch`; ScheduleErrors are the normal outcome of random choices.
inline void random_step(Schedule& sch, RandomEngine& rng) {
  std::vector<BlockRV> blocks = root_children(sch);
  if (blocks.empty()) return;
  BlockRV block = pick(blocks, rng);
  std::vector<LoopRV> loops = sch.get_loops(block);
  const int64_t n = static_cast<int64_t>(loops.size());
  try {
    if (n == 0) {
      sch.add_unit_loop(block);
      return;
    }
    LoopRV loop = pick(loops, rng);
    switch (rng.uniform_int(0, 20)) {
      case 0:
      case 1: {  // split by constants, one maybe inferred
        int parts = static_cast<int>(rng.uniform_int(2, 4));
        int64_t inferred = rng.uniform_int(-1, parts);
        std::vector<SplitFactor> factors;
        for (int i = 0; i < parts; ++i) {
          if (i == inferred) factors.push_back(schedule::None{});
          else factors.push_back(rng.uniform_int(1, 9));
        }
        sch.split(loop, factors, rng.uniform_int(0, 4) != 0);
        break;
      }
      case 2:
      case 3: {  // split by a sampled perfect tile
        std::vector<ExprRV> tile = sch.sample_perfect_tile(loop, static_cast<int>(rng.uniform_int(2, 5)),
                                                           rng.uniform_int(0, 2) ? 64 : 16);
        sch.split(loop, std::vector<SplitFactor>(tile.begin(), tile.end()));
        break;
      }
      case 4:
      case 5: {  // fuse adjacent loops
        if (n < 2) break;
        int64_t first = rng.uniform_int(0, n - 1);
        int64_t count = std::min<int64_t>(n - first, rng.uniform_int(2, 4));
        sch.fuse(std::vector<LoopRV>(loops.begin() + first, loops.begin() + first + count));
        break;
      }
      case 6: {  // reorder a window
        if (n < 2) break;
        int64_t first = rng.uniform_int(0, n - 1);
        std::vector<LoopRV> window(loops.begin() + first, loops.end());
        for (size_t i = window.size(); i-- > 1;) std::swap(window[i], window[rng.uniform_int(0, i + 1)]);
        sch.reorder(window);
        break;
      }
      case 7: {  // annotations: sampled, integer, float, string
        switch (rng.uniform_int(0, 4)) {
          case 0: {
            ExprRV v = sch.sample_categorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
            sch.annotate(block, "meta_schedule.unroll_explicit", v);
            break;
          }
          case 1: sch.annotate(loop, "pragma_auto_unroll_max_step", rng.uniform_int(0, 128)); break;
          case 2: sch.annotate(block, "meta_schedule.tiling_structure", std::string("SSRSRS")); break;
          default: sch.annotate(loop, "my_hint", 0.5 * static_cast<double>(rng.uniform_int(1, 5))); break;
        }
        if (rng.uniform_int(0, 3) == 0) sch.unannotate(block, "meta_schedule.tiling_structure");
        break;
      }
      case 8: {  // loop kinds and thread binding
        static const char* kTags[] = {"blockIdx.x", "threadIdx.x", "vthread.y", "threadIdx.y", "blockIdx.y"};
        switch (rng.uniform_int(0, 4)) {
          case 0: sch.parallel(loop); break;
          case 1: sch.vectorize(loop); break;
          case 2: sch.unroll(loop); break;
          default: sch.bind(loop, kTags[rng.uniform_int(0, 5)]); break;
        }
        break;
      }
      case 9: sch.add_unit_loop(rng.uniform_int(0, 2) ? BlockOrLoop(block) : BlockOrLoop(loop)); break;
      case 10: {  // caches
        static const char* kScopes[] = {"shared", "local", "global", "shared.dyn"};
        const char* scope = kScopes[rng.uniform_int(0, 4)];
        if (rng.uniform_int(0, 2)) {
          sch.cache_read(block, rng.uniform_int(0, 2), scope, rng.uniform_int(0, 2) ? std::vector<BlockRV>{block}
                                                                                       : std::vector<BlockRV>{});
        } else {
          sch.cache_write(block, 0, scope);
        }
        break;
      }
      case 11: sch.set_scope(block, 0, rng.uniform_int(0, 2) ? "shared" : "local"); break;
      case 12:
      case 13: {  // compute locations: under a loop of a consumer or producer
        std::vector<BlockRV> others = rng.uniform_int(0, 2) ? sch.get_consumers(block) : sch.get_producers(block);
        if (others.empty()) break;
        std::vector<LoopRV> target_loops = sch.get_loops(pick(others, rng));
        if (target_loops.empty()) break;
        LoopRV at = pick(target_loops, rng);
        bool preserve = rng.uniform_int(0, 3) != 0;
        int64_t index = rng.uniform_int(0, 4) == 0 ? -2 : -1;
        if (rng.uniform_int(0, 2)) sch.compute_at(block, at, preserve, index);
        else sch.reverse_compute_at(block, at, preserve, index);
        break;
      }
      case 14: {
        if (rng.uniform_int(0, 2)) sch.compute_inline(block);
        else sch.reverse_compute_inline(block);
        break;
      }
      case 15: sch.rfactor(loop, rng.uniform_int(0, 2)); break;
      case 16: sch.decompose_reduction(block, loop); break;
      case 17: sch.blockize(loop, rng.uniform_int(0, 3) != 0); break;
      case 18: sch.get_child_blocks(rng.uniform_int(0, 2) ? BlockOrLoop(block) : BlockOrLoop(loop)); break;
      default: {
        std::vector<LoopRV> l = sch.get_loops(block);
        if (l.size() >= 2) sch.fuse({l[l.size() - 2], l[l.size() - 1]}, rng.uniform_int(0, 4) != 0);
        break;
      }
    }
  } catch (const ScheduleError&) {
    // Random choices are often invalid; the schedule is unchanged.
  }
}

}  // namespace detail

// A trace of `steps` random primitives on `func`, sometimes with a postprocessing part.
inline schedule::Trace schedule_trace(const ir::PrimFunc& func, int64_t seed, int steps) {
  Schedule sch(func, seed);
  RandomEngine rng(seed * 7919 + 13);
  for (int i = 0; i < steps; ++i) detail::random_step(sch, rng);
  if (rng.uniform_int(0, 3) == 0) {
    sch.enter_postproc();
    for (int i = 0; i < 2; ++i) detail::random_step(sch, rng);
  }
  return sch.trace();
}

// A string that exercises quoting: plain words, short-name codes and their full texts,
// reserved words, RV look-alikes, spaces, quotes, escapes, non-ASCII and empty.
inline std::string awkward_string(RandomEngine& rng) {
  static const char* kStrings[] = {
      "C", "root", "T_matmul_NT", "A_shared", "x.y_z", "tx", "threadIdx.x", "coop", "meta_schedule.cooperative_fetch",
      "true", "None", "b0", "l12", "v3", "b01", "", "two words", "quote\"inside", "back\\slash", "tab\there",
      "new\nline", "bell\x07", "caf\xc3\xa9", "12", "-3", "1.5", "[x]", "a=b", "#hash", "lambda i, j: (j, i)", "del\x7f",
  };
  return kStrings[rng.uniform_int(0, static_cast<int64_t>(std::size(kStrings)))];
}

inline double awkward_float(RandomEngine& rng) {
  static const double kFloats[] = {0.25, 0.2, 1.0, -0.0, 0.1, 1e-05, 1e20, 3.141592653589793, -2.5, 1.0 / 3.0, 100.0,
                                   5e-324, 1.7976931348623157e308};
  return kFloats[rng.uniform_int(0, static_cast<int64_t>(std::size(kFloats)))];
}

// A random well-typed trace of `length` instructions drawn from the schema of every kind:
// each input variable is one defined earlier of the right type (the kind is skipped
// when there is none yet), counts and decisions are random, defaults sometimes kept.
inline schedule::Trace schema_trace(int64_t seed, int length) {
  using schedule::RandomVar;
  using schedule::RVType;
  RandomEngine rng(seed);
  schedule::Trace trace;
  std::vector<RandomVar> defined[3];
  int64_t next_id = 0;
  std::span<const KindSchema> kinds = all_kind_schemas();
  auto pick_rv = [&](RVType type) -> std::optional<RandomVar> {
    const auto& pool = defined[static_cast<size_t>(type)];
    if (pool.empty()) return std::nullopt;
    return pool[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(pool.size())))];
  };
  int attempts = 0;
  while (static_cast<int>(trace.size()) < length && ++attempts < length * 20) {
    const KindSchema& k = kinds[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(kinds.size())))];
    schedule::Instruction inst;
    inst.kind = k.kind;
    bool ok = true;
    int64_t count = rng.uniform_int(0, 4);
    std::vector<size_t> list_lengths;
    auto value = [&](const SlotSchema& slot) -> std::optional<Arg> {
      if (!slot.names.empty() && rng.uniform_int(0, 3) != 0) {
        return Arg(std::string(slot.names[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(slot.names.size())))].full));
      }
      switch (slot.type) {
        case ValueType::kBlock: if (auto rv = pick_rv(RVType::kBlock)) return Arg(*rv); return std::nullopt;
        case ValueType::kLoop: if (auto rv = pick_rv(RVType::kLoop)) return Arg(*rv); return std::nullopt;
        case ValueType::kExpr: if (auto rv = pick_rv(RVType::kExpr)) return Arg(*rv); return std::nullopt;
        case ValueType::kBlockOrLoop:
          if (auto rv = pick_rv(rng.uniform_int(0, 2) ? RVType::kBlock : RVType::kLoop)) return Arg(*rv);
          return std::nullopt;
        case ValueType::kInt: return Arg(rng.uniform_int(-3, 130));
        case ValueType::kFloat: return rng.uniform_int(0, 4) ? Arg(awkward_float(rng)) : Arg(rng.uniform_int(0, 3));
        case ValueType::kBool: return Arg(rng.uniform_int(0, 2) == 1);
        case ValueType::kString: return Arg(awkward_string(rng));
        case ValueType::kEnum: return Arg(awkward_string(rng));
        case ValueType::kSplitFactor:
          switch (rng.uniform_int(0, 3)) {
            case 0: return Arg(schedule::None{});
            case 1: if (auto rv = pick_rv(RVType::kExpr)) return Arg(*rv); [[fallthrough]];
            default: return Arg(rng.uniform_int(1, 65));
          }
        case ValueType::kAnnValue:
          switch (rng.uniform_int(0, 5)) {
            case 0: return Arg(rng.uniform_int(-1, 1025));
            case 1: return Arg(awkward_float(rng));
            case 2: return Arg(rng.uniform_int(0, 2) == 1);
            case 3: if (auto rv = pick_rv(RVType::kExpr)) return Arg(*rv); [[fallthrough]];
            default: return Arg(awkward_string(rng));
          }
        case ValueType::kOptionalNumber:
          return rng.uniform_int(0, 3) ? Arg(schedule::None{}) : Arg(awkward_float(rng));
        case ValueType::kCount: return Arg(count);
      }
      return std::nullopt;
    };
    for (const SlotSchema& slot : k.slots) {
      std::vector<Arg> values;
      if (slot.source == SlotSource::kOutputCount) continue;
      if (slot.shape == SlotShape::kSingle) {
        bool keep_default = slot.default_kind == DefaultKind::kValue && rng.uniform_int(0, 2) == 0;
        auto v = keep_default ? std::optional<Arg>(slot.default_value) : value(slot);
        if (!v) { ok = false; break; }
        values.push_back(*v);
      } else if (slot.default_kind == DefaultKind::kUniformProbs && rng.uniform_int(0, 2) == 0) {
        size_t n = list_lengths.empty() ? 0 : list_lengths.back();
        for (size_t i = 0; i < n; ++i) values.emplace_back(1.0 / static_cast<double>(n));
      } else {
        int64_t len = rng.uniform_int(0, 5);
        for (int64_t i = 0; i < len && ok; ++i) {
          auto v = value(slot);
          if (!v) ok = false;
          else values.push_back(*v);
        }
      }
      if (!ok) break;
      list_lengths.push_back(values.size());
      std::vector<Arg>& target = slot.source == SlotSource::kAttr ? inst.attrs : inst.inputs;
      if (slot.source == SlotSource::kInputsFrom) {
        target.insert(target.end(), values.begin(), values.end());
      } else {
        target.push_back(slot.shape == SlotShape::kSingle ? values[0] : Arg(Arg::List(values)));
      }
    }
    if (!ok) continue;
    int64_t outputs = 0;
    switch (k.outputs.rule) {
      case OutputRule::kFixed: outputs = k.outputs.fixed_count; break;
      case OutputRule::kWritten: outputs = count; break;
      case OutputRule::kListLength: outputs = static_cast<int64_t>(list_lengths[static_cast<size_t>(k.outputs.slot)]); break;
      case OutputRule::kFromSlot: {
        // The slot's integer is the count: make it a small non-negative one.
        const SlotSchema& slot = k.slots[static_cast<size_t>(k.outputs.slot)];
        outputs = rng.uniform_int(0, 5);
        inst.attrs[static_cast<size_t>(slot.index)] = Arg(outputs);
        break;
      }
    }
    for (int64_t i = 0; i < outputs; ++i) inst.outputs.push_back(RandomVar{k.outputs.type, next_id++});
    std::optional<Arg> decision;
    if (k.decision != DecisionShape::kNone && rng.uniform_int(0, 4) != 0) {
      if (k.decision == DecisionShape::kInt) {
        decision = Arg(rng.uniform_int(-2, 6));
      } else {
        Arg::List factors;
        int64_t len = rng.uniform_int(0, 4) ? outputs : rng.uniform_int(0, 4);
        for (int64_t i = 0; i < len; ++i) factors.emplace_back(rng.uniform_int(1, 33));
        decision = Arg(std::move(factors));
      }
    }
    for (const RandomVar& rv : inst.outputs) defined[static_cast<size_t>(rv.type)].push_back(rv);
    trace.append(std::move(inst), std::move(decision));
  }
  return trace;
}

}  // namespace dragon::script::testing
