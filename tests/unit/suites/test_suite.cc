// The suite files as the CLI reads them: all 100 KernelBench level-1 problems in id order,
// DLRM-Bench's R1-R12, problem selection, and clear errors for bad files and names.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dragon/suites/suite.h"
#include "dragon/support/error.h"

namespace dragon::suites {
namespace {

std::vector<std::string> ids(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  for (const Problem& p : problems) out.push_back(p.id);
  return out;
}

TEST(Suites, KernelBenchLevelOneHasItsHundredProblemsInOrder) {
  Suite s = load_suite("kernelbench-l1");
  ASSERT_EQ(s.problems.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.problems[i].id, std::to_string(i + 1));
  EXPECT_EQ(s.problems[0].name, "1_Square_matrix_multiplication_");
  EXPECT_EQ(s.problems[0].spec, "matmul:m=4096,n=4096,k=4096");
  EXPECT_EQ(s.problems[22].name, "23_Softmax");
  EXPECT_EQ(s.problems[22].output, "4096x393216");
  EXPECT_NE(s.problems[22].where.find("parts/kb_activation.tsv:"), std::string::npos);
}

TEST(Suites, DlrmBenchCoversR1ToR12) {
  Suite s = load_suite("dlrm");
  for (int r = 1; r <= 12; ++r) {
    std::vector<Problem> selected = select_problems(s, "R" + std::to_string(r));
    EXPECT_FALSE(selected.empty()) << "R" << r;
  }
  EXPECT_EQ(select_problems(s, "R1").front().name, "embedding_bag_sum_fixed_l");
}

TEST(Suites, SelectionTakesIdsRangesAndVariantFamilies) {
  Suite kb = load_suite("kernelbench-l1");
  EXPECT_EQ(ids(select_problems(kb, "3-5,23,4")), (std::vector<std::string>{"3", "4", "5", "23"}));
  EXPECT_EQ(select_problems(kb, "").size(), 100u);
  Suite dlrm = load_suite("dlrm");
  for (const Problem& p : select_problems(dlrm, "R9")) EXPECT_EQ(p.id.rfind("R9", 0), 0u) << p.id;
  EXPECT_EQ(ids(select_problems(dlrm, "R2a")), (std::vector<std::string>{"R2a"}));
  EXPECT_THROW(select_problems(kb, "101"), UserError);
  EXPECT_THROW(select_problems(dlrm, "R13"), UserError);
}

TEST(Suites, BadNamesAndRowsAreUserErrorsSayingWhere) {
  try {
    load_suite("kernelbench-l9");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("known: kernelbench-l1, dlrm"), std::string::npos) << e.what();
  }
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "suites-bad";
  std::filesystem::create_directories(dir / "parts");
  std::ofstream(dir / "parts" / "kb_x.tsv") << "# comment\n1\tone\tmatmul\t4x4\n2\ttwo fields only\n";
  try {
    load_suite("kernelbench-l1", dir.string());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("parts/kb_x.tsv:3: expected 4 tab-separated fields"), std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "parts" / "kb_x.tsv") << "1\tone\tmatmul\t4x4\n1\tagain\trelu\t4\n";
  EXPECT_THROW(load_suite("kernelbench-l1", dir.string()), UserError);
}

}  // namespace
}  // namespace dragon::suites
