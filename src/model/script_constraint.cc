// ScriptConstraint: the adapter between sampling and the project's constrained decoder
// (src/decode), the one file of the model that names it.
#include "dragon/model/script_constraint.h"

#include "dragon/decode/constrained_decoder.h"

namespace dragon::model {

struct ScriptConstraint::Impl {
  const script::Tokenizer& tokenizer;
  decode::ConstrainedDecoder decoder;
  EndCheck end_check;
  std::string last_refusal;
  Impl(const script::Tokenizer& t, ir::PrimFunc workload, EndCheck check)
      : tokenizer(t), decoder(t, std::move(workload)), end_check(std::move(check)) {}
};

ScriptConstraint::ScriptConstraint(const script::Tokenizer& tokenizer, ir::PrimFunc workload, EndCheck end_check)
    : impl_(std::make_unique<Impl>(tokenizer, std::move(workload), std::move(end_check))) {}

ScriptConstraint::~ScriptConstraint() = default;

std::vector<script::TokenId> ScriptConstraint::allowed(std::span<const script::TokenId> generated) {
  return impl_->decoder.allowed_tokens(generated);
}

bool ScriptConstraint::may_end(std::span<const script::TokenId> generated) {
  if (!impl_->end_check) return true;
  // allowed() listed EOS, so the text is a complete valid script.
  const std::optional<ir::PrimFunc> scheduled = impl_->decoder.scheduled_function(impl_->tokenizer.decode(generated));
  if (!scheduled) return false;
  std::optional<std::string> why = impl_->end_check(*scheduled);
  if (why) impl_->last_refusal = std::move(*why);
  return !why.has_value();
}

bool ScriptConstraint::is_viable(std::string_view script_text) { return impl_->decoder.is_viable(script_text); }

bool ScriptConstraint::is_complete(std::string_view script_text) { return impl_->decoder.is_complete(script_text); }

const std::string& ScriptConstraint::last_refusal() const { return impl_->last_refusal; }

}  // namespace dragon::model
