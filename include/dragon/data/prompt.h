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

}  // namespace dragon::data
