// Suite files (suite.h): tab-separated rows, '#' comments; kernelbench-l1 is the union of
// parts/kb_*.tsv ordered by numeric id, dlrm is dlrm.tsv and models
// models.tsv, in file order.
#include "dragon/suites/suite.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::suites {
namespace {

std::vector<Problem> read_rows(const std::filesystem::path& path, const std::string& label) {
  std::vector<Problem> rows;
  std::istringstream lines(read_text_file(path.string()));
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string field; std::getline(row, field, '\t');) fields.push_back(field);
    const std::string where = fmt::format("{}:{}", label, number);
    if (fields.size() != 4) {
      throw UserError(fmt::format("{}: expected 4 tab-separated fields (id, name, op spec, output shape), got {}",
                                  where, fields.size()));
    }
    Problem p{fields[0], fields[1], fields[2], fields[3], where};
    if (p.spec == "unsupported") p.spec.clear();
    rows.push_back(std::move(p));
  }
  return rows;
}

bool is_number(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

const std::vector<std::string>& suite_names() {
  static const std::vector<std::string> names = {"kernelbench-l1", "dlrm", "models"};
  return names;
}

std::string default_suites_dir() {
  if (const char* dir = std::getenv("DRAGON_SUITES_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::string(DRAGON_SOURCE_DIR) + "/bench/suites";
}

Suite load_suite(std::string_view name, const std::string& suites_dir) {
  namespace fs = std::filesystem;
  Suite suite{std::string(name), {}};
  if (name == "kernelbench-l1") {
    std::vector<fs::path> parts;
    const fs::path dir = fs::path(suites_dir) / "parts";
    if (!fs::is_directory(dir)) throw UserError(fmt::format("suite {}: no folder {}", name, dir.string()));
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("kb_", 0) == 0 && entry.path().extension() == ".tsv") parts.push_back(entry.path());
    }
    for (const fs::path& part : parts) {
      for (Problem& p : read_rows(part, "parts/" + part.filename().string())) {
        if (!is_number(p.id)) throw UserError(fmt::format("{}: id '{}' is not a number", p.where, p.id));
        suite.problems.push_back(std::move(p));
      }
    }
    std::stable_sort(suite.problems.begin(), suite.problems.end(),
                     [](const Problem& a, const Problem& b) { return std::stoi(a.id) < std::stoi(b.id); });
  } else if (name == "dlrm") {
    suite.problems = read_rows(fs::path(suites_dir) / "dlrm.tsv", "dlrm.tsv");
  } else if (name == "models") {
    suite.problems = read_rows(fs::path(suites_dir) / "models.tsv", "models.tsv");
  } else {
    throw UserError(fmt::format("unknown suite '{}'; known: {}", name, fmt::join(suite_names(), ", ")));
  }
  for (size_t i = 1; i < suite.problems.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (suite.problems[i].id == suite.problems[j].id) {
        throw UserError(fmt::format("{}: id {} again (first at {})", suite.problems[i].where, suite.problems[i].id,
                                    suite.problems[j].where));
      }
    }
  }
  return suite;
}

std::vector<Problem> select_problems(const Suite& suite, std::string_view ids) {
  if (ids.empty()) return suite.problems;
  std::vector<Problem> selected;
  auto take = [&](const Problem& p) {
    for (const Problem& s : selected) {
      if (s.id == p.id) return;
    }
    selected.push_back(p);
  };
  std::stringstream list{std::string(ids)};
  for (std::string item; std::getline(list, item, ',');) {
    bool matched = false;
    const size_t dash = item.find('-');
    if (dash != std::string::npos && is_number(item.substr(0, dash)) && is_number(item.substr(dash + 1))) {
      const int first = std::stoi(item.substr(0, dash)), last = std::stoi(item.substr(dash + 1));
      for (const Problem& p : suite.problems) {
        if (is_number(p.id) && std::stoi(p.id) >= first && std::stoi(p.id) <= last) {
          take(p);
          matched = true;
        }
      }
    } else {
      for (const Problem& p : suite.problems) {
        // "R9" names the variants R9a..R9h; "R2a" names itself.
        const bool variant = p.id.size() == item.size() + 1 && p.id.rfind(item, 0) == 0 &&
                             std::isalpha(static_cast<unsigned char>(p.id.back())) && !is_number(item) &&
                             std::isdigit(static_cast<unsigned char>(item.back()));
        if (p.id == item || variant) {
          take(p);
          matched = true;
        }
      }
    }
    if (!matched) throw UserError(fmt::format("--problems: '{}' names no problem of {}", item, suite.name));
  }
  return selected;
}

}  // namespace dragon::suites
