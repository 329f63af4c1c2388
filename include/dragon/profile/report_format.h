// Renderings of a profile report: a terminal table, JSON, and a self-contained HTML page.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dragon/profile/profile_report.h"
#include "dragon/profile/projection.h"

namespace dragon::profile {

struct ProjectionInput {
  std::vector<CategorySpeedup> speedups;
  Projection result;
};

std::string format_report_text(const ProfileReport& report, const std::optional<ProjectionInput>& projection);
std::string format_report_json(const ProfileReport& report, const std::optional<ProjectionInput>& projection,
                               const std::string& command);
std::string format_report_html(const ProfileReport& report, const std::optional<ProjectionInput>& projection,
                               const std::string& command);

}  // namespace dragon::profile
