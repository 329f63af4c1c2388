// The constraint that makes every sampled script valid for its workload: the project's
// constrained decoder (which tokens can still lead to a script that replays) behind the
// sampler's TokenConstraint. The only file that names the decoder is its .cc.
#pragma once

#include <memory>

#include "dragon/ir/function.h"
#include "dragon/model/token_constraint.h"

namespace dragon::model {

class ScriptConstraint final : public TokenConstraint {
 public:
  ScriptConstraint(const script::Tokenizer& tokenizer, ir::PrimFunc workload);
  ~ScriptConstraint() override;
  std::vector<script::TokenId> allowed(std::span<const script::TokenId> generated) override;
  // Whether some continuation of `script_text` is a valid script for the workload.
  bool is_viable(std::string_view script_text);
  // Whether `script_text` is a complete valid script for the workload.
  bool is_complete(std::string_view script_text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dragon::model
