// PrimFunc: a kernel's parameters (input and output buffers, with the values inputs may
// take) and its body, whose top is the realization of the block named "root".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/stmt.h"

namespace dragon::ir {

enum class ParamRole : uint8_t { kInput, kOutput, kInOut };
std::string_view param_role_name(ParamRole role);

// Which values an input may hold; input generators and checkers honour it.
struct ValueDomain {
  enum class Kind : uint8_t {
    kReal,      // any value of the chosen distribution (floats), any bit pattern (bool)
    kPositive,  // floats > 0
    kSimplex,   // floats > 0 whose rows along the last axis sum to 1 (probabilities)
    kIntRange,  // integers in [lo, hi)
    kOffsets,   // non-decreasing, first 0, last `total`, steps in [0, max_len] (bag offsets)
  };
  Kind kind = Kind::kReal;
  int64_t lo = 0, hi = 0;             // kIntRange
  int64_t total = 0, max_len = 0;     // kOffsets

  static ValueDomain real() { return {}; }
  static ValueDomain positive() { return {Kind::kPositive}; }
  static ValueDomain simplex() { return {Kind::kSimplex}; }
  static ValueDomain int_range(int64_t lo, int64_t hi) { return {Kind::kIntRange, lo, hi}; }
  static ValueDomain offsets(int64_t total, int64_t max_len) { return {Kind::kOffsets, 0, 0, total, max_len}; }
  friend bool operator==(const ValueDomain&, const ValueDomain&) = default;
};

struct Param {
  Buffer buffer;
  ParamRole role = ParamRole::kInput;
  ValueDomain domain;
};

struct PrimFuncNode : public RefCounted {
  std::string name;
  std::vector<Param> params;
  Stmt body;
  Annotations attrs;
};

class PrimFunc {
 public:
  PrimFunc() = default;
  explicit PrimFunc(const PrimFuncNode* node) : ptr_(const_cast<PrimFuncNode*>(node)) {}
  static PrimFunc make(std::string name, std::vector<Param> params, Stmt body, Annotations attrs = {});

  const PrimFuncNode* get() const { return ptr_.get(); }
  const PrimFuncNode* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_.defined(); }
  bool same_as(const PrimFunc& other) const { return ptr_.get() == other.ptr_.get(); }

  // The same function with another body (what schedules and passes produce).
  PrimFunc with_body(Stmt body) const;
  // The root block if the body is a realization of one, else nullptr.
  const BlockNode* root_block() const;
  std::vector<Buffer> inputs() const;   // kInput and kInOut params, in order
  std::vector<Buffer> outputs() const;  // kOutput and kInOut params, in order

 private:
  IntrusivePtr<PrimFuncNode> ptr_;
};

}  // namespace dragon::ir
