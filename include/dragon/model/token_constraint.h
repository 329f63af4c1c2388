// What a sampler asks before each token: which token ids may come next after the ones
// generated so far. An interface, so the sampler knows nothing of scripts or schedules
// (script_constraint.h is the implementation for scripts).
#pragma once

#include <span>
#include <vector>

#include "dragon/script/tokenizer.h"

namespace dragon::model {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // The ids (sorted) that may follow `generated`, EOS among them when the text may end
  // there. Empty: nothing can follow (the sampler stops and says so).
  virtual std::vector<script::TokenId> allowed(std::span<const script::TokenId> generated) = 0;
  // Asked when the sampler drew EOS (which allowed() listed) after `generated`: whether the
  // text may end there after all. For a check too costly to make at every place where EOS
  // could come (lowering a script for its target), so it is made only where EOS was drawn.
  // false: the sampler draws again without EOS.
  virtual bool may_end(std::span<const script::TokenId> /*generated*/) { return true; }
};

}  // namespace dragon::model
