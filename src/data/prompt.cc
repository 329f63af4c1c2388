// prompt_text (prompt.h).
#include "dragon/data/prompt.h"

#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"

namespace dragon::data {

std::string prompt_text(std::string_view spec, PromptForm form) {
  const ops::Workload workload = ops::OpRegistry::global().make_workload(spec);
  return form == PromptForm::kIr ? ir::print_function(workload.func) : workload.spec;
}

}  // namespace dragon::data
