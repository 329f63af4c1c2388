// Sorts GPU activity into categories (vendor GEMM, attention, convolution, embedding,
// norm and softmax, ...) by regular-expression rules over demangled names, first match
// wins. The rules and which categories this project's generator targets are data.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dragon::profile {

struct Category {
  std::string name;
  bool addressable = false;  // kernels of this kind are what Little Dragon generates
  std::string description;
};

class KernelClassifier {
 public:
  // Rules text, one entry a line, tab-separated, '#' comments:
  //   category<TAB>NAME<TAB>addressable|fixed<TAB>description
  //   rule<TAB>NAME<TAB>ECMAScript regex (searched in the demangled name)
  // Throws UserError "SOURCE:LINE: what" on bad lines, unknown categories, bad regexes.
  static KernelClassifier from_text(std::string_view text, std::string_view source);
  static KernelClassifier from_file(const std::string& path);
  // The rules shipped in data/profile/kernel_categories.tsv.
  static KernelClassifier builtin();

  // The category of a (demangled) name; "other" when no rule matches.
  const std::string& classify(const std::string& name) const;
  const std::vector<Category>& categories() const { return categories_; }
  const Category* find(std::string_view name) const;

 private:
  struct Rule {
    std::string category;
    std::regex pattern;
  };
  std::vector<Category> categories_;
  std::vector<Rule> rules_;
  mutable std::unordered_map<std::string, std::string> cache_;
};

// Demangles a C++ symbol; returns the input unchanged when it is not one.
std::string demangle(const std::string& name);

}  // namespace dragon::profile
