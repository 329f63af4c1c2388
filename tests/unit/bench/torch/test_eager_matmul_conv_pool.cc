// Eager baselines of the matmul, conv, pool, attention and fused families against the
// interpreter: every op kind, each parameter variant, at shapes small enough for the
// interpreter (a few thousand to a few hundred thousand multiply-adds per spec).
//
// 16-bit coverage: Debian's libtorch 1.13, which these tests link, has no CPU f16 kernels
// for matmul, diag, convolutions, pooling or layer_norm ("not implemented for 'Half'"),
// so those ops are checked in bf16 (the same f32-accumulate path of our builders) and run
// in f16 only on CUDA. Its CPU bf16 conv_transpose is broken (it computes a forward
// convolution: ConvTranspose1d of length 8, stride 2, kernel 3 returns length 3, not 17),
// so the transposed convs are checked in f32 only.
#include <gtest/gtest.h>

#include <initializer_list>

#include "unit/bench/torch/eager_op_check.h"

namespace dragon::bench::testing {
namespace {

void expect_all_match(std::initializer_list<const char*> specs) {
  for (const char* spec : specs) expect_eager_matches_interpreter(spec);
}

TEST(EagerMatmulOps, MatmulWithEachTransposeAndMatrixVector) {
  expect_all_match({
      "matmul:m=16,n=24,k=8",
      "matmul:m=16,n=24,k=8,trans_a=true",
      "matmul:m=16,n=24,k=8,trans_b=true",
      "matmul:m=12,n=10,k=20,trans_a=true,trans_b=true",
      "matmul:m=32,n=1,k=16",
  });
}

TEST(EagerMatmulOps, MatmulSixteenBitTypes) {
  expect_all_match({
      "matmul:m=16,n=24,k=32,trans_b=true,dtype=bf16",
      "matmul:m=16,n=24,k=32,trans_a=true,dtype=bf16",
  });
}

TEST(EagerMatmulOps, BatchMatmulBatchingBroadcastAndTransposes) {
  expect_all_match({
      "batch_matmul:batch=3,m=8,n=12,k=6",
      "batch_matmul:batch=2x3,m=4,n=5,k=6",
      "batch_matmul:batch=3,m=8,n=12,k=6,trans_a=true,trans_b=true",
      "batch_matmul:batch=2x3,m=4,n=5,k=6,broadcast_b=true",
      "batch_matmul:batch=3,m=8,n=12,k=6,broadcast_b=true,trans_b=true",
      "batch_matmul:batch=2,m=8,n=8,k=16,dtype=bf16",
      "batch_matmul:batch=2,m=8,n=8,k=16,broadcast_b=true,trans_a=true,dtype=bf16",
  });
}

TEST(EagerMatmulOps, TriangularMatmulUpperAndLower) {
  expect_all_match({
      "triangular_matmul:m=12,n=16,k=8,triangle=upper",
      "triangular_matmul:m=16,n=12,k=8,triangle=lower",
      "triangular_matmul:m=16,n=16,k=16,triangle=lower,dtype=bf16",
  });
}

TEST(EagerMatmulOps, DiagMatmul) {
  expect_all_match({
      "diag_matmul:m=8,n=12",
      "diag_matmul:m=8,n=12,dtype=bf16",
  });
}

TEST(EagerMatmulOps, MulScalar) {
  expect_all_match({
      "mul_scalar:shape=4x5x6,scalar=-2.5",
      "mul_scalar:shape=7x9,scalar=3.14,dtype=f16",
      "mul_scalar:shape=7x9,scalar=0.1,dtype=bf16",
  });
}

TEST(EagerConvOps, Conv1dStridePaddingDilationGroupsBias) {
  expect_all_match({
      "conv1d:batch=2,in_channels=4,out_channels=6,size=20",
      "conv1d:batch=2,in_channels=4,out_channels=6,size=20,kernel=5,stride=2,padding=2,dilation=2,groups=2,bias=true",
      "conv1d:batch=1,in_channels=4,out_channels=8,size=16,groups=4,bias=true,dtype=bf16",
  });
}

TEST(EagerConvOps, Conv2dVariants) {
  expect_all_match({
      "conv2d:batch=1,in_channels=3,out_channels=4,size=8x10",
      "conv2d:batch=2,in_channels=4,out_channels=6,size=9x8,kernel=3x2,stride=2x1,padding=1x2,dilation=1x2,groups=2,"
      "bias=true",
      // depthwise and pointwise
      "conv2d:batch=1,in_channels=4,out_channels=4,size=8x8,groups=4,padding=1x1",
      "conv2d:batch=1,in_channels=6,out_channels=4,size=6x6,kernel=1x1,bias=true",
      "conv2d:batch=1,in_channels=4,out_channels=4,size=8x8,bias=true,groups=2,dtype=bf16",
      "conv2d:batch=1,in_channels=4,out_channels=4,size=8x8,padding=1x1,dtype=bf16",
  });
}

TEST(EagerConvOps, Conv3dVariants) {
  expect_all_match({
      "conv3d:batch=1,in_channels=2,out_channels=3,size=5x6x5",
      "conv3d:batch=1,in_channels=4,out_channels=4,size=6x6x6,kernel=3x2x3,stride=2x1x2,padding=1x0x1,"
      "dilation=1x2x1,groups=2,bias=true",
      "conv3d:batch=1,in_channels=2,out_channels=2,size=4x4x4,kernel=2x2x2,dtype=bf16",
  });
}

TEST(EagerConvOps, ConvTranspose1dStridePaddingOutputPaddingDilationGroupsBias) {
  expect_all_match({
      "conv_transpose1d:batch=2,in_channels=4,out_channels=6,size=10",
      "conv_transpose1d:batch=2,in_channels=4,out_channels=6,size=10,kernel=4,stride=3,padding=1,output_padding=2,"
      "dilation=2,groups=2,bias=true",
      "conv_transpose1d:batch=1,in_channels=4,out_channels=4,size=8,stride=2,padding=1,output_padding=1",
  });
}

TEST(EagerConvOps, ConvTranspose2dVariants) {
  expect_all_match({
      "conv_transpose2d:batch=1,in_channels=3,out_channels=4,size=5x6",
      "conv_transpose2d:batch=2,in_channels=4,out_channels=2,size=5x4,kernel=3x2,stride=2x3,padding=1x0,"
      "output_padding=1x2,dilation=1x2,groups=2,bias=true",
      "conv_transpose2d:batch=1,in_channels=4,out_channels=4,size=4x4,stride=2x2,padding=1x1,bias=true",
  });
}

TEST(EagerConvOps, ConvTranspose3dVariants) {
  expect_all_match({
      "conv_transpose3d:batch=1,in_channels=2,out_channels=3,size=3x4x3",
      "conv_transpose3d:batch=1,in_channels=4,out_channels=2,size=3x3x4,kernel=2x3x2,stride=2x1x2,padding=0x1x1,"
      "output_padding=1x0x1,dilation=1x1x2,groups=2,bias=true",
      "conv_transpose3d:batch=1,in_channels=2,out_channels=2,size=3x3x3,kernel=2x2x2,stride=2x2x2",
  });
}

TEST(EagerConvOps, DepthwiseSeparableConv2d) {
  expect_all_match({
      "depthwise_separable_conv2d:batch=1,in_channels=4,out_channels=6,size=8x8",
      "depthwise_separable_conv2d:batch=2,in_channels=4,out_channels=3,size=9x7,kernel=3x5,stride=2x1,padding=0x2,"
      "dilation=2x1,bias=true",
      "depthwise_separable_conv2d:batch=1,in_channels=4,out_channels=4,size=6x6,bias=true,dtype=bf16",
  });
}

TEST(EagerPoolOps, MaxPoolPaddingDilationCeilMode) {
  expect_all_match({
      "max_pool1d:batch=2,channels=3,length=17,kernel=3,stride=2,padding=1,dilation=2,ceil_mode=true",
      "max_pool2d:batch=1,channels=3,height=9,width=10,kernel=3,stride=2,padding=1,ceil_mode=true",
      "max_pool2d:batch=1,channels=2,height=11,width=9,kernel=2,stride=1,dilation=3",
      "max_pool3d:batch=1,channels=2,depth=7,height=6,width=5,kernel=3,stride=2,padding=1,dilation=2,ceil_mode=true",
      "max_pool2d:batch=1,channels=2,height=8,width=8,kernel=3,stride=2,padding=1,dtype=bf16",
      "max_pool1d:batch=1,channels=2,length=16,kernel=3,stride=2,padding=1,return_indices=true,dtype=bf16",
  });
}

// Indices are exact: torch's and ours pick the first maximum of each window.
TEST(EagerPoolOps, MaxPoolReturnIndices) {
  expect_all_match({
      "max_pool1d:batch=2,channels=3,length=17,kernel=3,stride=2,padding=1,ceil_mode=true,return_indices=true",
      "max_pool1d:batch=1,channels=2,length=20,kernel=3,stride=3,padding=1,dilation=2,return_indices=true",
      "max_pool2d:batch=1,channels=3,height=9,width=10,kernel=3,stride=2,padding=1,dilation=2,return_indices=true",
      "max_pool3d:batch=1,channels=2,depth=7,height=6,width=5,kernel=2,stride=2,ceil_mode=true,return_indices=true",
      "max_pool3d:batch=1,channels=1,depth=6,height=6,width=6,kernel=3,stride=2,padding=1,dilation=2,"
      "return_indices=true",
  });
}

TEST(EagerPoolOps, AvgPoolPaddingCeilModeCountIncludePad) {
  expect_all_match({
      "avg_pool1d:batch=2,channels=3,length=17,kernel=3,stride=2,padding=1,ceil_mode=true",
      "avg_pool1d:batch=2,channels=3,length=17,kernel=4,stride=3,padding=2,count_include_pad=false",
      "avg_pool2d:batch=1,channels=3,height=9,width=10,kernel=3,stride=2,padding=1,ceil_mode=true,"
      "count_include_pad=false",
      "avg_pool2d:batch=1,channels=2,height=8,width=8,kernel=3,stride=2,padding=1",
      "avg_pool3d:batch=1,channels=2,depth=7,height=6,width=5,kernel=3,stride=2,padding=1,ceil_mode=true",
      "avg_pool3d:batch=1,channels=2,depth=5,height=5,width=5,kernel=2,stride=2,padding=1,count_include_pad=false",
      "avg_pool2d:batch=1,channels=2,height=8,width=8,kernel=2,stride=2,dtype=bf16",
      "avg_pool1d:batch=1,channels=2,length=16,kernel=3,stride=2,padding=1,dtype=bf16",
  });
}

TEST(EagerAttentionOps, ScaledDotProductAttentionPlainAndCausal) {
  expect_all_match({
      "scaled_dot_product_attention:batch=1,heads=2,seq_q=8,seq_kv=8,head_dim=16",
      "scaled_dot_product_attention:batch=2,heads=2,seq_q=6,seq_kv=10,head_dim=8",
      "scaled_dot_product_attention:batch=1,heads=2,seq_q=8,seq_kv=8,head_dim=16,causal=true",
      // torch aligns the causal mask at the top left: query i sees keys 0..i.
      "scaled_dot_product_attention:batch=1,heads=2,seq_q=6,seq_kv=10,head_dim=8,causal=true",
      "scaled_dot_product_attention:batch=1,heads=2,seq_q=10,seq_kv=6,head_dim=8,causal=true",
  });
}

TEST(EagerAttentionOps, ScaledDotProductAttentionSixteenBitTypes) {
  expect_all_match({
      "scaled_dot_product_attention:batch=1,heads=2,seq_q=8,seq_kv=12,head_dim=16,dtype=f16",
      "scaled_dot_product_attention:batch=1,heads=2,seq_q=8,seq_kv=12,head_dim=16,causal=true,dtype=bf16",
  });
}

TEST(EagerFusedOps, MatmulBiasActEachActivation) {
  expect_all_match({
      "matmul_bias_act:m=8,n=12,k=16,activation=none",
      "matmul_bias_act:m=8,n=12,k=16,activation=relu",
      "matmul_bias_act:m=8,n=12,k=16,activation=gelu",
      "matmul_bias_act:m=8,n=12,k=16,activation=silu",
      "matmul_bias_act:m=8,n=12,k=16,activation=sigmoid",
      "matmul_bias_act:m=8,n=12,k=16,activation=hardsigmoid",
      "matmul_bias_act:m=8,n=12,k=16,activation=hardswish",
      "matmul_bias_act:m=8,n=12,k=16,activation=gelu,trans_w=true",
  });
}

// torch rounds the bf16 product to the type before the activation; ours applies the
// activation to the f32 sum and rounds once. The default factor covers the extra rounding.
TEST(EagerFusedOps, MatmulBiasActSixteenBitTypes) {
  expect_all_match({
      "matmul_bias_act:m=8,n=12,k=32,activation=silu,dtype=bf16",
      "matmul_bias_act:m=8,n=12,k=32,activation=gelu,trans_w=true,dtype=bf16",
  });
}

TEST(EagerFusedOps, AddLayerNormWithAndWithoutSum) {
  expect_all_match({
      "add_layer_norm:rows=4,dim=32",
      "add_layer_norm:rows=4,dim=32,eps=0.001,return_sum=true",
      "add_layer_norm:rows=4,dim=32,return_sum=true,dtype=bf16",
  });
}

TEST(EagerFusedOps, AddRmsNormWithAndWithoutSum) {
  expect_all_match({
      "add_rms_norm:rows=4,dim=32",
      "add_rms_norm:rows=4,dim=32,eps=0.001,return_sum=true",
      "add_rms_norm:rows=4,dim=32,return_sum=true,dtype=bf16",
      "add_rms_norm:rows=4,dim=32,dtype=f16",
  });
}

}  // namespace
}  // namespace dragon::bench::testing
