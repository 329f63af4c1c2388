// Reading, checking and expanding a model configuration file (model_file.h).
#include "model_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "corpus_rows.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

int index_of(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

}  // namespace

ModelFile ModelFile::read(const std::string& path, const std::string& label) {
  ModelFile file;
  file.label_ = label;
  file.family_ = std::filesystem::path(path).stem().string();
  const std::vector<CorpusRow> rows = read_corpus_rows(path, label);
  auto fail = [&](const CorpusRow& row, const std::string& why) -> UserError {
    return UserError(fmt::format("{}: {}", row_where(label, row), why));
  };

  // First pass: the variables (sweeps, then what model rows assign).
  std::vector<std::pair<const CorpusRow*, std::vector<std::pair<std::string, std::string>>>> model_rows;
  std::vector<const CorpusRow*> op_rows, let_rows;
  std::set<std::string> model_names, op_names;
  bool family_seen = false;
  for (const CorpusRow& row : rows) {
    if (row.kind == "family") {
      if (family_seen) throw fail(row, "a second family row");
      if (!is_identifier(row.name)) throw fail(row, fmt::format("family '{}' is not a name ([A-Za-z0-9_])", row.name));
      family_seen = true;
      file.family_ = row.name;
      file.description_ = row.value;
    } else if (row.kind == "sweep") {
      if (!is_identifier(row.name)) throw fail(row, fmt::format("sweep variable '{}' is not a name", row.name));
      if (index_of(file.variables_, row.name) >= 0) throw fail(row, fmt::format("variable '{}' swept twice", row.name));
      Sweep sweep{row.name, {}};
      for (const std::string& v : split_list(row.value)) {
        if (v.empty()) throw fail(row, fmt::format("an empty value in sweep '{}'", row.name));
        sweep.values.push_back(parse_template_value(v));
      }
      file.variables_.push_back(row.name);
      file.sweeps_.push_back(std::move(sweep));
    } else if (row.kind == "model") {
      if (!model_names.insert(row.name).second) throw fail(row, fmt::format("model '{}' defined twice", row.name));
      std::vector<std::pair<std::string, std::string>> assignments;
      for (const std::string& item : split_list(row.value)) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
          throw fail(row, fmt::format("model '{}': expected name=value, got '{}'", row.name, item));
        }
        assignments.emplace_back(item.substr(0, eq), item.substr(eq + 1));
        if (!is_identifier(assignments.back().first)) {
          throw fail(row, fmt::format("model '{}': '{}' is not a variable name", row.name, assignments.back().first));
        }
      }
      model_rows.emplace_back(&row, std::move(assignments));
    } else if (row.kind == "let") {
      if (!is_identifier(row.name)) throw fail(row, fmt::format("let variable '{}' is not a name", row.name));
      let_rows.push_back(&row);
    } else if (row.kind == "op") {
      if (!op_names.insert(row.name).second) throw fail(row, fmt::format("op row '{}' defined twice", row.name));
      op_rows.push_back(&row);
    } else {
      throw fail(row, fmt::format("unknown row kind '{}' (family, sweep, model, let, op)", row.kind));
    }
  }
  const size_t sweep_count = file.variables_.size();
  for (const auto& [row, assignments] : model_rows) {
    for (const auto& [name, value] : assignments) {
      const int slot = index_of(file.variables_, name);
      if (slot >= 0 && static_cast<size_t>(slot) < sweep_count) {
        throw fail(*row, fmt::format("model '{}' assigns '{}', which is swept", row->name, name));
      }
      if (slot < 0) file.variables_.push_back(name);
    }
  }
  const size_t model_var_end = file.variables_.size();
  for (const CorpusRow* row : let_rows) {
    if (index_of(file.variables_, row->name) >= 0) {
      throw fail(*row, fmt::format("let '{}' names a variable that already exists", row->name));
    }
    file.variables_.push_back(row->name);
  }
  if (model_rows.empty()) throw UserError(fmt::format("{}: no model rows", label));
  if (op_rows.empty()) throw UserError(fmt::format("{}: no op rows", label));

  // Second pass: models as value slots, templates against the variables.
  for (const auto& [row, assignments] : model_rows) {
    Model model{row->name, std::vector<TemplateValue>(file.variables_.size()),
                std::vector<bool>(file.variables_.size(), false), row->line};
    for (const auto& [name, value] : assignments) {
      const int slot = index_of(file.variables_, name);
      if (model.defined[slot]) throw fail(*row, fmt::format("model '{}' assigns '{}' twice", row->name, name));
      model.values[slot] = parse_template_value(value);
      model.defined[slot] = true;
    }
    for (size_t s = 0; s < sweep_count; ++s) model.defined[s] = true;
    file.models_.push_back(std::move(model));
  }
  // A let reads sweeps, model variables and earlier lets only.
  std::vector<std::vector<int>> sweep_deps(file.variables_.size());
  for (size_t s = 0; s < sweep_count; ++s) sweep_deps[s] = {static_cast<int>(s)};
  auto deps_of = [&](const SpecTemplate& t) {
    std::vector<int> deps;
    for (int var : t.used_variables()) deps.insert(deps.end(), sweep_deps[var].begin(), sweep_deps[var].end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    return deps;
  };
  auto check_models_define = [&](const SpecTemplate& t, const std::string& what, int line) {
    for (const Model& model : file.models_) {
      for (int var : t.used_variables()) {
        if (!model.defined[var]) {
          throw UserError(fmt::format("{}:{}: model '{}' does not define '{}', which {} ({}:{}) reads", label,
                                      model.line, model.name, file.variables_[var], what, label, line));
        }
      }
    }
  };
  for (size_t i = 0; i < let_rows.size(); ++i) {
    const CorpusRow& row = *let_rows[i];
    const int slot = static_cast<int>(model_var_end + i);
    Let let{slot, {}, row.line};
    try {
      let.expr = SpecTemplate::parse("{" + row.value + "}",
                                     std::vector<std::string>(file.variables_.begin(), file.variables_.begin() + slot));
    } catch (const UserError& e) {
      throw fail(row, fmt::format("let '{}': {}", row.name, e.what()));
    }
    check_models_define(let.expr, fmt::format("let '{}'", row.name), row.line);
    sweep_deps[slot] = deps_of(let.expr);
    for (Model& model : file.models_) model.defined[slot] = true;
    file.lets_.push_back(std::move(let));
  }
  for (const CorpusRow* row : op_rows) {
    Op op{row->name, row->value, {}, row->line};
    try {
      op.spec = SpecTemplate::parse(row->value, file.variables_);
    } catch (const UserError& e) {
      throw fail(*row, fmt::format("op row '{}': {}", row->name, e.what()));
    }
    check_models_define(op.spec, fmt::format("op row '{}'", op.name), op.line);
    file.op_sweeps_.push_back(deps_of(op.spec));
    file.ops_.push_back(std::move(op));
  }

  // Each op row must give a spec that parses, checked on the first binding.
  std::vector<TemplateValue> first = file.models_.front().values;
  for (size_t s = 0; s < sweep_count; ++s) {
    if (file.sweeps_[s].values.empty()) throw UserError(fmt::format("{}: sweep '{}' has no values", label, file.sweeps_[s].name));
    first[s] = file.sweeps_[s].values.front();
  }
  file.bind_lets(first, file.models_.front().name);
  for (const Op& op : file.ops_) {
    try {
      ops::OpRegistry::global().parse(op.spec.expand(first));
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}:{}: op row '{}' (model '{}'): {}", label, op.line, op.name,
                                  file.models_.front().name, e.what()));
    }
  }
  return file;
}

void ModelFile::bind_lets(std::vector<TemplateValue>& values, const std::string& model) const {
  for (const Let& let : lets_) {
    try {
      values[let.slot] = parse_template_value(let.expr.expand(values));
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}:{}: model '{}': let '{}': {}", label_, let.line, model, variables_[let.slot],
                                  e.what()));
    }
  }
}

int64_t ModelFile::candidate_count() const {
  int64_t points = 1;
  for (const Sweep& s : sweeps_) points *= static_cast<int64_t>(s.values.size());
  return static_cast<int64_t>(models_.size()) * points * static_cast<int64_t>(ops_.size());
}

void ModelFile::expand(const Visit& visit) const {
  for (const Model& model : models_) {
    std::vector<TemplateValue> values = model.values;
    std::vector<size_t> point(sweeps_.size(), 0);
    while (true) {
      for (size_t s = 0; s < sweeps_.size(); ++s) values[s] = sweeps_[s].values[point[s]];
      bind_lets(values, model.name);
      for (size_t o = 0; o < ops_.size(); ++o) {
        const Op& op = ops_[o];
        std::string origin = model.name;
        for (int var : op_sweeps_[o]) origin += fmt::format(" {}={}", variables_[var], format_template_value(values[var]));
        origin += " " + op.name;
        const std::string where = fmt::format("{}:{}", label_, op.line);
        std::string spec;
        try {
          spec = op.spec.expand(values);
        } catch (const UserError& e) {
          throw UserError(fmt::format("{}: {}: {}", where, origin, e.what()));
        }
        visit(spec, origin, where);
      }
      // Next sweep point: the last sweep varies fastest.
      size_t s = sweeps_.size();
      while (s > 0) {
        --s;
        if (++point[s] < sweeps_[s].values.size()) break;
        point[s] = 0;
        if (s == 0) { s = sweeps_.size() + 1; break; }
      }
      if (sweeps_.empty() || s == sweeps_.size() + 1) break;
    }
  }
}

}  // namespace dragon::data
