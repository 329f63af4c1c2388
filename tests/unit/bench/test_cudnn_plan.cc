// The cuDNN baseline's plans without a GPU: how each convolution, pooling and softmax
// problem of kernelbench-l1 maps onto cuDNN's descriptors (dims, strides, padding,
// dilation, groups, the transposed filter layout, 1D lifted to 2D), and which have no
// cuDNN equivalent and say why. Where the library loads (descriptors need no GPU), cuDNN's
// own output-size arithmetic on the descriptors must agree with every plan.
#include <gtest/gtest.h>

#include <set>

#include "dragon/bench/cudnn_descriptors.h"
#include "dragon/bench/cudnn_plan.h"
#include "dragon/ops/op_registry.h"
#include "dragon/suites/suite.h"

namespace dragon::bench {
namespace {

std::optional<CudnnPlan> plan_of(const std::string& spec, std::string& why_not) {
  return plan_cudnn(ops::OpRegistry::global().make_workload(spec), why_not);
}

template <typename Plan>
Plan plan_as(const std::string& spec) {
  std::string why_not;
  std::optional<CudnnPlan> plan = plan_of(spec, why_not);
  if (!plan) ADD_FAILURE() << spec << ": no plan: " << why_not;
  if (plan && !std::holds_alternative<Plan>(*plan)) ADD_FAILURE() << spec << ": another kind of plan";
  return plan && std::holds_alternative<Plan>(*plan) ? std::get<Plan>(*plan) : Plan{};
}

std::string reason_of(const std::string& spec) {
  std::string why_not;
  std::optional<CudnnPlan> plan = plan_of(spec, why_not);
  EXPECT_FALSE(plan.has_value()) << spec;
  return why_not;
}

const suites::Problem& problem(const suites::Suite& suite, const std::string& id) {
  for (const suites::Problem& p : suite.problems) {
    if (p.id == id) return p;
  }
  throw std::runtime_error("no problem " + id);
}

class KernelBenchL1 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { suite_ = new suites::Suite(suites::load_suite("kernelbench-l1")); }
  static void TearDownTestSuite() { delete suite_; }
  static std::string spec(const std::string& id) { return problem(*suite_, id).spec; }
  static suites::Suite* suite_;
};
suites::Suite* KernelBenchL1::suite_ = nullptr;

using Ints = std::vector<int>;

TEST(CudnnPlan, PackedTensorsAreRowMajorAndHoldFewerThan2To31Elements) {
  std::optional<CudnnTensorDims> t = packed_tensor({2, 3, 4, 5});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->dims, (Ints{2, 3, 4, 5}));
  EXPECT_EQ(t->strides, (Ints{60, 20, 5, 1}));
  EXPECT_EQ(t->slice_elements(), 120);
  // cuDNN refuses a descriptor of 2^31 elements even when every stride fits an int.
  EXPECT_TRUE(packed_tensor({16, 128, 1022, 1022}));
  EXPECT_FALSE(packed_tensor({16, 128, 1024, 1024}));
  EXPECT_FALSE(packed_tensor({4, int64_t{1} << 31}));
}

TEST_F(KernelBenchL1, OperandsOf2To31ElementsOrMoreRunInBatchSlices) {
  auto pointwise = plan_as<CudnnConvolutionPlan>(spec("87"));  // Y is 16x128x1024x1024, 2^31 elements
  EXPECT_EQ(pointwise.batch_slices, 2);
  EXPECT_EQ(pointwise.y.dims, (Ints{8, 128, 1024, 1024}));
  EXPECT_EQ(pointwise.x.dims, (Ints{8, 64, 1024, 1024}));
  auto avg = plan_as<CudnnPoolingPlan>(spec("45"));  // X is 16x64x2048x2048, 2^32 elements
  EXPECT_EQ(avg.batch_slices, 4);
  EXPECT_EQ(avg.x.dims, (Ints{4, 64, 2048, 2048}));
  EXPECT_EQ(avg.y.dims, (Ints{4, 64, 186, 186}));
  EXPECT_EQ(plan_as<CudnnConvolutionPlan>(spec("63")).batch_slices, 1);  // 2^31 - 8M elements fit
  EXPECT_EQ(plan_as<CudnnSoftmaxPlan>(spec("23")).batch_slices, 1);
  // The largest slice that fits and divides the rows evenly.
  auto rows = plan_as<CudnnSoftmaxPlan>("softmax:shape=12x268435456,axis=1");
  EXPECT_EQ(rows.batch_slices, 2);  // 6 rows of 2^28 fit (7 would; 7 does not divide 12)
  EXPECT_EQ(rows.x.dims, (Ints{6, 268435456, 1, 1}));
  EXPECT_NE(reason_of("softmax:shape=2x2147483648,axis=1").find("32-bit"), std::string::npos);
}

TEST_F(KernelBenchL1, StridedPaddedConv2dWithBiasAddsItAfterTheConvolution) {
  auto p = plan_as<CudnnConvolutionPlan>(spec("50"));  // 256x3x224x224, 11x11, stride 4, padding 2, bias
  EXPECT_FALSE(p.transposed);
  EXPECT_EQ(p.x.dims, (Ints{256, 3, 224, 224}));
  EXPECT_EQ(p.y.dims, (Ints{256, 96, 55, 55}));
  EXPECT_EQ(p.filter, (Ints{96, 3, 11, 11}));
  EXPECT_EQ(p.padding, (Ints{2, 2}));
  EXPECT_EQ(p.stride, (Ints{4, 4}));
  EXPECT_EQ(p.dilation, (Ints{1, 1}));
  EXPECT_EQ(p.groups, 1);
  ASSERT_TRUE(p.bias);
  EXPECT_EQ(p.bias->dims, (Ints{1, 96, 1, 1}));
  EXPECT_EQ((std::vector<int>{p.x_param, p.w_param, p.bias_param, p.y_param}), (Ints{0, 1, 2, 3}));
  EXPECT_EQ(p.data_type, CudnnDataType::kFloat);
  EXPECT_EQ(p.compute_type, CudnnDataType::kFloat);
  EXPECT_EQ(p.math_type, CudnnMathType::kFma);  // true fp32: no TF32
}

TEST_F(KernelBenchL1, AsymmetricDilatedPaddedConv2d) {
  auto p = plan_as<CudnnConvolutionPlan>(spec("80"));  // kernel 5x9, padding 2x4, dilation 2x3
  EXPECT_EQ(p.filter, (Ints{64, 32, 5, 9}));
  EXPECT_EQ(p.padding, (Ints{2, 4}));
  EXPECT_EQ(p.dilation, (Ints{2, 3}));
  EXPECT_EQ(p.y.dims, (Ints{8, 64, 508, 496}));
  EXPECT_FALSE(p.bias);
  EXPECT_EQ(p.y_param, 2);
}

TEST_F(KernelBenchL1, DepthwiseConvsAreGroupedWithOneInputChannelPerFilter) {
  auto p = plan_as<CudnnConvolutionPlan>(spec("82"));
  EXPECT_EQ(p.groups, 64);
  EXPECT_EQ(p.filter, (Ints{64, 1, 3, 3}));
  auto q = plan_as<CudnnConvolutionPlan>(spec("85"));  // 3x7 kernel
  EXPECT_EQ(q.groups, 128);
  EXPECT_EQ(q.filter, (Ints{128, 1, 3, 7}));
  EXPECT_EQ(q.y.dims, (Ints{32, 128, 126, 250}));
}

TEST_F(KernelBenchL1, Conv1dGetsAUnitHeight) {
  auto p = plan_as<CudnnConvolutionPlan>(spec("76"));  // size 524280, kernel 3, stride 3, dilation 4
  EXPECT_EQ(p.x.dims, (Ints{64, 64, 1, 524280}));
  EXPECT_EQ(p.x.strides, (Ints{64 * 524280, 524280, 524280, 1}));
  EXPECT_EQ(p.filter, (Ints{128, 64, 1, 3}));
  EXPECT_EQ(p.stride, (Ints{1, 3}));
  EXPECT_EQ(p.dilation, (Ints{1, 4}));
  EXPECT_EQ(p.padding, (Ints{0, 0}));
  EXPECT_EQ(p.y.dims, (Ints{64, 128, 1, 174758}));
}

TEST_F(KernelBenchL1, Conv3dAsymmetricKernel) {
  auto p = plan_as<CudnnConvolutionPlan>(spec("66"));
  EXPECT_EQ(p.x.dims, (Ints{8, 3, 16, 128, 128}));
  EXPECT_EQ(p.filter, (Ints{64, 3, 3, 5, 7}));
  EXPECT_EQ(p.y.dims, (Ints{8, 64, 14, 124, 122}));
  EXPECT_EQ(p.padding.size(), 3u);
}

TEST_F(KernelBenchL1, TransposedConvsAreBackwardDataWithTorchsWeightLayout) {
  // 72: ConvTranspose3d 32 -> 32 channels, groups 4, stride 2, padding 1x2x3, output_padding 1.
  auto p = plan_as<CudnnConvolutionPlan>(spec("72"));
  EXPECT_TRUE(p.transposed);
  EXPECT_EQ(p.x.dims, (Ints{8, 32, 12, 24, 48}));   // dy
  EXPECT_EQ(p.y.dims, (Ints{8, 32, 24, 48, 96}));   // dx
  EXPECT_EQ(p.filter, (Ints{32, 8, 3, 5, 7}));      // [C_in, C_out/groups, k...]
  EXPECT_EQ(p.stride, (Ints{2, 2, 2}));
  EXPECT_EQ(p.padding, (Ints{1, 2, 3}));
  EXPECT_EQ(p.groups, 4);
  // 75: ConvTranspose2d 32 -> 64, groups 4, stride 2x3, padding 1x2, dilation 2x1.
  auto q = plan_as<CudnnConvolutionPlan>(spec("75"));
  EXPECT_EQ(q.filter, (Ints{32, 16, 3, 5}));
  EXPECT_EQ(q.stride, (Ints{2, 3}));
  EXPECT_EQ(q.padding, (Ints{1, 2}));
  EXPECT_EQ(q.dilation, (Ints{2, 1}));
  EXPECT_EQ(q.y.dims, (Ints{16, 64, 257, 766}));
  // 79: ConvTranspose1d, stride 2, padding 1, dilation 2, lifted like conv1d.
  auto r = plan_as<CudnnConvolutionPlan>(spec("79"));
  EXPECT_EQ(r.x.dims, (Ints{16, 32, 1, 131072}));
  EXPECT_EQ(r.y.dims, (Ints{16, 64, 1, 262145}));
  EXPECT_EQ(r.filter, (Ints{32, 64, 1, 3}));
  EXPECT_EQ(r.stride, (Ints{1, 2}));
  EXPECT_EQ(r.padding, (Ints{0, 1}));
  EXPECT_EQ(r.dilation, (Ints{1, 2}));
}

TEST(CudnnPlan, OutputPaddingAtOrAboveTheStrideHasNoBackwardDataEquivalent) {
  // torch allows output_padding < dilation with stride 1; the forward conv from Y's shape
  // then gives one more than X.
  std::string why = reason_of(
      "conv_transpose1d:batch=1,in_channels=2,out_channels=2,size=16,kernel=3,stride=1,dilation=2,output_padding=1");
  EXPECT_NE(why.find("output_padding"), std::string::npos) << why;
  // Below the stride it is fine.
  auto p = plan_as<CudnnConvolutionPlan>(
      "conv_transpose2d:batch=1,in_channels=2,out_channels=4,size=5x5,kernel=3x3,stride=2x2,output_padding=1x1");
  EXPECT_EQ(p.y.dims, (Ints{1, 4, 12, 12}));
}

TEST(CudnnPlan, SixteenBitConvsAccumulateInF32OnTensorCoresAndF64HasNone) {
  auto p = plan_as<CudnnConvolutionPlan>("conv2d:dtype=f16");
  EXPECT_EQ(p.data_type, CudnnDataType::kHalf);
  EXPECT_EQ(p.compute_type, CudnnDataType::kFloat);
  EXPECT_EQ(p.math_type, CudnnMathType::kTensorOp);
  EXPECT_EQ(plan_as<CudnnPoolingPlan>("max_pool2d:dtype=bf16").data_type, CudnnDataType::kBfloat16);
  EXPECT_NE(reason_of("conv2d:dtype=f64").find("f64"), std::string::npos);
}

TEST_F(KernelBenchL1, PoolingWindowsPaddingAndModes) {
  auto max2d = plan_as<CudnnPoolingPlan>(spec("42"));  // kernel 4, stride 1, padding 1
  EXPECT_EQ(max2d.mode, CudnnPoolingMode::kMax);
  EXPECT_EQ(max2d.window, (Ints{4, 4}));
  EXPECT_EQ(max2d.padding, (Ints{1, 1}));
  EXPECT_EQ(max2d.stride, (Ints{1, 1}));
  EXPECT_EQ(max2d.x.dims, (Ints{32, 64, 512, 512}));
  EXPECT_EQ(max2d.y.dims, (Ints{32, 64, 511, 511}));
  EXPECT_EQ(max2d.y_param, 1);

  auto avg1d = plan_as<CudnnPoolingPlan>(spec("44"));  // kernel 8, stride 1, padding 4, torch's default divisor
  EXPECT_EQ(avg1d.mode, CudnnPoolingMode::kAverageIncludePadding);
  EXPECT_EQ(avg1d.x.dims, (Ints{64, 128, 1, 65536}));
  EXPECT_EQ(avg1d.window, (Ints{1, 8}));
  EXPECT_EQ(avg1d.padding, (Ints{0, 4}));
  EXPECT_EQ(avg1d.stride, (Ints{1, 1}));
  EXPECT_EQ(avg1d.y.dims, (Ints{64, 128, 1, 65537}));

  auto avg3d = plan_as<CudnnPoolingPlan>(spec("46"));
  EXPECT_EQ(avg3d.window, (Ints{3, 3, 3}));
  EXPECT_EQ(avg3d.stride, (Ints{2, 2, 2}));
  EXPECT_EQ(avg3d.padding, (Ints{1, 1, 1}));
  EXPECT_EQ(avg3d.y.dims, (Ints{8, 32, 64, 64, 128}));
  EXPECT_EQ(avg3d.batch_slices, 2);  // X is 16x32x128x128x256, 2^31 elements

  auto exclude = plan_as<CudnnPoolingPlan>("avg_pool2d:kernel=3,stride=2,padding=1,count_include_pad=false");
  EXPECT_EQ(exclude.mode, CudnnPoolingMode::kAverageExcludePadding);
}

TEST_F(KernelBenchL1, DilatedMaxPoolingHasNoCudnnEquivalent) {
  EXPECT_NE(reason_of(spec("41")).find("dilation"), std::string::npos);
  EXPECT_NE(reason_of(spec("43")).find("dilation"), std::string::npos);
  EXPECT_NE(reason_of("max_pool2d:return_indices=true").find("indices"), std::string::npos);
}

TEST(CudnnPlan, CeilModeOnlyWhereItAddsNoWindow) {
  // 7 wide, kernel 2, stride 2: ceil gives 4 outputs, cuDNN's floor 3.
  std::string why = reason_of("max_pool2d:height=7,width=7,kernel=2,stride=2,ceil_mode=true");
  EXPECT_NE(why.find("ceil_mode"), std::string::npos) << why;
  // 8 wide: both give 4.
  EXPECT_EQ(plan_as<CudnnPoolingPlan>("avg_pool2d:height=8,width=8,kernel=2,stride=2,ceil_mode=true").y.dims,
            (Ints{2, 4, 4, 4}));
}

TEST_F(KernelBenchL1, SoftmaxAxisIsCudnnsChannelAxis) {
  auto softmax = plan_as<CudnnSoftmaxPlan>(spec("23"));
  EXPECT_EQ(softmax.algorithm, CudnnSoftmaxAlgorithm::kAccurate);
  EXPECT_EQ(softmax.mode, CudnnSoftmaxMode::kChannel);
  EXPECT_EQ(softmax.x.dims, (Ints{4096, 393216, 1, 1}));
  EXPECT_EQ(softmax.x.strides, (Ints{393216, 1, 1, 1}));
  EXPECT_EQ(plan_as<CudnnSoftmaxPlan>(spec("24")).algorithm, CudnnSoftmaxAlgorithm::kLog);
  // A middle axis: outer extents before it, inner after it.
  EXPECT_EQ(plan_as<CudnnSoftmaxPlan>("softmax:shape=4x5x6,axis=1").x.dims, (Ints{4, 5, 6, 1}));
  EXPECT_EQ(plan_as<CudnnSoftmaxPlan>("log_softmax:shape=4x5x6,axis=-1").x.dims, (Ints{20, 6, 1, 1}));
  EXPECT_EQ(plan_as<CudnnSoftmaxPlan>("softmax:shape=4x5x6,axis=0").x.dims, (Ints{1, 4, 30, 1}));
}

TEST_F(KernelBenchL1, EveryConvPoolAndSoftmaxProblemIsPlannedOrSaysWhyNot) {
  std::set<std::string> planned, refused;
  for (const suites::Problem& p : suite_->problems) {
    if (!p.supported()) continue;
    ops::Workload w = ops::OpRegistry::global().make_workload(p.spec);
    std::string why_not;
    std::optional<CudnnPlan> plan = plan_cudnn(w, why_not);
    const std::string& kind = w.op->name;
    bool cudnn_kind = kind.find("conv") != std::string::npos || kind.find("pool") != std::string::npos ||
                      kind.find("softmax") != std::string::npos;
    if (plan) {
      planned.insert(p.id);
      EXPECT_TRUE(cudnn_kind) << p.id << " " << kind;
      // The planned output holds exactly as many elements as the function's Y.
      int64_t elements = 1, expected = 1;
      const CudnnTensorDims& y = std::visit(
          [](const auto& q) -> const CudnnTensorDims& {
            if constexpr (requires { q.y; }) {
              return q.y;
            } else {
              return q.x;
            }
          },
          *plan);
      for (int extent : y.dims) elements *= extent;
      elements *= std::visit([](const auto& q) { return q.batch_slices; }, *plan);
      for (int64_t extent : w.func->params.back().buffer->shape) expected *= extent;
      EXPECT_EQ(elements, expected) << p.id;
    } else {
      EXPECT_FALSE(why_not.empty()) << p.id;
      if (cudnn_kind) refused.insert(p.id);
    }
  }
  std::set<std::string> expected_planned = {"23", "24", "42", "44", "45", "46"};
  for (int id = 50; id <= 87; ++id) {
    if (id >= 51 && id <= 53) continue;  // not convolutions
    if (id != 86) expected_planned.insert(std::to_string(id));
  }
  EXPECT_EQ(planned, expected_planned);
  // Dilated max pooling; the depthwise-separable pair of convolutions.
  EXPECT_EQ(refused, (std::set<std::string>{"41", "43", "86"}));
}

// Each planned kernelbench-l1 problem, and a few settings the suite lacks, through cuDNN's
// descriptors: cuDNN accepts them and sizes the output as the plan does (for a transposed
// conv, the forward conv from Y's shape gives X's).
TEST_F(KernelBenchL1, CudnnSizesEveryPlannedOutputAsThePlanDoes) {
  if (!cudnn_api().error.empty()) GTEST_SKIP() << "[SKIP] cuDNN cannot be loaded: " << cudnn_api().error;
  std::vector<std::string> specs = {
      "conv_transpose2d:batch=1,in_channels=2,out_channels=4,size=5x5,kernel=3x3,stride=2x2,output_padding=1x1",
      "conv2d:batch=2,in_channels=8,out_channels=12,size=12x12,kernel=3x3,groups=4,dtype=f16",
      "avg_pool2d:kernel=3,stride=2,padding=1,count_include_pad=false",
      "max_pool1d:length=64,kernel=4,stride=1,padding=2,dtype=bf16",
  };
  for (const suites::Problem& p : suite_->problems) {
    if (p.supported()) specs.push_back(p.spec);
  }
  // The models suite's convolutions (a bias, 7x7 stride 2, depthwise, pointwise) and pools.
  for (const suites::Problem& p : suites::load_suite("models").problems) {
    if (p.supported()) specs.push_back(p.spec);
  }
  int checked = 0;
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    std::string why_not;
    std::optional<CudnnPlan> plan = plan_of(spec, why_not);
    if (!plan) continue;
    if (const auto* conv = std::get_if<CudnnConvolutionPlan>(&*plan)) {
      Expected<CudnnConvolutionDescriptors> d = make_convolution_descriptors(*conv);
      ASSERT_TRUE(d.ok()) << d.error().describe();
      Expected<std::vector<int>> dims = cudnn_forward_output_dims(*conv, d.value());
      ASSERT_TRUE(dims.ok()) << dims.error().describe();
      EXPECT_EQ(dims.value(), conv->transposed ? conv->x.dims : conv->y.dims);
      ++checked;
    } else if (const auto* pool = std::get_if<CudnnPoolingPlan>(&*plan)) {
      Expected<CudnnPoolingDescriptors> d = make_pooling_descriptors(*pool);
      ASSERT_TRUE(d.ok()) << d.error().describe();
      Expected<std::vector<int>> dims = cudnn_pooling_output_dims(*pool, d.value());
      ASSERT_TRUE(dims.ok()) << dims.error().describe();
      EXPECT_EQ(dims.value(), pool->y.dims);
      ++checked;
    } else {
      const auto& softmax = std::get<CudnnSoftmaxPlan>(*plan);
      EXPECT_TRUE(make_tensor_descriptor(softmax.x, softmax.data_type).ok());
    }
  }
  // The extras, kernelbench-l1's 34 convolutions and 4 pools, models' 7 convolutions and 2 pools.
  EXPECT_EQ(checked, 4 + 34 + 4 + 7 + 2);
}

TEST(CudnnPlan, OtherOpKindsHaveNone) {
  EXPECT_NE(reason_of("matmul:m=8,n=8,k=8").find("convolutions, pooling and softmax"), std::string::npos);
  EXPECT_NE(reason_of("depthwise_separable_conv2d").find("two convolutions"), std::string::npos);
}

}  // namespace
}  // namespace dragon::bench
