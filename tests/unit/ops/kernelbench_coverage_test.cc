// The KernelBench level-1 suite, split by op family in bench/suites/parts/kb_*.tsv, maps
// every problem id 1..100 to exactly one op spec (each family's test builds its specs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace dragon::ops {
namespace {

TEST(KernelBenchCoverage, EveryLevelOneProblemHasExactlyOneSpec) {
  std::map<int, std::string> spec_of;
  std::string dir = std::string(DRAGON_SOURCE_DIR) + "/bench/suites/parts";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("kb_", 0) != 0 || entry.path().extension() != ".tsv") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string id, problem, spec;
      std::getline(fields, id, '\t');
      std::getline(fields, problem, '\t');
      std::getline(fields, spec, '\t');
      int number = std::stoi(id);
      EXPECT_TRUE(spec_of.emplace(number, spec).second) << "problem " << number << " appears twice (" << name << ")";
      EXPECT_EQ(problem.rfind(id + "_", 0), 0u) << "problem file name " << problem << " does not start with its id";
    }
  }
  for (int id = 1; id <= 100; ++id) EXPECT_TRUE(spec_of.count(id)) << "KernelBench level-1 problem " << id << " has no spec";
  EXPECT_EQ(spec_of.size(), 100u);
}

}  // namespace
}  // namespace dragon::ops
