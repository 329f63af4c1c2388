// Rule sets as data (rule_set.h): the built-in files parse and say what MetaSchedule's
// defaults say, a user file extends them per op kind or overrides single parameters and
// changes the design space accordingly, JSON round-trips, and every mistake in a file is a
// UserError naming the file and the JSON path.
#include <gtest/gtest.h>

#include <algorithm>

#include "dragon/ops/op_registry.h"
#include "dragon/search/design_space.h"
#include "dragon/search/rule_set.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::search {
namespace {

std::vector<std::string> rule_names(const std::vector<RuleSpec>& rules) {
  std::vector<std::string> names;
  for (const RuleSpec& r : rules) names.push_back(r.rule);
  return names;
}

std::string user_error(const std::string& json) {
  try {
    RuleSet::parse(json, "user.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RuleSet, BuiltInSetsListTheRulesInMetaSchedulesOrder) {
  const RuleSet& cuda = RuleSet::cuda();
  EXPECT_EQ(cuda.name, "cuda");
  EXPECT_EQ(cuda.target, lower::Target::Kind::kCuda);
  // add_rfactor first (MetaSchedule has it in the CPU set only): the blocks it makes meet
  // every rule after it. Then the wgmma rule (Hopper; ours) before MetaSchedule's
  // tensor-core rule: its fork keeps the untouched GEMM for the mma.sync rule and plain
  // tiling.
  std::vector<std::string> expected = {"add_rfactor",
                                       "multi_level_tiling_wgmma",
                                       "multi_level_tiling_tensor_core",
                                       "multi_level_tiling",
                                       "auto_inline",
                                       "chunked_scan",  // ours: its chunk totals meet cross_thread_reduction
                                       "cross_thread_reduction",
                                       "staged_scan",
                                       "parallel_vectorize_unroll",
                                       "auto_bind",
                                       "random_compute_location"};
  EXPECT_EQ(rule_names(cuda.rules), expected);
  std::vector<std::string> postprocs;
  for (const PostprocSpec& p : cuda.postprocs) postprocs.push_back(p.postproc);
  std::vector<std::string> expected_postprocs = {"rewrite_reduction_block", "rewrite_tensorize",
                                                 "rewrite_software_pipeline", "rewrite_cooperative_fetch", "rewrite_unbound_block",
                                                 "rewrite_parallel_vectorize_unroll", "verify_gpu_code"};
  EXPECT_EQ(postprocs, expected_postprocs);
  const RuleSet& cpu = RuleSet::cpu();
  EXPECT_EQ(cpu.target, lower::Target::Kind::kCpu);
  EXPECT_EQ(rule_names(cpu.rules),
            (std::vector<std::string>{"auto_inline", "multi_level_tiling", "parallel_vectorize_unroll",
                                      "random_compute_location"}));
  // The files in the tree are what is compiled in.
  EXPECT_EQ(RuleSet::load(std::string(DRAGON_SOURCE_DIR) + "/data/search/rules/cuda.json").rules, cuda.rules);
  EXPECT_EQ(&RuleSet::for_target(lower::Target::cpu()), &RuleSet::cpu());
}

TEST(RuleSet, JsonRoundTrips) {
  for (const RuleSet* set : {&RuleSet::cuda(), &RuleSet::cpu()}) {
    RuleSet back = RuleSet::parse(set->to_json(), "round trip");
    EXPECT_EQ(back, *set);
  }
}

TEST(RuleSet, AnOpKindGetsItsOwnRuleList) {
  RuleSet set = RuleSet::parse(R"({
    "extends": "cuda",
    "name": "softmax without cross-thread reduction",
    "ops": {"softmax": [{"rule": "auto_inline"}, {"rule": "auto_bind", "thread_extents": [128]}]}
  })", "user.json");
  EXPECT_EQ(set.name, "softmax without cross-thread reduction");
  EXPECT_EQ(rule_names(set.rules_for("softmax")), (std::vector<std::string>{"auto_inline", "auto_bind"}));
  EXPECT_EQ(set.rules_for("matmul"), RuleSet::cuda().rules);
  EXPECT_EQ(set.postprocs, RuleSet::cuda().postprocs);
  // The space follows: one sketch, no cross-thread reduction, 128 threads only.
  ir::PrimFunc softmax = ops::OpRegistry::global().make_workload("softmax:shape=4x4096,axis=1").func;
  std::vector<Sketch> sketches = generate_design_space(softmax, lower::Target::cuda_h200(), set);
  ASSERT_EQ(sketches.size(), 1u);
  for (const std::string& applied : sketches[0].applied) {
    EXPECT_EQ(applied.find("cross_thread_reduction"), std::string::npos) << applied;
  }
  EXPECT_GT(generate_design_space(softmax, lower::Target::cuda_h200(), RuleSet::cuda()).size(), 0u);
}

TEST(RuleSet, SetOverridesOneParameterForOneOpOrForAll) {
  RuleSet set = RuleSet::parse(R"({
    "extends": "cuda",
    "set": [
      {"op": "matmul", "rule": "multi_level_tiling", "params": {"max_innermost_factor": 16}},
      {"rule": "auto_bind", "params": {"max_threadblocks": 1024}}
    ]
  })", "user.json");
  auto param = [](const std::vector<RuleSpec>& rules, const std::string& rule, const std::string& name) {
    for (const RuleSpec& r : rules) {
      if (r.rule != rule) continue;
      auto it = r.params.find(name);
      if (it != r.params.end()) return std::get<int64_t>(it->second);
    }
    return int64_t{-1};
  };
  EXPECT_EQ(param(set.rules_for("matmul"), "multi_level_tiling", "max_innermost_factor"), 16);
  EXPECT_EQ(param(set.rules_for("conv2d"), "multi_level_tiling", "max_innermost_factor"), 64);
  EXPECT_EQ(param(set.rules_for("matmul"), "auto_bind", "max_threadblocks"), 1024);
  EXPECT_EQ(param(set.rules_for("relu"), "auto_bind", "max_threadblocks"), 1024);
}

TEST(RuleSet, ExtendsAFileBesideIt) {
  std::string dir = ::testing::TempDir();
  write_text_file(dir + "/base.json", R"({"target": "cpu", "name": "base", "rules": [{"rule": "auto_inline"}]})");
  write_text_file(dir + "/user.json", R"({"extends": "base.json", "postprocs": []})");
  RuleSet set = RuleSet::load(dir + "/user.json");
  EXPECT_EQ(set.name, "base");
  EXPECT_EQ(set.target, lower::Target::Kind::kCpu);
  EXPECT_EQ(rule_names(set.rules), std::vector<std::string>{"auto_inline"});
  EXPECT_TRUE(set.postprocs.empty());
}

TEST(RuleSet, MistakesNameTheFileAndThePath) {
  EXPECT_NE(user_error("{").find("user.json: not JSON"), std::string::npos);
  EXPECT_NE(user_error(R"({"rules": []})").find("names its target"), std::string::npos);
  EXPECT_NE(user_error(R"({"target": "tpu"})").find("expected \"cuda\" or \"cpu\""), std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "rules": [{"rule": "tile_everything"}]})")
                .find("user.json: rules[0]: unknown rule 'tile_everything'"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "rules": [{"rule": "auto_bind", "max_blocks": 4}]})")
                .find("rules[0]: rule auto_bind: unknown parameter 'max_blocks'"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "rules": [{"rule": "auto_bind", "max_threadblocks": "many"}]})")
                .find("parameter 'max_threadblocks' must be an integer"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "rules": [{"rule": "multi_level_tiling", "structure": "SSXR"}]})")
                .find("must be S and R letters"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "rules": [{"rule": "auto_inline", "when": {"patterns": ["gemm"]}}]})")
                .find("rules[0].when.patterns: unknown pattern 'gemm'"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "postprocs": [{"postproc": "make_it_fast"}]})")
                .find("postprocs[0]: unknown postprocessor 'make_it_fast'"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"extends": "cuda", "set": [{"rule": "auto_inline", "params": {"into_producer": 3}}]})")
                .find("set[0]: rule auto_inline: parameter 'into_producer' must be true or false"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"extends": "cpu", "set": [{"rule": "auto_bind", "params": {}}]})").find("no rule 'auto_bind'"),
            std::string::npos);
  EXPECT_NE(user_error(R"({"target": "cuda", "colour": "red"})").find("colour: unknown key"), std::string::npos);
}

TEST(RuleSet, SelectorsPickBlocksByOpNameDtypeAndPattern) {
  // Multi-level tiling only for f16 blocks: the f32 GEMM gets no tiling, the f16 one does.
  RuleSet set = RuleSet::parse(R"({
    "target": "cuda",
    "rules": [{"rule": "multi_level_tiling", "when": {"dtypes": ["f16"], "patterns": ["matmul_like"]}}],
    "postprocs": []
  })", "user.json");
  auto tiled = [&](const std::string& spec) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, lower::Target::cuda_h200(), set);
    return !sketches.empty() && !sketches[0].applied.empty();
  };
  EXPECT_FALSE(tiled("matmul:m=64,n=64,k=64"));
  EXPECT_TRUE(tiled("matmul:m=64,n=64,k=64,dtype=f16"));
  EXPECT_EQ(block_pattern(ops::OpRegistry::global().make_workload("matmul:m=64,n=64,k=64").func, "C"), "matmul_like");
  EXPECT_EQ(block_pattern(ops::OpRegistry::global().make_workload("relu:shape=64").func, "relu"), "elementwise");
}

}  // namespace
}  // namespace dragon::search
