// ScriptConstraint: the adapter between sampling and the project's constrained decoder
// (src/decode), the one file of the model that names it.
#include "dragon/model/script_constraint.h"

#include <algorithm>

#include "dragon/decode/constrained_decoder.h"

namespace dragon::model {

struct ScriptConstraint::Impl {
  const script::Tokenizer& tokenizer;
  decode::ConstrainedDecoder decoder;
  EndCheck end_check;
  int64_t write_on_tokens;
  std::optional<size_t> first_refusal_at;  // tokens generated when the check first refused
  std::string last_refusal;
  Impl(const script::Tokenizer& t, ir::PrimFunc workload, EndCheck check, int64_t write_on)
      : tokenizer(t), decoder(t, std::move(workload)), end_check(std::move(check)), write_on_tokens(write_on) {}
  // Whether the attempt has written its allowance past the first refusal.
  bool written_on(size_t generated) const {
    return first_refusal_at && generated >= *first_refusal_at + static_cast<size_t>(write_on_tokens);
  }
};

ScriptConstraint::ScriptConstraint(const script::Tokenizer& tokenizer, ir::PrimFunc workload, EndCheck end_check,
                                   int64_t write_on_tokens)
    : impl_(std::make_unique<Impl>(tokenizer, std::move(workload), std::move(end_check), write_on_tokens)) {}

ScriptConstraint::~ScriptConstraint() = default;

std::vector<script::TokenId> ScriptConstraint::allowed(std::span<const script::TokenId> generated) {
  std::vector<script::TokenId> ids = impl_->decoder.allowed_tokens(generated);
  // Past its allowance the attempt ends at the first line end.
  const script::TokenId eos = impl_->tokenizer.special(script::SpecialToken::kEos);
  if (impl_->written_on(generated.size()) && std::binary_search(ids.begin(), ids.end(), eos)) return {eos};
  return ids;
}

bool ScriptConstraint::may_end(std::span<const script::TokenId> generated) {
  if (!impl_->end_check || impl_->written_on(generated.size())) return true;
  // allowed() listed EOS, so the text is a complete valid script.
  const std::optional<ir::PrimFunc> scheduled = impl_->decoder.scheduled_function(impl_->tokenizer.decode(generated));
  if (!scheduled) return false;
  std::optional<std::string> why = impl_->end_check(*scheduled);
  if (!why) return true;
  impl_->last_refusal = std::move(*why);
  if (!impl_->first_refusal_at) impl_->first_refusal_at = generated.size();
  return false;
}

bool ScriptConstraint::is_viable(std::string_view script_text) { return impl_->decoder.is_viable(script_text); }

bool ScriptConstraint::is_complete(std::string_view script_text) { return impl_->decoder.is_complete(script_text); }

const std::string& ScriptConstraint::last_refusal() const { return impl_->last_refusal; }

}  // namespace dragon::model
