// How a workload becomes the model's prompt, written once for the data set (token
// statistics, checks) and the model (training and sampling frame examples with it): the
// canonical IR text of the function its op spec builds, or the op spec itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dragon::data {

enum class PromptForm : uint8_t { kIr, kSpec };

// The prompt of the workload `spec` in `form`: for kIr the canonical IR text of the function
// it builds (ir::print_function), for kSpec the canonical spec. Throws UserError when the
// spec does not build.
std::string prompt_text(std::string_view spec, PromptForm form = PromptForm::kIr);

// "ir" or "spec": the form's name in example lines, model metadata and the CLI.
std::string_view prompt_form_name(PromptForm form);
// The form named `name`; throws UserError "WHERE: prompt 'x' is neither 'ir' nor 'spec'".
PromptForm parse_prompt_form(std::string_view name, std::string_view where);

}  // namespace dragon::data
