// No false rejections: honest kernels of every op kind pass verification. The kernels
// are the CPU backend's builds of the unscheduled functions (another implementation of
// the same math: the C library's functions, the compiler's contractions), judged against
// the interpreter's reference.
#include <gtest/gtest.h>

#include <map>

#include "dragon/harness/f64_promotion.h"
#include "dragon/harness/output_comparison.h"
#include "dragon/harness/verify.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "harness_test_util.h"

namespace dragon::harness {
namespace {

using testing::executable_candidate;
using testing::interpreter_candidate;
using testing::op_function;

// Every op kind at its default shape, except the few whose defaults keep the interpreter
// (the reference) busy for long: smaller instances of the same code.
std::vector<std::string> small_specs() {
  const std::map<std::string, std::string> smaller = {
      {"scaled_dot_product_attention", "seq_q=32,seq_kv=32,head_dim=16"},
      {"conv2d", "size=10x10"},
      {"conv_transpose2d", "size=10x10"},
      {"conv3d", "size=6x6x6"},
      {"conv_transpose3d", "size=5x5x5"},
      {"kl_div_loss", "shape=32x512"},
      {"mse_loss", "shape=32x512"},
      {"smooth_l1_loss", "shape=32x512"},
      {"cumsum", "shape=16x512"},
      {"cumprod", "shape=16x512"},
      {"masked_cumsum", "shape=16x512"},
  };
  std::vector<std::string> specs;
  for (const ops::OpKind& kind : ops::OpRegistry::global().kinds()) {
    auto it = smaller.find(kind.name);
    specs.push_back(
        ops::OpRegistry::global().make_workload(it == smaller.end() ? kind.name : kind.name + ":" + it->second).spec);
  }
  return specs;
}

// Every op kind, compiled for the CPU in one batch.
void expect_compiled_op_kinds_pass(size_t first, size_t step) {
  std::vector<std::string> specs = small_specs();
  ASSERT_GE(specs.size(), 60u);
  std::vector<ir::PrimFunc> funcs, flats;
  for (size_t i = first; i < specs.size(); i += step) {
    funcs.push_back(op_function(specs[i]));
    flats.push_back(lower::lower(funcs.back(), lower::Target::cpu()).func);
  }
  runtime::BuildOptions build_options;
  build_options.cache = &testing::test_cache();
  auto executables = runtime::build_cpu_batch(flats, build_options);
  ASSERT_EQ(executables.size(), funcs.size());
  VerifyOptions options;
  options.seed = 20261203;
  for (size_t i = 0; i < funcs.size(); ++i) {
    const std::string& spec = specs[first + i * step];
    SCOPED_TRACE(spec);
    ASSERT_TRUE(executables[i].ok()) << executables[i].error().describe();
    auto candidate = executable_candidate(*executables[i].value(), "cpu " + spec);
    Verdict verdict = verify(funcs[i], *candidate, options);
    EXPECT_TRUE(verdict.passed) << verdict.to_text();
    EXPECT_FALSE(verdict.problem_weak()) << verdict.to_text();
    EXPECT_GE(verdict.input_sets.size(), options.distributions.size());
  }
}

// Four interleaved quarters, so that ctest can run them side by side.
TEST(VerifyHonest, CompiledOpKindsPassQuarter0) { expect_compiled_op_kinds_pass(0, 4); }
TEST(VerifyHonest, CompiledOpKindsPassQuarter1) { expect_compiled_op_kinds_pass(1, 4); }
TEST(VerifyHonest, CompiledOpKindsPassQuarter2) { expect_compiled_op_kinds_pass(2, 4); }
TEST(VerifyHonest, CompiledOpKindsPassQuarter3) { expect_compiled_op_kinds_pass(3, 4); }

// 16-bit problems: the reference rounds after every operation in its type; the tolerance
// comes from its gap to f64 and the 16-bit floors.
TEST(VerifyHonest, SixteenBitProblemsPass) {
  for (std::string spec : {"matmul:m=16,n=24,k=32,dtype=f16", "matmul:m=16,n=24,k=32,dtype=bf16",
                           "softmax:shape=6x40,dtype=f16", "layer_norm:shape=4x48,dtype=bf16",
                           "gelu:shape=8x24,dtype=bf16"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = op_function(spec);
    auto candidate = interpreter_candidate(func);
    VerifyOptions options;
    options.seed = 7;
    Verdict verdict = verify(func, *candidate, options);
    EXPECT_TRUE(verdict.trusted()) << verdict.to_text();
  }
}

// A 16-bit kernel that computes in f64 and rounds once is more accurate than the
// reference (which rounds after every operation): it passes.
TEST(VerifyHonest, SixteenBitKernelsComputingInF64Pass) {
  for (std::string spec : {"softmax:shape=6x40,dtype=f16", "rms_norm:shape=4x48,dtype=bf16",
                           "matmul:m=16,n=24,k=64,dtype=bf16"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = op_function(spec);
    auto exact = std::make_shared<interp::CompiledFunction>(interp::CompiledFunction::compile(promote_floats_to_f64(func)));
    auto candidate = make_function_candidate("f64 rounded once", [exact](std::vector<tensor::HostTensor>& args) {
      std::vector<tensor::HostTensor> wide;
      for (const tensor::HostTensor& arg : args) {
        tensor::HostTensor t(arg.dtype().is_float() ? ir::DataType::f64() : arg.dtype(), arg.shape());
        for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, arg.get(i));
        wide.push_back(std::move(t));
      }
      exact->run(wide);
      for (size_t p = 0; p < args.size(); ++p) {
        for (int64_t i = 0; i < args[p].num_elements(); ++i) args[p].set(i, wide[p].get(i));
      }
      return RunOutcome::success();
    });
    VerifyOptions options;
    options.seed = 8;
    Verdict verdict = verify(func, *candidate, options);
    EXPECT_TRUE(verdict.trusted()) << verdict.to_text();
  }
}

// The compiled reference agrees with the interpreter's, and affords shapes the
// interpreter would take long over (a 128^3 matmul: 6 input sets, each in f32 and f64).
TEST(VerifyHonest, CompiledReferenceAgreesWithTheInterpreterAndScales) {
  ReferenceOptions compiled;
  compiled.engine = ReferenceEngine::kCompiledCpu;
  compiled.build.cache = &testing::test_cache();
  ir::PrimFunc small = op_function("layer_norm:shape=6x40");
  Reference interpreted(small), built(small, compiled);
  std::vector<tensor::HostTensor> args = interp::make_arguments(small, 3, interp::Distribution::kOffset);
  std::vector<ReferenceOutput> a = interpreted.compute(args), b = built.compute(args);
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    EXPECT_LE(normalized_difference(b[o].exact, a[o].exact), 1e-12);
    EXPECT_LE(normalized_difference(b[o].native, a[o].native), 1e-5);
  }

  ir::PrimFunc large = op_function("matmul:m=128,n=128,k=128");
  auto executable = runtime::build(large, lower::Target::cpu(), compiled.build);
  ASSERT_TRUE(executable.ok()) << executable.error().describe();
  auto candidate = executable_candidate(*executable.value(), "cpu matmul 128");
  VerifyOptions options;
  options.reference = compiled;
  Verdict verdict = verify(large, *candidate, options);
  EXPECT_TRUE(verdict.trusted()) << verdict.to_text();
  auto zeros = make_function_candidate("zeros", [](std::vector<tensor::HostTensor>& args) {
    args[2].fill(0);
    return RunOutcome::success();
  });
  EXPECT_TRUE(verify(Reference(large, compiled), *zeros, options).has(FailureKind::kWrongValues));
}

}  // namespace
}  // namespace dragon::harness
