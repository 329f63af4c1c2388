// Kernel classification rules: the shipped rules on real kernel names, first match wins,
// and bad rule files are user errors with line numbers.
#include <gtest/gtest.h>

#include "dragon/profile/kernel_classifier.h"
#include "dragon/support/error.h"

namespace dragon::profile {
namespace {

TEST(KernelClassifier, BuiltinRulesSortRealKernelNames) {
  KernelClassifier c = KernelClassifier::builtin();
  EXPECT_EQ(c.classify("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT"), "gemm");
  EXPECT_EQ(c.classify("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), "gemm");
  EXPECT_EQ(c.classify("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64>>(Flash_fwd_params)"), "attention");
  EXPECT_EQ(c.classify("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc"), "convolution");
  EXPECT_EQ(c.classify("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>()"),
            "norm_softmax");
  EXPECT_EQ(c.classify("void at::native::(anonymous namespace)::EmbeddingBag_updateOutputKernel_sum_mean<float>()"),
            "embedding_sparse");
  EXPECT_EQ(c.classify("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>()"),
            "elementwise");
  EXPECT_EQ(c.classify("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>()"), "reduction_scan");
  EXPECT_EQ(c.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), "communication");
  EXPECT_EQ(c.classify("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<AdamFunctor>()"),
            "optimizer");
  EXPECT_EQ(c.classify("Memcpy HtoD"), "copy_layout");
  // A dtype-converting copy is a copy, and "convert" is not a convolution.
  EXPECT_EQ(c.classify("void at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda, convert>()"),
            "copy_layout");
  EXPECT_EQ(c.classify("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_bias_NNT"), "gemm");
  EXPECT_EQ(c.classify("void at::native::(anonymous namespace)::max_pool_forward_nhwc<c10::BFloat16, int>()"),
            "pooling");
  EXPECT_EQ(c.classify("void at::native::index_elementwise_kernel<128, 4, gpu_index_kernel<index_kernel_impl>>()"),
            "embedding_sparse");
  EXPECT_EQ(c.classify("my_custom_kernel"), "other");
}

TEST(KernelClassifier, FirstMatchWinsAndAddressabilityIsData) {
  KernelClassifier c = KernelClassifier::from_text(
      "category\ta\taddressable\tfirst\ncategory\tb\tfixed\tsecond\nrule\tb\tfoo\nrule\ta\tfoo|bar\n", "<test>");
  EXPECT_EQ(c.classify("foobar"), "b");
  EXPECT_EQ(c.classify("bar"), "a");
  EXPECT_TRUE(c.find("a")->addressable);
  EXPECT_FALSE(c.find("b")->addressable);
  EXPECT_NE(c.find("other"), nullptr);  // always present
}

TEST(KernelClassifier, BadRuleFilesAreUserErrorsWithLines) {
  auto error_of = [](const std::string& text) {
    try {
      KernelClassifier::from_text(text, "rules.tsv");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of("category\ta\tmaybe\tx\n").find("rules.tsv:1:"), std::string::npos);
  EXPECT_NE(error_of("category\ta\tfixed\tx\nrule\tz\tfoo\n").find("rules.tsv:2: rule for undeclared category z"),
            std::string::npos);
  EXPECT_NE(error_of("category\ta\tfixed\tx\nrule\ta\t(unclosed\n").find("bad regular expression"), std::string::npos);
  EXPECT_NE(error_of("bogus\tline\n").find("unknown entry 'bogus'"), std::string::npos);
}

TEST(KernelClassifier, DemanglesCppSymbols) {
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("nvjet_tst_128x256"), "nvjet_tst_128x256");
}

}  // namespace
}  // namespace dragon::profile
