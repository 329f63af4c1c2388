// Internal: whether a partial line can still be completed to a valid one, by trying the
// completions that are valid whenever any is (README.md, "Why trying few completions is
// exact"), each judged by line_judge.h; and the values a slot may be written with. Not
// the memos per position nor the options listed (line_oracle.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "line_judge.h"
#include "line_position.h"
#include "replay_state.h"

namespace dragon::decode {

class CompletionSearch {
 public:
  CompletionSearch(const StateVariables& vars, LineJudge& judge) : vars_(vars), judge_(judge) {}

  // The shortcuts (README.md): prefixes ruled out by the schedule's check before any
  // completion is tried, the cheapest Blockize completions first. Exact either way.
  void set_shortcuts(bool on) { shortcuts_ = on; }

  // Whether some completion of `pos` applies (the judge's last success then holds it).
  bool search(const Position& pos);

  // The values a slot may be typed with, each with its word: the memoized pool of a
  // random-variable slot, else one built into `built`.
  using TypedPool = std::vector<std::pair<schedule::Arg, std::string>>;
  const TypedPool& typing_pool(const Position& pos, const SlotSchema& slot, TypedPool& built) const;
  // The decision a completion writes after the decision words `prefix`, if one can still
  // be valid (a perfect tile completed with 1s and the quotient; SampleComputeLocation's
  // root, always a candidate).
  std::optional<std::vector<int64_t>> complete_decision(const KindSchema& kind, const std::vector<schedule::Arg>& values,
                                                        const std::vector<int64_t>& prefix) const;

 private:
  TypedPool build_typing_pool(const Position& pos, const SlotSchema& slot) const;
  std::vector<schedule::Arg> completion_pool(const Position& pos, const SlotSchema& slot) const;
  // PadEinsum's paddings: one per iteration variable of the block its line names (nullopt
  // when that is not a block that resolves).
  std::optional<size_t> pad_einsum_arity(const Position& pos) const;
  std::vector<std::vector<schedule::Arg>> rest_extensions(const Position& pos, const SlotSchema& slot) const;
  // Whether a required string slot after `pos.slot` has no completion that can apply,
  // whatever the values before it (none is offered, or the schedule's check fails each
  // with only that slot known): then searching the slots before it is in vain.
  bool later_slot_impossible(const Position& pos);
  // `pool` with the cheapest Blockize completions first (short chains down to a block
  // with small bindings; any loop that applies will do).
  void order_blockize_pool(std::vector<schedule::Arg>& pool) const;

  const StateVariables& vars_;
  LineJudge& judge_;
  bool shortcuts_ = true;
  // typing_pool of the random-variable slots, by ValueType.
  mutable std::unordered_map<size_t, TypedPool> rv_pools_;
  // later_slot_impossible by kind and slot.
  std::unordered_map<size_t, bool> impossible_;
};

}  // namespace dragon::decode
