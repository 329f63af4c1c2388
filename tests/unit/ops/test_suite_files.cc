// The benchmark suite files: every KernelBench level-1 problem (bench/suites/parts/kb_*.tsv,
// one file per op family) and every DLRM-Bench problem (bench/suites/dlrm.tsv) maps to an op
// spec that builds at the problem's full shape with PyTorch's output shape. Building only:
// the shapes are far too large for the interpreter.
#include <gtest/gtest.h>

#include <set>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/suites/suite.h"

namespace dragon::ops {
namespace {

std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> shape;
  if (text == "scalar") return shape;
  std::stringstream in(text);
  for (std::string dim; std::getline(in, dim, 'x');) shape.push_back(std::stoll(dim));
  return shape;
}

void expect_builds_with_output_shape(const suites::Problem& row) {
  SCOPED_TRACE(row.where + " " + row.id + " " + row.spec);
  Workload w = OpRegistry::global().make_workload(row.spec);
  std::vector<ir::Buffer> outputs = w.func.outputs();
  ASSERT_FALSE(outputs.empty());
  EXPECT_EQ(outputs[0]->shape, parse_shape(row.output));
}

TEST(SuiteFiles, EveryKernelBenchLevelOneProblemBuildsOnceWithTorchsOutputShape) {
  // load_suite refuses a repeated id; it orders the problems by id.
  suites::Suite suite = suites::load_suite("kernelbench-l1", DRAGON_SOURCE_DIR "/bench/suites");
  ASSERT_EQ(suite.problems.size(), 100u);
  for (size_t i = 0; i < suite.problems.size(); ++i) {
    const suites::Problem& row = suite.problems[i];
    EXPECT_EQ(row.id, std::to_string(i + 1)) << "KernelBench level-1 problem " << i + 1 << " has no spec";
    EXPECT_EQ(row.name.rfind(row.id + "_", 0), 0u) << "problem name " << row.name << " does not start with its id";
    expect_builds_with_output_shape(row);
  }
}

TEST(SuiteFiles, EveryDlrmBenchProblemBuildsOrSaysWhyNot) {
  std::set<std::string> problems;
  for (const suites::Problem& row : suites::load_suite("dlrm", DRAGON_SOURCE_DIR "/bench/suites").problems) {
    // R2a, R2b and R9a..R9h are variants and layers of R2 and R9.
    std::string problem = row.id;
    while (!problem.empty() && std::isalpha(static_cast<unsigned char>(problem.back())) && problem.size() > 2) {
      problem.pop_back();
    }
    problems.insert(problem);
    if (!row.supported()) {
      EXPECT_FALSE(row.output.empty()) << row.id << " is unsupported without a reason";
      continue;
    }
    expect_builds_with_output_shape(row);
  }
  for (int r = 1; r <= 12; ++r) EXPECT_TRUE(problems.count("R" + std::to_string(r))) << "DLRM-Bench R" << r << " missing";
}

TEST(SuiteFiles, EveryModelsProblemBuildsAndEachModelIsThere) {
  std::set<char> models;
  for (const suites::Problem& row : suites::load_suite("models", DRAGON_SOURCE_DIR "/bench/suites").problems) {
    ASSERT_TRUE(row.supported()) << row.id;
    models.insert(row.id[0]);
    expect_builds_with_output_shape(row);
  }
  // GPT-2, LLaMA, BERT, ViT, ResNet-50, MobileNetV2, DLRM.
  EXPECT_EQ(models, (std::set<char>{'G', 'L', 'B', 'V', 'R', 'M', 'D'}));
}

}  // namespace
}  // namespace dragon::ops
