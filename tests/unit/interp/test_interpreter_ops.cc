// The interpreter on functions built by the op registry, against plain C++ loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ops/op_registry.h"

namespace dragon::interp {
namespace {

// f32 accumulation in k order, exactly what the unscheduled matmul does: results must be
// bit-identical, not merely close.
TEST(InterpreterOpsTest, MatmulMatchesTripleLoopBitExactly) {
  ops::Workload w = ops::OpRegistry::global().make_workload("matmul:m=17,n=9,k=23");
  std::vector<tensor::HostTensor> args = make_arguments(w.func, 7, Distribution::kNormal);
  run(w.func, args);
  const tensor::HostTensor &a = args[0], &b = args[1], &c = args[2];
  ASSERT_EQ(c.shape(), (std::vector<int64_t>{17, 9}));
  for (int64_t i = 0; i < 17; ++i) {
    for (int64_t j = 0; j < 9; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < 23; ++k) {
        acc = acc + static_cast<float>(a.get(i * 23 + k)) * static_cast<float>(b.get(k * 9 + j));
      }
      ASSERT_EQ(c.get(i * 9 + j), static_cast<double>(acc)) << "at " << i << ", " << j;
    }
  }
}

TEST(InterpreterOpsTest, MatmulTransposedF16AccumulatesInF32) {
  ops::Workload w = ops::OpRegistry::global().make_workload("matmul:m=5,n=6,k=40,trans_b=true,dtype=f16");
  std::vector<tensor::HostTensor> args = make_arguments(w.func, 3, Distribution::kNormal);
  run(w.func, args);
  const tensor::HostTensor &a = args[0], &b = args[1], &c = args.back();
  ASSERT_EQ(c.dtype(), ir::DataType::f16());
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < 40; ++k) {
        acc = acc + static_cast<float>(a.get(i * 40 + k)) * static_cast<float>(b.get(j * 40 + k));
      }
      tensor::HostTensor expected(ir::DataType::f16(), {});
      expected.set(0, acc);
      ASSERT_EQ(c.get(i * 6 + j), expected.get(0)) << "at " << i << ", " << j;
    }
  }
}

TEST(InterpreterOpsTest, CompiledFunctionRunsRepeatedly) {
  ops::Workload w = ops::OpRegistry::global().make_workload("matmul:m=4,n=4,k=4");
  CompiledFunction compiled = CompiledFunction::compile(w.func);
  std::vector<tensor::HostTensor> first = make_arguments(w.func, 1, Distribution::kUniform);
  std::vector<tensor::HostTensor> second = first;
  compiled.run(first);
  compiled.run(second);
  ASSERT_EQ(first[2].size_bytes(), second[2].size_bytes());
  EXPECT_EQ(std::memcmp(first[2].data(), second[2].data(), first[2].size_bytes()), 0);
  EXPECT_FALSE(std::isnan(first[2].get(0)));
}

}  // namespace
}  // namespace dragon::interp
