// The constraint that makes every sampled script valid for its workload: the project's
// constrained decoder (which tokens can still lead to a script that replays) behind the
// sampler's TokenConstraint. The only file that names the decoder is its .cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dragon/ir/function.h"
#include "dragon/model/token_constraint.h"

namespace dragon::model {

// A check of the scheduled workload a complete script makes, beyond replaying: nullopt
// when it passes, else why not (lowering for a target: bench::lower_for_cuda's verdict).
using EndCheck = std::function<std::optional<std::string>(const ir::PrimFunc& scheduled)>;

// How far an attempt whose end was refused may write on: past that many tokens after the
// first refusal the check is off and the script ends at its next line end. Mending takes
// a few lines (binding a block is 20-40 tokens); on an H100 host attempts that could not
// be mended wrote on to the end of a 3,072-token context, 100 s each, most of it in the
// decoder, and their kernels were never going to lower.
inline constexpr int64_t kWriteOnTokens = 256;

class ScriptConstraint final : public TokenConstraint {
 public:
  // With `end_check`, a script may end only where the workload it has scheduled so far
  // passes it (asked where the sampler drew EOS: may_end), for at most `write_on_tokens`
  // tokens after the first end it refused.
  ScriptConstraint(const script::Tokenizer& tokenizer, ir::PrimFunc workload, EndCheck end_check = {},
                   int64_t write_on_tokens = kWriteOnTokens);
  ~ScriptConstraint() override;
  std::vector<script::TokenId> allowed(std::span<const script::TokenId> generated) override;
  bool may_end(std::span<const script::TokenId> generated) override;
  // Whether some continuation of `script_text` is a valid script for the workload.
  bool is_viable(std::string_view script_text);
  // Whether `script_text` is a complete valid script for the workload.
  bool is_complete(std::string_view script_text);
  // Why the end check last refused an end (empty when it never did).
  const std::string& last_refusal() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dragon::model
