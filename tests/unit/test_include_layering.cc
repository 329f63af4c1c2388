// Dependencies point one way (CONVENTIONS.md): no component includes a header of one it
// does not build on. Reads every #include under src/<component>/ and
// include/dragon/<component>/ and names each offending file:line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace dragon {
namespace {

namespace fs = std::filesystem;

// Each component and the components it builds on directly: CONVENTIONS.md's order read as
// the graph it is (interp, the oracle, and runtime, the launch layer, are separate branches
// above tensor). A component may include its own headers and those of every component it
// reaches through this table, nothing else.
const std::map<std::string, std::vector<std::string>> kBuildsOn = {
    {"support", {}},
    {"ir", {"support"}},
    {"tensor", {"ir"}},
    {"ops", {"ir"}},
    {"interp", {"tensor"}},
    {"schedule", {"ir"}},
    {"profile", {"support"}},
    {"suites", {"support"}},
    {"script", {"schedule"}},
    {"decode", {"script"}},  // constrained decoding for the model
    {"lower", {"ir"}},
    {"codegen", {"lower"}},
    {"runtime", {"codegen", "tensor"}},
    {"harness", {"runtime", "interp"}},
    {"db", {"script", "runtime"}},  // the tuning database
    {"search", {"script", "harness", "db", "ops"}},  // ops: workloads named by spec
    {"data", {"search", "ops", "db"}},  // workload corpus and training examples
    {"model", {"decode", "search", "data"}},  // the little dragon (libtorch inside only)
    {"bench", {"search", "suites", "ops"}},
};

// The components `component` reaches through kBuildsOn (itself excluded unless on a cycle).
std::set<std::string> reachable_from(const std::string& component) {
  std::set<std::string> seen;
  std::vector<std::string> pending = kBuildsOn.at(component);
  while (!pending.empty()) {
    std::string next = pending.back();
    pending.pop_back();
    if (!seen.insert(next).second) continue;
    auto it = kBuildsOn.find(next);
    if (it != kBuildsOn.end()) pending.insert(pending.end(), it->second.begin(), it->second.end());
  }
  return seen;
}

struct ForbiddenInclude {
  std::string file;  // relative to the source root
  int line = 0;
  std::string includer, included;  // components
  std::string text;                // what the #include names
};

// The component a file of the tree belongs to: src/<c>/... or include/dragon/<c>/....
std::optional<std::string> component_of(const fs::path& relative) {
  std::vector<std::string> parts;
  for (const fs::path& part : relative) parts.push_back(part.string());
  if (parts.size() >= 3 && parts[0] == "src") return parts[1];
  if (parts.size() >= 4 && parts[0] == "include" && parts[1] == "dragon") return parts[2];
  return std::nullopt;
}

// The component an #include names: "dragon/<c>/..." is a public header; any other quoted
// path is resolved against the including file's folder and belongs to the component whose
// folder it lands in. System and third-party headers have none.
std::optional<std::string> included_component(const fs::path& root, const fs::path& file, const std::string& name) {
  static const std::regex kPublic(R"(^dragon/([a-z_0-9]+)/)");
  std::smatch m;
  if (std::regex_search(name, m, kPublic)) return m[1].str();
  fs::path resolved = (file.parent_path() / name).lexically_normal();
  if (!fs::exists(resolved)) return std::nullopt;
  return component_of(resolved.lexically_relative(root));
}

// Every include under root/src and root/include/dragon of a component the includer does not
// build on. Components missing from kBuildsOn are reported in `unknown`.
std::vector<ForbiddenInclude> find_forbidden_includes(const fs::path& root, std::set<std::string>& unknown) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::vector<ForbiddenInclude> found;
  for (const fs::path& top : {root / "src", root / "include" / "dragon"}) {
    if (!fs::exists(top)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(top)) {
      if (!entry.is_regular_file()) continue;
      const fs::path relative = entry.path().lexically_relative(root);
      std::optional<std::string> includer = component_of(relative);
      if (!includer) continue;  // src/CMakeLists.txt
      if (!kBuildsOn.contains(*includer)) {
        unknown.insert(*includer);
        continue;
      }
      const std::set<std::string> allowed = reachable_from(*includer);
      std::ifstream in(entry.path());
      std::string text;
      int number = 0;
      while (std::getline(in, text)) {
        ++number;
        if (text.find("include") == std::string::npos) continue;
        std::smatch m;
        if (!std::regex_search(text, m, kInclude)) continue;
        std::optional<std::string> included = included_component(root, entry.path(), m[1].str());
        if (!included || *included == *includer) continue;
        if (!kBuildsOn.contains(*included)) {
          unknown.insert(*included);
          continue;
        }
        if (!allowed.contains(*included)) {
          found.push_back({relative.generic_string(), number, *includer, *included, m[1].str()});
        }
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const ForbiddenInclude& a, const ForbiddenInclude& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  return found;
}

std::string join(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "nothing" : text;
}

TEST(IncludeLayering, NoComponentIncludesOneItDoesNotBuildOn) {
  std::set<std::string> unknown;
  for (const ForbiddenInclude& f : find_forbidden_includes(DRAGON_SOURCE_DIR, unknown)) {
    ADD_FAILURE() << f.file << ":" << f.line << ": " << f.includer << " includes \"" << f.text << "\", but "
                  << f.includer << " does not build on " << f.included << " (it builds on "
                  << join(reachable_from(f.includer)) << ")";
  }
  for (const std::string& component : unknown) {
    ADD_FAILURE() << "component '" << component << "' is not in kBuildsOn (" << __FILE__
                  << "): add it with the components it builds on";
  }
}

TEST(IncludeLayering, TheOrderHasNoCycle) {
  for (const auto& [component, builds_on] : kBuildsOn) {
    EXPECT_FALSE(reachable_from(component).contains(component)) << component << " reaches itself";
    for (const std::string& below : builds_on) EXPECT_TRUE(kBuildsOn.contains(below)) << component << " -> " << below;
  }
}

// The scanner itself, on a small tree: a check that finds nothing must be able to.
class IncludeLayeringScanner : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("dragon_layering_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  fs::path root_;
};

TEST_F(IncludeLayeringScanner, FindsUpwardSidewaysAndRelativeIncludes) {
  write("include/dragon/schedule/schedule.h", "#pragma once\n");
  write("include/dragon/ir/expr.h", "#pragma once\n");
  write("include/dragon/interp/interpreter.h", "#pragma once\n");
  write("src/schedule/ir_tree.h", "#pragma once\n");
  write("src/schedule/split.cc", "#include \"dragon/ir/expr.h\"\n#include \"ir_tree.h\"\n#include <vector>\n");
  write("src/ir/expr.cc", "// up\n#include \"dragon/ir/expr.h\"\n#include \"dragon/schedule/schedule.h\"\n");
  write("src/ops/matmul.cc", "#include \"../schedule/ir_tree.h\"\n");  // sideways, through a relative path
  write("include/dragon/ir/buffer.h", "  #  include <dragon/runtime/build.h>\n");
  write("src/runtime/build.cc", "#include \"dragon/ir/expr.h\"\n#include \"dragon/interp/interpreter.h\"\n");
  write("src/harness/verify.cc", "#include \"dragon/interp/interpreter.h\"\n#include \"dragon/ir/expr.h\"\n");
  std::set<std::string> unknown;
  std::vector<ForbiddenInclude> found = find_forbidden_includes(root_, unknown);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].file, "include/dragon/ir/buffer.h");
  EXPECT_EQ(found[0].included, "runtime");
  EXPECT_EQ(found[1].file, "src/ir/expr.cc");
  EXPECT_EQ(found[1].line, 3);
  EXPECT_EQ(found[1].included, "schedule");
  EXPECT_EQ(found[2].file, "src/ops/matmul.cc");
  EXPECT_EQ(found[2].includer, "ops");
  EXPECT_EQ(found[2].included, "schedule");
  EXPECT_EQ(found[3].file, "src/runtime/build.cc");  // below in the order, but not built on
  EXPECT_EQ(found[3].line, 2);
  EXPECT_EQ(found[3].included, "interp");
  EXPECT_TRUE(unknown.empty());
}

TEST_F(IncludeLayeringScanner, NamesComponentsMissingFromTheOrder) {
  write("src/oracle/rules.cc", "#include \"dragon/ir/expr.h\"\n");
  write("src/ir/expr.cc", "#include \"dragon/decoder/line.h\"\n");
  std::set<std::string> unknown;
  EXPECT_TRUE(find_forbidden_includes(root_, unknown).empty());
  EXPECT_EQ(unknown, (std::set<std::string>{"decoder", "oracle"}));
}

}  // namespace
}  // namespace dragon
