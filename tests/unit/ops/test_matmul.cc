// The matmul family (matmul, batch_matmul, triangular_matmul, diag_matmul, mul_scalar)
// run on the interpreter against plain double-precision loops, plus its KernelBench map.
// Not a test of schedules or of the interpreter itself.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::to_doubles;
using testing::user_error_of;

// C = op(A) @ op(B), m x n, from row-major A (m x k, or k x m when trans_a) and B
// (k x n, or n x k when trans_b).
std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t n,
                                     int64_t k, bool trans_a, bool trans_b) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t r = 0; r < k; ++r) {
        double x = trans_a ? a[r * m + i] : a[i * k + r];
        double y = trans_b ? b[j * k + r] : b[r * n + j];
        sum += x * y;
      }
      c[i * n + j] = sum;
    }
  }
  return c;
}

// ---- matmul -------------------------------------------------------------------------

struct MatmulCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

class MatmulTransposes : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulTransposes, MatchesReferenceF32) {
  const MatmulCase& p = GetParam();
  std::string spec = "matmul:m=" + std::to_string(p.m) + ",n=" + std::to_string(p.n) + ",k=" + std::to_string(p.k) +
                     ",trans_a=" + (p.trans_a ? "true" : "false") + ",trans_b=" + (p.trans_b ? "true" : "false");
  OpRun run = run_op(spec, 7);
  ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{p.m, p.n}));
  std::vector<int64_t> a_shape = p.trans_a ? std::vector<int64_t>{p.k, p.m} : std::vector<int64_t>{p.m, p.k};
  EXPECT_EQ(run.arg(0).shape(), a_shape);
  std::vector<double> expected =
      reference_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), p.m, p.n, p.k, p.trans_a, p.trans_b);
  // N(0, 1) inputs: |C| ~ sqrt(k); f32 accumulation error grows with k.
  EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 1e-6 * static_cast<double>(p.k)));
}

INSTANTIATE_TEST_SUITE_P(Matmul, MatmulTransposes,
                         ::testing::Values(MatmulCase{7, 13, 5, false, false}, MatmulCase{7, 13, 5, true, false},
                                           MatmulCase{7, 13, 5, false, true}, MatmulCase{7, 13, 5, true, true},
                                           MatmulCase{13, 1, 17, false, false},   // matrix-vector (KernelBench 4)
                                           MatmulCase{9, 11, 1, false, false},    // rank-one update
                                           MatmulCase{3, 2, 301, false, false}),  // long reduction
                         [](const ::testing::TestParamInfo<MatmulCase>& info) {
                           const MatmulCase& p = info.param;
                           return "m" + std::to_string(p.m) + "n" + std::to_string(p.n) + "k" + std::to_string(p.k) +
                                  (p.trans_a ? "_ta" : "") + (p.trans_b ? "_tb" : "");
                         });

TEST(Matmul, HalfPrecisionAccumulatesInF32) {
  // f16: rounding the f32 sum to f16 costs half an ulp, 2^-11 relative.
  OpRun f16 = run_op("matmul:m=7,n=13,k=33,dtype=f16", 3);
  EXPECT_EQ(f16.output().dtype(), ir::DataType::f16());
  // The f32 product is an intermediate; the cast stage is the output "C".
  EXPECT_EQ(f16.workload.func.outputs()[0]->name, "C");
  ASSERT_EQ(f16.workload.func.root_block()->alloc_buffers.size(), 1u);
  EXPECT_EQ(f16.workload.func.root_block()->alloc_buffers[0]->name, "C_acc");
  EXPECT_EQ(f16.workload.func.root_block()->alloc_buffers[0]->dtype, ir::DataType::f32());
  std::vector<double> expected =
      reference_matmul(to_doubles(f16.arg(0)), to_doubles(f16.arg(1)), 7, 13, 33, false, false);
  EXPECT_TRUE(all_close(f16.output(), expected, 1e-3, 1e-3));

  OpRun bf16 = run_op("matmul:m=7,n=13,k=33,trans_a=true,trans_b=true,dtype=bf16", 4);
  EXPECT_EQ(bf16.output().dtype(), ir::DataType::bf16());
  expected = reference_matmul(to_doubles(bf16.arg(0)), to_doubles(bf16.arg(1)), 7, 13, 33, true, true);
  EXPECT_TRUE(all_close(bf16.output(), expected, 8e-3, 1e-2));
}

TEST(Matmul, F64IsExactToDoubleRounding) {
  OpRun run = run_op("matmul:m=5,n=6,k=7,trans_b=true,dtype=f64", 5, interp::Distribution::kOffset);
  std::vector<double> expected = reference_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 5, 6, 7, false, true);
  EXPECT_TRUE(all_close(run.output(), expected, 1e-12, 0.0));
}

// ---- batch_matmul -------------------------------------------------------------------

// C[b, m, n] over flattened batches; B is shared when `broadcast_b`.
std::vector<double> reference_batch_matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t batches,
                                           int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                                           bool broadcast_b) {
  std::vector<double> c;
  for (int64_t t = 0; t < batches; ++t) {
    std::vector<double> a_t(a.begin() + t * m * k, a.begin() + (t + 1) * m * k);
    std::vector<double> b_t = broadcast_b ? b : std::vector<double>(b.begin() + t * k * n, b.begin() + (t + 1) * k * n);
    std::vector<double> c_t = reference_matmul(a_t, b_t, m, n, k, trans_a, trans_b);
    c.insert(c.end(), c_t.begin(), c_t.end());
  }
  return c;
}

TEST(BatchMatmul, BatchedOperandsMatchReference) {
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      std::string spec = std::string("batch_matmul:batch=3,m=5,n=7,k=4,trans_a=") + (trans_a ? "true" : "false") +
                         ",trans_b=" + (trans_b ? "true" : "false");
      OpRun run = run_op(spec, 11);
      ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{3, 5, 7})) << spec;
      std::vector<double> expected =
          reference_batch_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 3, 5, 7, 4, trans_a, trans_b, false);
      EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 1e-5)) << spec;
    }
  }
}

TEST(BatchMatmul, BroadcastBOverSeveralBatchAxes) {
  // The einsum "bijl,lk->bijk" of KernelBench 11 at small sizes.
  OpRun run = run_op("batch_matmul:batch=2x3,m=5,n=7,k=9,broadcast_b=true", 12);
  ASSERT_EQ(run.arg(0).shape(), (std::vector<int64_t>{2, 3, 5, 9}));
  ASSERT_EQ(run.arg(1).shape(), (std::vector<int64_t>{9, 7}));
  ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{2, 3, 5, 7}));
  std::vector<double> expected =
      reference_batch_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 6, 5, 7, 9, false, false, true);
  EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 1e-5));

  OpRun transposed = run_op("batch_matmul:batch=3,m=4,n=6,k=5,trans_b=true,broadcast_b=true", 13);
  ASSERT_EQ(transposed.arg(1).shape(), (std::vector<int64_t>{6, 5}));
  expected = reference_batch_matmul(to_doubles(transposed.arg(0)), to_doubles(transposed.arg(1)), 3, 4, 6, 5, false,
                                    true, true);
  EXPECT_TRUE(all_close(transposed.output(), expected, 1e-5, 1e-5));
}

TEST(BatchMatmul, Bf16AccumulatesInF32) {
  OpRun run = run_op("batch_matmul:batch=2,m=3,n=5,k=31,dtype=bf16", 14);
  EXPECT_EQ(run.output().dtype(), ir::DataType::bf16());
  std::vector<double> expected =
      reference_batch_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 2, 3, 5, 31, false, false, false);
  EXPECT_TRUE(all_close(run.output(), expected, 8e-3, 1e-2));
}

// ---- triangular_matmul --------------------------------------------------------------

TEST(TriangularMatmul, KeepsOneTriangleOfTheFullProduct) {
  for (const char* triangle : {"upper", "lower"}) {
    bool upper = std::string(triangle) == "upper";
    // Non-square, so the diagonal's position relative to both axes matters.
    std::string spec = std::string("triangular_matmul:m=7,n=9,k=5,triangle=") + triangle;
    OpRun run = run_op(spec, 21);
    ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{7, 9})) << spec;
    // The inputs are general (not triangular): the product is taken in full, then masked.
    std::vector<double> expected =
        reference_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 7, 9, 5, false, false);
    int kept = 0;
    for (int64_t i = 0; i < 7; ++i) {
      for (int64_t j = 0; j < 9; ++j) {
        bool keep = upper ? j >= i : j <= i;
        if (!keep) expected[i * 9 + j] = 0.0;
        kept += keep;
      }
    }
    EXPECT_EQ(kept, upper ? 42 : 28) << spec;
    EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 5e-6)) << spec;
  }
}

TEST(TriangularMatmul, F16CastsAfterMasking) {
  OpRun run = run_op("triangular_matmul:m=6,n=6,k=17,triangle=lower,dtype=f16", 22);
  EXPECT_EQ(run.output().dtype(), ir::DataType::f16());
  std::vector<double> expected =
      reference_matmul(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 6, 6, 17, false, false);
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = i + 1; j < 6; ++j) expected[i * 6 + j] = 0.0;
  }
  EXPECT_TRUE(all_close(run.output(), expected, 1e-3, 1e-3));
}

// ---- diag_matmul and mul_scalar -----------------------------------------------------

TEST(DiagMatmul, ScalesEachRowOfB) {
  OpRun run = run_op("diag_matmul:m=7,n=13", 31);
  ASSERT_EQ(run.arg(0).shape(), (std::vector<int64_t>{7}));
  ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{7, 13}));
  std::vector<double> a = to_doubles(run.arg(0)), b = to_doubles(run.arg(1));
  std::vector<double> expected(7 * 13);
  for (int64_t i = 0; i < 7; ++i) {
    for (int64_t j = 0; j < 13; ++j) expected[i * 13 + j] = a[i] * b[i * 13 + j];
  }
  // One f32 rounding of an exact product.
  EXPECT_TRUE(all_close(run.output(), expected, 1e-7, 0.0));
}

TEST(MulScalar, ScalarIsRoundedToTheComputationType) {
  OpRun run = run_op("mul_scalar:shape=7x13,scalar=-2.7", 41, interp::Distribution::kEdge);
  ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{7, 13}));
  std::vector<double> a = to_doubles(run.arg(0));
  std::vector<double> expected(a.size());
  const double s = static_cast<double>(static_cast<float>(-2.7));  // torch rounds s to f32
  for (size_t i = 0; i < a.size(); ++i) expected[i] = a[i] * s;
  EXPECT_TRUE(all_close(run.output(), expected, 1e-7, 1e-30));

  OpRun rank3 = run_op("mul_scalar:shape=3x1x5,scalar=0.5,dtype=f16", 42);
  ASSERT_EQ(rank3.output().shape(), (std::vector<int64_t>{3, 1, 5}));
  a = to_doubles(rank3.arg(0));
  expected.assign(a.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i) expected[i] = a[i] * 0.5;  // exact in f16
  EXPECT_TRUE(all_close(rank3.output(), expected, 0.0, 0.0));

  OpRun bf16 = run_op("mul_scalar:shape=9x4,scalar=3.14,dtype=bf16", 43);
  a = to_doubles(bf16.arg(0));
  expected.assign(a.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i) expected[i] = a[i] * static_cast<double>(static_cast<float>(3.14));
  EXPECT_TRUE(all_close(bf16.output(), expected, 4e-3, 0.0));  // half a bf16 ulp
}

// ---- bad parameters -----------------------------------------------------------------

TEST(MatmulFamily, BadParametersAreUserErrorsNamingTheParameter) {
  EXPECT_NE(user_error_of("triangular_matmul:triangle=diagonal").find("triangle"), std::string::npos);
  EXPECT_NE(user_error_of("batch_matmul:batch=4x0").find("batch"), std::string::npos);
  EXPECT_NE(user_error_of("mul_scalar:scalar=pi").find("scalar"), std::string::npos);
  EXPECT_NE(user_error_of("diag_matmul:n=0").find("parameter n"), std::string::npos);
  EXPECT_NE(user_error_of("batch_matmul:dtype=i32").find("dtype"), std::string::npos);
}

}  // namespace
}  // namespace dragon::ops
