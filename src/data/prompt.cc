// prompt_text (prompt.h).
#include "dragon/data/prompt.h"

#include <fmt/format.h>

#include "dragon/ir/printer.h"
#include "dragon/support/error.h"
#include "dragon/ops/op_registry.h"

namespace dragon::data {

std::string prompt_text(std::string_view spec, PromptForm form) {
  const ops::Workload workload = ops::OpRegistry::global().make_workload(spec);
  return form == PromptForm::kIr ? ir::print_function(workload.func) : workload.spec;
}

std::string_view prompt_form_name(PromptForm form) { return form == PromptForm::kIr ? "ir" : "spec"; }

PromptForm parse_prompt_form(std::string_view name, std::string_view where) {
  if (name == "ir") return PromptForm::kIr;
  if (name == "spec") return PromptForm::kSpec;
  throw UserError(fmt::format("{}: prompt '{}' is neither 'ir' nor 'spec'", where, name));
}

}  // namespace dragon::data
