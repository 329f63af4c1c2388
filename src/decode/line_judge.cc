// LineJudge (line_judge.h): the schedule's check first, a trial on a scratch copy where
// the check cannot tell, outcomes memoized per state by the exact instruction.
#include "line_judge.h"

#include <cstring>

#include "dragon/schedule/apply_instruction.h"

namespace dragon::decode {

using schedule::Arg;
using schedule::CheckResult;
using schedule::RandomVar;
using schedule::RVType;
using schedule::Verdict;

namespace {

template <typename T>
void append_bytes(std::string& key, const T& value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key.append(bytes, sizeof(T));
}

// A byte string equal for equal Args only: cheaper to build than their spelling.
void append_arg(std::string& key, const Arg& a) {
  key.push_back(static_cast<char>(a.value().index()));
  if (const auto* i = a.as<int64_t>()) append_bytes(key, *i);
  else if (const auto* d = a.as<double>()) append_bytes(key, *d);
  else if (const auto* b = a.as<bool>()) key.push_back(*b ? 1 : 0);
  else if (const auto* rv = a.as<RandomVar>()) append_bytes(key, rv->id * 4 + static_cast<int64_t>(rv->type));
  else if (const auto* s = a.as<std::string>()) {
    append_bytes(key, s->size());
    key += *s;
  } else if (const auto* list = a.as<Arg::List>()) {
    append_bytes(key, list->size());
    for (const Arg& e : *list) append_arg(key, e);
  }
}

// The memo key of a line of `kind` whose slots from `first_known` on hold `values` (those
// before unknown; the later ones at their defaults when `complete`, else unknown), with
// `decision`, into `key`. Equal keys stand for the same instruction: defaults follow
// from the values.
void fill_key(std::string& key, const KindSchema& kind, const std::vector<Arg>& values, bool complete,
              size_t first_known, const std::optional<Arg>& decision) {
  key.clear();
  key.push_back(static_cast<char>(kind.kind));
  key.push_back(complete ? 1 : 0);
  append_bytes(key, first_known);
  append_bytes(key, values.size());
  for (size_t s = first_known; s < values.size(); ++s) append_arg(key, values[s]);
  key.push_back(decision ? 1 : 0);
  if (decision) append_arg(key, *decision);
}

std::optional<Arg> decision_arg(const KindSchema& kind, const std::optional<std::vector<int64_t>>& decision) {
  if (!decision) return std::nullopt;
  return kind.decision == DecisionShape::kIntList ? Arg::int_list(*decision) : Arg(decision->at(0));
}

// The line's outcome from the check's, with the decoder's own conditions: a written count
// equals the outputs, a decision is the one the instruction records. nullopt when the
// check cannot tell.
std::optional<bool> outcome_of(const CheckResult& r, const std::optional<Arg>& decision, std::optional<int64_t> count) {
  if (r.verdict == Verdict::kUnknown) return std::nullopt;
  if (r.verdict == Verdict::kFails) return false;
  if (count && *count != kAnyCount && static_cast<size_t>(*count) != r.outputs) return false;
  if (decision && !r.decision) return std::nullopt;  // the check does not say which it records
  return !decision || *r.decision == *decision;
}

}  // namespace

std::optional<bool> LineJudge::memoized(const std::string& key) const {
  auto known = outcomes_.find(key);
  if (known == outcomes_.end()) return std::nullopt;
  return known->second;
}

bool LineJudge::applies(const Position& pos, const std::optional<std::vector<int64_t>>& decision,
                        std::shared_ptr<ReplayState>* next) {
  const KindSchema& kind = *pos.kind;
  const std::optional<Arg> decision_value = decision_arg(kind, decision);
  auto witness = [&] { last_success_ = Witness{pos.values, decision}; };
  // The key is built where it is used: a line committed (the last trial may be it), a
  // memo consulted, a trial (always memoized).
  bool keyed = false;
  auto key = [&]() -> const std::string& {
    if (!keyed) fill_key(key_, kind, pos.values, true, 0, decision_value);
    keyed = true;
    return key_;
  };
  const bool memoize = stats_ == nullptr || stats_->memoize(kind.kind);
  if (next != nullptr) {
    if (last_applied_ && last_applied_->key == key()) {
      // The line was the last trial that applied: its schedule is the state after it.
      scratch_.emplace(std::move(last_applied_->sch));
      std::vector<RandomVar> outputs = std::move(last_applied_->outputs);
      last_applied_.reset();
      return commit(pos, std::move(outputs), next);
    }
  } else if (memoize) {
    const std::optional<bool> known = memoized(key());
    if (stats_ != nullptr) stats_->memo_looked_up(kind.kind, known.has_value());
    if (known) {
      if (*known) witness();
      return *known;
    }
  }
  fill_draft(draft_, kind, pos.values, true);
  if (next == nullptr && checks_) {
    const CheckResult r = state_->sch.check(draft_.inst, decision_value, {}, /*explain=*/false);
    if (std::optional<bool> ok = outcome_of(r, decision_value, draft_.count)) {
      if (*ok) witness();
      if (memoize) outcomes_.emplace(key(), *ok);
      return *ok;
    }
  }
  if (next == nullptr && !memoize) {
    if (std::optional<bool> known = memoized(key())) {
      if (*known) witness();
      return *known;
    }
  }
  ++counters_->trials;
  if (!scratch_) scratch_.emplace(state_->sch.copy());
  const size_t before = scratch_->trace().size();
  std::vector<RandomVar> outputs;
  bool ok = true;
  try {
    outputs = schedule::apply_instruction(*scratch_, draft_.inst, decision_value);
  } catch (const std::exception&) {
    ok = false;
  }
  if (ok && draft_.count && *draft_.count != kAnyCount && static_cast<size_t>(*draft_.count) != outputs.size()) {
    ok = false;
  }
  // A decision replay would change is not the script's: the script must say what runs.
  if (ok && decision_value && scratch_->trace().decision(scratch_->trace().size() - 1) != decision_value) ok = false;
  if (ok && next != nullptr) return commit(pos, std::move(outputs), next);
  if (ok) witness();
  outcomes_.emplace(key(), ok);
  if (ok) {
    // Kept: the line that ends with this instruction is committed from it.
    last_applied_ = AppliedTrial{key(), std::move(*scratch_), std::move(outputs)};
    scratch_.reset();
  } else if (scratch_->trace().size() != before) {
    scratch_.reset();
  }
  return ok;
}

bool JudgeStats::ask_prefix(schedule::InstructionKind kind, size_t written) const {
  // After this many asks without one ruled out, the kind's prefixes of that length are
  // taken to need the later slots.
  constexpr int kTrials = 32;
  auto it = prefixes_.find(static_cast<size_t>(kind) * 64 + written);
  return it == prefixes_.end() || it->second.answered > 0 || it->second.asked < kTrials;
}

void JudgeStats::prefix_asked(schedule::InstructionKind kind, size_t written, bool ruled_out) {
  Tally& t = prefixes_[static_cast<size_t>(kind) * 64 + written];
  ++t.asked;
  t.answered += ruled_out ? 1 : 0;
}

bool JudgeStats::memoize(schedule::InstructionKind kind) const {
  // After this many lookups, a kind whose lines are found in the memo less than once in
  // this many is no longer memoized.
  constexpr int kTrials = 64;
  constexpr int kWorthRate = 16;
  auto it = memos_.find(static_cast<size_t>(kind));
  return it == memos_.end() || it->second.asked < kTrials || it->second.answered * kWorthRate >= it->second.asked;
}

void JudgeStats::memo_looked_up(schedule::InstructionKind kind, bool hit) {
  Tally& t = memos_[static_cast<size_t>(kind)];
  ++t.asked;
  t.answered += hit ? 1 : 0;
}

bool LineJudge::prefix_ruled_out(const KindSchema& kind, const std::vector<Arg>& values) {
  if (stats_ != nullptr && !stats_->ask_prefix(kind.kind, values.size())) return false;
  const bool ruled_out = fails(kind, values);
  if (stats_ != nullptr) stats_->prefix_asked(kind.kind, values.size(), ruled_out);
  return ruled_out;
}

bool LineJudge::fails(const KindSchema& kind, const std::vector<Arg>& values, size_t first_known) {
  fill_key(key_, kind, values, false, first_known, std::nullopt);
  if (std::optional<bool> known = memoized(key_)) return !*known;
  fill_draft(draft_, kind, values, false, first_known);
  const bool fails =
      state_->sch.check(draft_.inst, std::nullopt, draft_.known, /*explain=*/false).verdict == Verdict::kFails;
  outcomes_.emplace(key_, !fails);
  return fails;
}

bool LineJudge::commit(const Position& pos, std::vector<RandomVar> outputs, std::shared_ptr<ReplayState>* next) {
  auto st = std::make_shared<ReplayState>(std::move(*scratch_));
  scratch_.reset();
  for (size_t t = 0; t < 3; ++t) st->vars[t] = state_->vars[t];
  st->loop_is_location = state_->loop_is_location;
  for (const RandomVar& rv : outputs) {
    st->vars[static_cast<size_t>(rv.type)].push_back(rv);
    if (rv.type == RVType::kLoop) {
      st->loop_is_location.push_back(pos.kind->kind == schedule::InstructionKind::SampleComputeLocation);
    }
  }
  st->decoder = state_->decoder;
  try {
    st->decoder.feed(pos.text);
  } catch (const std::exception&) {
    return false;
  }
  *next = std::move(st);
  return true;
}

bool LineJudge::trial_outcome(const schedule::Instruction& inst, const std::optional<Arg>& decision,
                              std::optional<int64_t> count) const {
  schedule::Schedule trial = state_->sch.copy();
  try {
    std::vector<RandomVar> outputs = schedule::apply_instruction(trial, inst, decision);
    if (count && *count != kAnyCount && static_cast<size_t>(*count) != outputs.size()) return false;
    return !decision || trial.trace().decision(trial.trace().size() - 1) == decision;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<bool> LineJudge::check_outcome(const schedule::Instruction& inst, const std::optional<Arg>& decision,
                                             std::optional<int64_t> count) const {
  return outcome_of(state_->sch.check(inst, decision), decision, count);
}

}  // namespace dragon::decode
