// The rule space's fresh candidates (SketchSpace::sample) are drawn to fit the target:
// where uniform draws of a tight space are nearly all refused by verify_gpu_code (a
// split-K GEMM of K = 524288: none of 80; a 4096^3 GEMM and a 1x1 convolution at
// KernelBench's sizes: 3 of 40), the decision sampler's draws nearly all pass; and every
// sampled candidate's trace replays (realize) to the same program, so the database can
// store it.
#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

#include "dragon/ir/structural_hash.h"
#include "dragon/search/rule_set.h"
#include "dragon/search/rule_space.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

struct Draws {
  int sampled = 0, valid = 0, distinct = 0;
};

Draws draw_each_sketch(const std::string& spec, int seeds_per_sketch) {
  ir::PrimFunc func = schedule::testing::workload(spec);
  lower::Target target = lower::Target::cuda_h200();
  RuleSet rules = RuleSet::for_target(target);
  std::unique_ptr<SketchSpace> space = make_rule_space(func, target, rules);
  Draws d;
  std::unordered_set<uint64_t> hashes;
  for (size_t sketch = 0; sketch < space->sketches().size(); ++sketch) {
    for (int seed = 1; seed <= seeds_per_sketch; ++seed) {
      ++d.sampled;
      Realized r = space->sample(sketch, seed * 7919 + 3);
      if (!r.ok()) continue;
      ++d.valid;
      uint64_t hash = ir::structural_hash(r.func);
      if (hashes.insert(hash).second) ++d.distinct;
      Realized again = space->realize(*r.trace, 99);
      EXPECT_TRUE(again.ok()) << spec << ": a sampled trace does not replay: " << again.error;
      if (again.ok()) EXPECT_EQ(ir::structural_hash(again.func), hash) << spec << ": replayed to another program";
    }
  }
  return d;
}

TEST(RuleSpace, FreshSamplesOfTightSpacesFitTheTarget) {
  for (const std::string spec : {
           "matmul:m=256,n=256,k=524288",  // KernelBench 6: split-K chunks inside the shared copies
           "matmul:m=4096,n=4096,k=4096",
           "conv2d:batch=16,in_channels=64,out_channels=128,size=1024x1024,kernel=1x1,stride=1x1,padding=0x0,"
           "dilation=1x1,groups=1,bias=false,dtype=f32",
       }) {
    Draws d = draw_each_sketch(spec, 20);
    SCOPED_TRACE(spec);
    EXPECT_GE(d.valid * 10, d.sampled * 8) << d.valid << " of " << d.sampled << " samples valid";
    EXPECT_GE(d.distinct * 2, d.valid) << d.distinct << " distinct of " << d.valid;
  }
}

}  // namespace
}  // namespace dragon::search
