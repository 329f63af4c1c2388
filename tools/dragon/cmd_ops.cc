// dragon ops: the table of operator kinds, their parameters and defaults.
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

struct OpsOptions {
  bool json = false;
  std::string category;
};

std::string describe_param(const ops::OpParam& p) {
  std::string text = p.name + "=";
  text += p.default_value ? ops::format_param_value(*p.default_value) : "<" + std::string(ops::param_type_name(p.type)) + ">";
  return text;
}

int run_ops(const OpsOptions& options) {
  const auto& kinds = ops::OpRegistry::global().kinds();
  if (options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ops::OpKind& op : kinds) {
      if (!options.category.empty() && op.category != options.category) continue;
      nlohmann::json params = nlohmann::json::array();
      for (const ops::OpParam& p : op.params) {
        nlohmann::json param = {{"name", p.name}, {"type", ops::param_type_name(p.type)}, {"help", p.help}};
        param["default"] = p.default_value ? nlohmann::json(ops::format_param_value(*p.default_value)) : nullptr;
        if (!p.choices.empty()) param["choices"] = p.choices;
        params.push_back(param);
      }
      out.push_back({{"name", op.name}, {"category", op.category}, {"summary", op.summary}, {"params", params}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  // Grouped by category, in registration order within each.
  std::map<std::string, std::vector<const ops::OpKind*>> by_category;
  std::vector<std::string> order;
  for (const ops::OpKind& op : kinds) {
    if (!options.category.empty() && op.category != options.category) continue;
    if (!by_category.count(op.category)) order.push_back(op.category);
    by_category[op.category].push_back(&op);
  }
  if (order.empty()) throw UserError("no op kinds in category '" + options.category + "'");
  size_t count = 0;
  for (const std::string& category : order) {
    std::printf("%s\n", category.c_str());
    for (const ops::OpKind* op : by_category[category]) {
      std::string params;
      for (const ops::OpParam& p : op->params) params += (params.empty() ? "" : ",") + describe_param(p);
      std::printf("  %-26s %s\n", op->name.c_str(), op->summary.c_str());
      std::printf("  %-26s %s\n", "", params.c_str());
      ++count;
    }
  }
  std::printf("%zu op kinds. Spec syntax: OP:param=value,... (defaults as shown; <type> = required).\n", count);
  return 0;
}

}  // namespace

Command add_ops_command(CLI::App& app) {
  auto options = std::make_shared<OpsOptions>();
  CLI::App* sub = app.add_subcommand("ops", "List operator kinds, their parameters and defaults");
  sub->add_flag("--json", options->json, "Print JSON instead of a table");
  sub->add_option("--category", options->category, "Only this category (matmul, conv, norm, ...)");
  return [options] { return run_ops(*options); };
}

}  // namespace dragon::cli
