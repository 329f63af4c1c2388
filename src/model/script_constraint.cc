// ScriptConstraint: the adapter between sampling and the project's constrained decoder
// (src/decode), the one file of the model that names it.
#include "dragon/model/script_constraint.h"

#include "dragon/decode/constrained_decoder.h"

namespace dragon::model {

struct ScriptConstraint::Impl {
  decode::ConstrainedDecoder decoder;
  Impl(const script::Tokenizer& tokenizer, ir::PrimFunc workload) : decoder(tokenizer, std::move(workload)) {}
};

ScriptConstraint::ScriptConstraint(const script::Tokenizer& tokenizer, ir::PrimFunc workload)
    : impl_(std::make_unique<Impl>(tokenizer, std::move(workload))) {}

ScriptConstraint::~ScriptConstraint() = default;

std::vector<script::TokenId> ScriptConstraint::allowed(std::span<const script::TokenId> generated) {
  return impl_->decoder.allowed_tokens(generated);
}

bool ScriptConstraint::is_viable(std::string_view script_text) { return impl_->decoder.is_viable(script_text); }

bool ScriptConstraint::is_complete(std::string_view script_text) { return impl_->decoder.is_complete(script_text); }

}  // namespace dragon::model
