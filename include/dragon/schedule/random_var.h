// Random variables of a schedule: typed handles (ids) into a Schedule's symbol table.
// A BlockRV names a block, a LoopRV a loop, an ExprRV a sampled integer. Not IR nodes.
#pragma once

#include <cstdint>
#include <string>

namespace dragon::schedule {

enum class RVType : uint8_t { kBlock, kLoop, kExpr };

// Any random variable. Ids come from one counter per schedule, so the text name
// ("b0", "l1", "v2") is unique and follows definition order, as in TVM's traces.
struct RandomVar {
  RVType type = RVType::kBlock;
  int64_t id = -1;
  friend bool operator==(const RandomVar&, const RandomVar&) = default;
};

// "b", "l" or "v": the prefix of the text name.
char rv_prefix(RVType type);
std::string rv_name(const RandomVar& rv);

struct BlockRV {
  int64_t id = -1;
  operator RandomVar() const { return {RVType::kBlock, id}; }  // NOLINT(google-explicit-constructor)
  friend bool operator==(const BlockRV&, const BlockRV&) = default;
};

struct LoopRV {
  int64_t id = -1;
  operator RandomVar() const { return {RVType::kLoop, id}; }  // NOLINT(google-explicit-constructor)
  friend bool operator==(const LoopRV&, const LoopRV&) = default;
};

struct ExprRV {
  int64_t id = -1;
  operator RandomVar() const { return {RVType::kExpr, id}; }  // NOLINT(google-explicit-constructor)
  friend bool operator==(const ExprRV&, const ExprRV&) = default;
};

}  // namespace dragon::schedule
