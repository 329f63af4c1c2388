// Rule-based classification of kernel names.
#include "dragon/profile/kernel_classifier.h"

#include <cxxabi.h>

#include <cstdlib>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::profile {
namespace {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return fields;
}

}  // namespace

KernelClassifier KernelClassifier::from_text(std::string_view text, std::string_view source) {
  KernelClassifier c;
  int line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    auto fail = [&](const std::string& why) {
      return UserError(fmt::format("{}:{}: {}", source, line_number, why));
    };
    std::vector<std::string_view> f = split_tabs(line);
    if (f[0] == "category") {
      if (f.size() != 4 || (f[2] != "addressable" && f[2] != "fixed")) {
        throw fail("expected category<TAB>NAME<TAB>addressable|fixed<TAB>description");
      }
      if (c.find(f[1])) throw fail(fmt::format("category {} declared twice", f[1]));
      c.categories_.push_back(Category{std::string(f[1]), f[2] == "addressable", std::string(f[3])});
    } else if (f[0] == "rule") {
      if (f.size() != 3 || f[2].empty()) throw fail("expected rule<TAB>CATEGORY<TAB>regex");
      if (!c.find(f[1])) throw fail(fmt::format("rule for undeclared category {}", f[1]));
      try {
        c.rules_.push_back(Rule{std::string(f[1]), std::regex(std::string(f[2]), std::regex::ECMAScript)});
      } catch (const std::regex_error& e) {
        throw fail(fmt::format("bad regular expression '{}': {}", f[2], e.what()));
      }
    } else {
      throw fail(fmt::format("unknown entry '{}' (expected category or rule)", f[0]));
    }
  }
  if (!c.find("other")) c.categories_.push_back(Category{"other", false, "everything no rule matched"});
  return c;
}

KernelClassifier KernelClassifier::from_file(const std::string& path) { return from_text(read_text_file(path), path); }

KernelClassifier KernelClassifier::builtin() {
  return from_file(std::string(DRAGON_DATA_DIR) + "/profile/kernel_categories.tsv");
}

const Category* KernelClassifier::find(std::string_view name) const {
  for (const Category& c : categories_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const std::string& KernelClassifier::classify(const std::string& name) const {
  auto cached = cache_.find(name);
  if (cached != cache_.end()) return cached->second;
  std::string category = "other";
  for (const Rule& rule : rules_) {
    if (std::regex_search(name, rule.pattern)) {
      category = rule.category;
      break;
    }
  }
  return cache_.emplace(name, std::move(category)).first->second;
}

std::string demangle(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out(text);
  std::free(text);
  return out;
}

}  // namespace dragon::profile
