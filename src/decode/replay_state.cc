// StateVariables (replay_state.h): memoized lookups of the script's variables on a state.
#include "replay_state.h"

#include <unordered_map>

namespace dragon::decode {

using schedule::Arg;
using schedule::RandomVar;
using schedule::RVType;

std::optional<size_t> StateVariables::index_of(const RandomVar& rv) const {
  if (!index_built_) {
    // Variable ids are the schedule's symbol indices (small, dense): a table, not a map.
    // The first variable of an id keeps it.
    for (size_t t = 0; t < 3; ++t) {
      for (size_t i = 0; i < state_.vars[t].size(); ++i) {
        const int64_t id = state_.vars[t][i].id;
        if (id < 0) continue;
        if (static_cast<size_t>(id) >= index_of_.size()) index_of_.resize(static_cast<size_t>(id) + 1, -1);
        if (index_of_[static_cast<size_t>(id)] < 0) index_of_[static_cast<size_t>(id)] = static_cast<int64_t>(i);
      }
    }
    index_built_ = true;
  }
  if (rv.id < 0 || static_cast<size_t>(rv.id) >= index_of_.size() || index_of_[static_cast<size_t>(rv.id)] < 0) {
    return std::nullopt;
  }
  const size_t index = static_cast<size_t>(index_of_[static_cast<size_t>(rv.id)]);
  const auto& vars = state_.vars[static_cast<size_t>(rv.type)];
  if (index >= vars.size() || vars[index].id != rv.id) return std::nullopt;  // another type
  return index;
}

bool StateVariables::is_valid(RVType type, size_t index) const {
  std::vector<int8_t>& known = valid_[static_cast<size_t>(type)];
  const auto& vars = state_.vars[static_cast<size_t>(type)];
  if (known.size() < vars.size()) known.resize(vars.size(), -1);
  if (known[index] < 0) known[index] = state_.sch.is_valid(vars[index]) ? 1 : 0;
  return known[index] == 1;
}

bool StateVariables::is_location_mark(const Arg& loop) const {
  const auto* rv = loop.as<RandomVar>();
  if (rv == nullptr || rv->type != RVType::kLoop) return false;
  auto i = index_of(*rv);
  return i && state_.loop_is_location[*i];
}

const ir::ForNode* StateVariables::loop(const Arg& loop) const {
  const auto* rv = loop.as<RandomVar>();
  if (rv == nullptr || rv->type != RVType::kLoop) return nullptr;
  auto i = index_of(*rv);
  if (!i || !is_valid(RVType::kLoop, *i)) return nullptr;
  return state_.sch.get(schedule::LoopRV{rv->id});
}

const std::vector<size_t>& StateVariables::classes(RVType type) const {
  const auto t = static_cast<size_t>(type);
  std::vector<size_t>& of = class_of_[t];
  if (classes_built_[t]) return of;
  // What a variable stands for, as the schedule resolves it: a block or loop node, or a
  // sampled value; nullopt for a variable that does not resolve.
  using Key = std::pair<const void*, int64_t>;
  auto key = [&](size_t i) -> std::optional<Key> {
    const schedule::RandomVar& rv = state_.vars[t][i];
    if (type == RVType::kLoop && state_.loop_is_location[i]) return std::nullopt;
    if (!is_valid(type, i)) return std::nullopt;
    switch (type) {
      case RVType::kBlock: return Key{state_.sch.get(schedule::BlockRV{rv.id}), 0};
      case RVType::kLoop: return Key{state_.sch.get(schedule::LoopRV{rv.id}), 0};
      case RVType::kExpr: return Key{nullptr, state_.sch.get(schedule::ExprRV{rv.id})};
    }
    return std::nullopt;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.first) ^ (std::hash<int64_t>()(k.second) * 31);
    }
  };
  std::unordered_map<Key, size_t, KeyHash> first;
  const size_t n = state_.vars[t].size();
  of.resize(n);
  for (size_t i = 0; i < n; ++i) {
    std::optional<Key> k = key(i);
    of[i] = k ? first.emplace(*k, i).first->second : i;
  }
  classes_built_[t] = true;
  return of;
}

bool StateVariables::is_representative(const Arg& value) const {
  const auto* rv = value.as<RandomVar>();
  if (rv == nullptr) return true;
  auto i = index_of(*rv);
  return !i || classes(rv->type)[*i] == *i;
}

Arg StateVariables::representative(const Arg& value) const {
  const auto* rv = value.as<RandomVar>();
  if (rv == nullptr) return value;
  auto i = index_of(*rv);
  if (!i) return value;
  return Arg(state_.vars[static_cast<size_t>(rv->type)][classes(rv->type)[*i]]);
}

}  // namespace dragon::decode
