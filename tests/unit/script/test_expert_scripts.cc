// The hand-written expert scripts of data/scripts/expert/ (listed with their op specs in
// index.txt) are canonical, apply to their workloads and compute what the unscheduled
// function computes on the interpreter.
#include <gtest/gtest.h>

#include <sstream>

#include "dragon/ir/structural_equal.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::script {
namespace {

struct ExpertScript {
  std::string file;
  std::string spec;
};

std::vector<ExpertScript> expert_scripts() {
  const std::string dir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/";
  std::istringstream index(read_text_file(dir + "index.txt"));
  std::vector<ExpertScript> out;
  std::string line;
  while (std::getline(index, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ExpertScript s;
    fields >> s.file >> s.spec;
    s.file = dir + s.file;
    out.push_back(s);
  }
  return out;
}

TEST(ExpertScripts, AreCanonicalApplyAndPreserveSemantics) {
  std::vector<ExpertScript> scripts = expert_scripts();
  std::set<std::string> ops;
  for (const ExpertScript& s : scripts) {
    SCOPED_TRACE(s.file + " on " + s.spec);
    const std::string text = read_text_file(s.file);
    EXPECT_TRUE(is_canonical(text));
    schedule::Trace trace = decode(text);
    EXPECT_TRUE(decode(encode(trace)) == trace);
    EXPECT_TRUE(schedule::trace_from_json(schedule::trace_to_json(trace)) == trace);
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(s.spec).func;
    schedule::Schedule sch = schedule::replay(trace, func);
    EXPECT_FALSE(ir::structural_equal(sch.func(), func)) << "the script changes nothing";
    EXPECT_TRUE(schedule::testing::same_outputs(func, sch.func(), 11, /*exact=*/false));
    ops.insert(s.spec.substr(0, s.spec.find(':')));
  }
  // GEMM, conv2d, softmax, layer norm, a reduction and an embedding bag at least.
  for (const char* op : {"matmul", "conv2d", "softmax", "layer_norm", "sum", "embedding_bag"}) {
    EXPECT_TRUE(ops.count(op)) << op;
  }
}

}  // namespace
}  // namespace dragon::script
