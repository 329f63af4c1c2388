// End-to-end projection from per-category speedups (Amdahl's law).
#include "dragon/profile/projection.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "dragon/support/error.h"

namespace dragon::profile {
namespace {

std::optional<double> to_double(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Projection project(const std::vector<std::pair<double, CategorySpeedup>>& parts) {
  double share_total = 0;
  double saved = 0;
  for (const auto& [share, s] : parts) {
    if (share < 0 || s.speedup <= 0 || s.win_fraction < 0 || s.win_fraction > 1) {
      throw UserError(fmt::format("category {}: share {}, speedup {} and win fraction {} must be non-negative, "
                                  "positive and within [0, 1]",
                                  s.category, share, s.speedup, s.win_fraction));
    }
    share_total += share;
    saved += share * s.win_fraction * (1.0 - 1.0 / s.speedup);
  }
  if (share_total > 1.0 + 1e-9) throw UserError(fmt::format("category shares sum to {} > 1", share_total));
  return Projection{saved, 1.0 / (1.0 - saved)};
}

Projection project(const ProfileReport& report, const std::vector<CategorySpeedup>& speedups) {
  std::vector<std::pair<double, CategorySpeedup>> parts;
  for (const CategorySpeedup& s : speedups) {
    auto it = std::find_if(report.categories.begin(), report.categories.end(),
                           [&](const CategoryTime& c) { return c.category == s.category; });
    if (it == report.categories.end()) {
      std::string names;
      for (const CategoryTime& c : report.categories) names += (names.empty() ? "" : ", ") + c.category;
      throw UserError(fmt::format("unknown category '{}'; categories: {}", s.category, names));
    }
    parts.emplace_back(it->share, s);
  }
  return project(parts);
}

CategorySpeedup parse_category_speedup(const std::string& text) {
  auto bad = [&] {
    return UserError(fmt::format("'{}' is not CATEGORY=SPEEDUP or CATEGORY=SPEEDUP@WIN_FRACTION "
                                 "(e.g. norm_softmax=1.8 or embedding_sparse=1.552@0.417)",
                                 text));
  };
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw bad();
  CategorySpeedup s;
  s.category = text.substr(0, eq);
  std::string_view rest(text);
  rest.remove_prefix(eq + 1);
  size_t at = rest.find('@');
  auto speedup = to_double(rest.substr(0, at));
  if (!speedup || *speedup <= 0) throw bad();
  s.speedup = *speedup;
  if (at != std::string_view::npos) {
    auto win = to_double(rest.substr(at + 1));
    if (!win || *win < 0 || *win > 1) throw bad();
    s.win_fraction = *win;
  }
  return s;
}

}  // namespace dragon::profile
