// RuleSet: which design-space rules and postprocessors a target uses, with their
// parameters, as data (a JSON rule-set file; docs/design-space.md describes the format).
// The built-in sets for cuda and cpu are files too (data/search/rules/*.json, built in);
// a user's file extends one of them per op kind. Not the rules themselves (src/search/space/).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"

namespace dragon::search {

// One parameter of a rule or postprocessor, as written in the file: a number, a flag, a
// word, or a list of numbers or words ("thread_extents": [32, 64, 128]).
using RuleParam = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, std::vector<std::string>>;
using RuleParams = std::map<std::string, RuleParam, std::less<>>;

// Which blocks a rule applies to; an empty list places no constraint. A rule applies to a
// block when every non-empty list matches:
//   ops      the op kind, i.e. the function's name ("matmul", "softmax", "conv2d");
//   blocks   the block's name ("C", "x_max");
//   dtypes   the dtype of any buffer the block reads or writes ("f16", "bf16");
//   patterns the block's shape of computation (block_pattern below): "elementwise",
//            "reduction", "matmul_like" (a reduction with data reuse: two or more reads,
//            one of which misses a spatial variable of the output, as in GEMM and
//            convolution), "opaque" (scans and other ordered blocks).
struct BlockSelector {
  std::vector<std::string> ops;
  std::vector<std::string> blocks;
  std::vector<std::string> dtypes;
  std::vector<std::string> patterns;
  bool empty() const { return ops.empty() && blocks.empty() && dtypes.empty() && patterns.empty(); }
  friend bool operator==(const BlockSelector&, const BlockSelector&) = default;
};

// A rule of the design space: its kind ("multi_level_tiling", docs/design-space.md lists
// them with their parameters), its parameters (missing ones take the kind's defaults),
// and the blocks it applies to.
struct RuleSpec {
  std::string rule;
  RuleParams params;
  BlockSelector when;
  friend bool operator==(const RuleSpec&, const RuleSpec&) = default;
};

// A postprocessor ("rewrite_cooperative_fetch", "verify_gpu_code", ...), applied to every
// candidate in the set's order.
struct PostprocSpec {
  std::string postproc;
  RuleParams params;
  friend bool operator==(const PostprocSpec&, const PostprocSpec&) = default;
};

struct RuleSet {
  std::string name;                             // "cuda", "cpu", or the file's "name"
  lower::Target::Kind target = lower::Target::Kind::kCuda;
  std::vector<RuleSpec> rules;                  // applied in order (PostOrderApply)
  std::vector<PostprocSpec> postprocs;          // applied in order to each candidate
  // Per op kind (the function's name): a rule list used instead of `rules` for that op.
  std::map<std::string, std::vector<RuleSpec>, std::less<>> op_rules;

  // The built-in sets: data/search/rules/cuda.json and cpu.json, compiled in.
  static const RuleSet& cuda();
  static const RuleSet& cpu();
  // cuda() or cpu() by the target's kind.
  static const RuleSet& for_target(const lower::Target& target);

  // Reads a rule-set file's text; `source` names it in messages. A file with
  // "extends": "cuda" (or "cpu", or a path resolved beside the file) starts from that set:
  // its "rules" and "postprocs", when present, replace the base's; its "ops" entries add
  // or replace per-op lists; its "set" entries override single parameters
  // ({"op": "matmul", "rule": "multi_level_tiling", "params": {...}}, "op" optional).
  // Throws UserError naming the source, the JSON path and what is wrong (an unknown rule,
  // postprocessor or parameter, a value of the wrong type).
  static RuleSet parse(std::string_view json, std::string_view source, const std::string& base_dir = "");
  static RuleSet load(const std::string& path);

  // The rules that apply to function `op` (op_rules[op] when present, else `rules`).
  const std::vector<RuleSpec>& rules_for(std::string_view op) const;

  // The set as a JSON document parse() reads back to an equal set.
  std::string to_json() const;
  friend bool operator==(const RuleSet&, const RuleSet&) = default;
};

// A block's shape of computation, as BlockSelector::patterns names it: "matmul_like",
// "reduction" (any other block with reduce iteration variables), "elementwise" (spatial
// variables only), or "opaque" (ordered iteration variables: scans).
std::string block_pattern(const ir::PrimFunc& func, std::string_view block_name);

}  // namespace dragon::search
