// The benchmark suite files: every KernelBench level-1 problem (bench/suites/parts/kb_*.tsv,
// one file per op family) and every DLRM-Bench problem (bench/suites/dlrm.tsv) maps to an op
// spec that builds at the problem's full shape with PyTorch's output shape. Building only:
// the shapes are far too large for the interpreter.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"

namespace dragon::ops {
namespace {

// One problem: id, name, op spec (or "unsupported"), output shape (or the reason).
struct SuiteRow {
  std::string file;
  std::string id, name, spec, output;
};

std::vector<SuiteRow> read_suite(const std::filesystem::path& path) {
  std::vector<SuiteRow> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string field; std::getline(row, field, '\t');) fields.push_back(field);
    EXPECT_EQ(fields.size(), 4u) << path.filename() << ": " << line;
    if (fields.size() != 4) continue;
    rows.push_back({path.filename().string(), fields[0], fields[1], fields[2], fields[3]});
  }
  return rows;
}

std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> shape;
  if (text == "scalar") return shape;
  std::stringstream in(text);
  for (std::string dim; std::getline(in, dim, 'x');) shape.push_back(std::stoll(dim));
  return shape;
}

void expect_builds_with_output_shape(const SuiteRow& row) {
  SCOPED_TRACE(row.file + " " + row.id + " " + row.spec);
  Workload w = OpRegistry::global().make_workload(row.spec);
  std::vector<ir::Buffer> outputs = w.func.outputs();
  ASSERT_FALSE(outputs.empty());
  EXPECT_EQ(outputs[0]->shape, parse_shape(row.output));
}

TEST(SuiteFiles, EveryKernelBenchLevelOneProblemBuildsOnceWithTorchsOutputShape) {
  std::map<int, std::string> file_of;
  for (const auto& entry : std::filesystem::directory_iterator(DRAGON_SOURCE_DIR "/bench/suites/parts")) {
    std::string name = entry.path().filename().string();
    if (name.rfind("kb_", 0) != 0 || entry.path().extension() != ".tsv") continue;
    for (const SuiteRow& row : read_suite(entry.path())) {
      int id = std::stoi(row.id);
      EXPECT_TRUE(file_of.emplace(id, name).second) << "problem " << id << " is in " << file_of[id] << " and " << name;
      EXPECT_EQ(row.name.rfind(row.id + "_", 0), 0u) << "problem name " << row.name << " does not start with its id";
      expect_builds_with_output_shape(row);
    }
  }
  for (int id = 1; id <= 100; ++id) EXPECT_TRUE(file_of.count(id)) << "KernelBench level-1 problem " << id << " has no spec";
}

TEST(SuiteFiles, EveryDlrmBenchProblemBuildsOrSaysWhyNot) {
  std::set<std::string> problems;
  for (const SuiteRow& row : read_suite(DRAGON_SOURCE_DIR "/bench/suites/dlrm.tsv")) {
    // R2a, R2b and R9a..R9h are variants and layers of R2 and R9.
    std::string problem = row.id;
    while (!problem.empty() && std::isalpha(static_cast<unsigned char>(problem.back())) && problem.size() > 2) {
      problem.pop_back();
    }
    problems.insert(problem);
    if (row.spec == "unsupported") {
      EXPECT_FALSE(row.output.empty()) << row.id << " is unsupported without a reason";
      continue;
    }
    expect_builds_with_output_shape(row);
  }
  for (int r = 1; r <= 12; ++r) EXPECT_TRUE(problems.count("R" + std::to_string(r))) << "DLRM-Bench R" << r << " missing";
}

}  // namespace
}  // namespace dragon::ops
