// Eager baselines of the recsys families against the interpreter.
#include <gtest/gtest.h>

#include "unit/bench/torch/eager_op_check.h"

namespace dragon::bench::testing {
namespace {

// Few indices for many bags, so that the generated offsets leave some bags empty (and
// empty bags must give 0 in every mode).
constexpr const char* kBag = "embedding_bag:num_embeddings=10,embedding_dim=4,batch=8,max_bag_length=3,num_indices=7";

TEST(EagerRecsysEmbeddingBag, SumMeanMaxInEachIndexType) {
  for (const char* pooling : {"sum", "mean", "max"}) {
    for (const char* index : {"i32", "i64"}) {
      expect_eager_matches_interpreter(std::string(kBag) + ",mode=" + pooling + ",index_dtype=" + index);
    }
  }
}

TEST(EagerRecsysEmbeddingBag, PerSampleWeights) {
  expect_eager_matches_interpreter(std::string(kBag) + ",mode=sum,per_sample_weights=true");
  expect_eager_matches_interpreter(std::string(kBag) + ",mode=sum,per_sample_weights=true,index_dtype=i32,dtype=f16");
}

TEST(EagerRecsysEmbeddingBag, SixteenBitTablesAccumulateInF32) {
  for (const char* dtype : {"f16", "bf16"}) {
    for (const char* pooling : {"sum", "mean", "max"}) {
      expect_eager_matches_interpreter(std::string(kBag) + ",mode=" + pooling + ",dtype=" + dtype);
    }
  }
  expect_eager_matches_interpreter(std::string(kBag) + ",mode=sum,per_sample_weights=true,dtype=bf16");
}

// Tables of different sizes, so a wrong per-table row offset reads the wrong rows.
constexpr const char* kTbe =
    "table_batched_embedding:rows=9x4x6,embedding_dim=4,batch=3,max_bag_length=3,num_indices=15";

TEST(EagerRecsysTableBatchedEmbedding, FloatTablesSumAndMeanInEachIndexType) {
  for (const char* pooling : {"sum", "mean"}) {
    for (const char* index : {"i32", "i64"}) {
      expect_eager_matches_interpreter(std::string(kTbe) + ",pooling=" + pooling + ",index_dtype=" + index);
    }
  }
  // Few indices over 12 bags: empty bags give 0, also in mean.
  expect_eager_matches_interpreter(
      "table_batched_embedding:rows=9x4x6,embedding_dim=4,batch=4,max_bag_length=3,num_indices=5,pooling=mean");
}

TEST(EagerRecsysTableBatchedEmbedding, PerSampleWeights) {
  expect_eager_matches_interpreter(std::string(kTbe) + ",per_sample_weights=true");
  expect_eager_matches_interpreter(std::string(kTbe) + ",per_sample_weights=true,weights_dtype=f16,index_dtype=i32");
  expect_eager_matches_interpreter(std::string(kTbe) + ",per_sample_weights=true,weights_dtype=i8");
}

TEST(EagerRecsysTableBatchedEmbedding, SixteenBitWeightsAndOutputs) {
  expect_eager_matches_interpreter(std::string(kTbe) + ",weights_dtype=f16,output_dtype=f32");
  expect_eager_matches_interpreter(std::string(kTbe) + ",weights_dtype=bf16,output_dtype=f32,pooling=mean");
  expect_eager_matches_interpreter(std::string(kTbe) + ",weights_dtype=bf16,output_dtype=bf16");
  expect_eager_matches_interpreter(std::string(kTbe) + ",weights_dtype=f16,output_dtype=f16,pooling=mean");
  expect_eager_matches_interpreter(std::string(kTbe) + ",weights_dtype=f32,output_dtype=f16");
}

TEST(EagerRecsysTableBatchedEmbedding, Int8RowwiseQuantizedWeights) {
  // The codes are drawn over the whole byte range, so negative i8 patterns (codes 128..255) occur.
  for (const char* output : {"f16", "f32", "bf16"}) {
    expect_eager_matches_interpreter(std::string(kTbe) + ",weights_dtype=i8,output_dtype=" + output);
  }
  expect_eager_matches_interpreter(std::string(kTbe) +
                                   ",weights_dtype=i8,output_dtype=f16,pooling=mean,index_dtype=i32");
}

TEST(EagerRecsysDlrmDotInteraction, StrictAndSelfInteraction) {
  for (const char* self : {"false", "true"}) {
    for (const char* dtype : {"f32", "bf16", "f16"}) {
      expect_eager_matches_interpreter(std::string("dlrm_dot_interaction:batch=3,num_sparse=4,embedding_dim=5") +
                                       ",self_interaction=" + self + ",dtype=" + dtype);
    }
  }
}

TEST(EagerRecsysDcnCrossLayer, FloatAndBf16) {
  expect_eager_matches_interpreter("dcn_cross_layer:batch=3,dim=8,rank=3,dtype=f32");
  expect_eager_matches_interpreter("dcn_cross_layer:batch=3,dim=8,rank=3,dtype=f16");
  expect_eager_matches_interpreter("dcn_cross_layer:batch=3,dim=8,rank=3,dtype=bf16");
}

constexpr const char* kJagged = "batch=5,max_len=4,embedding_dim=3,total=9";

TEST(EagerRecsysJagged, JaggedToDensePadsEachBag) {
  expect_eager_matches_interpreter(std::string("jagged_to_dense:") + kJagged);
  expect_eager_matches_interpreter(std::string("jagged_to_dense:") + kJagged + ",padding_value=-1.5,index_dtype=i32");
  expect_eager_matches_interpreter(std::string("jagged_to_dense:") + kJagged + ",padding_value=3,dtype=bf16");
  // Every bag max_len long (no padding), and a single row (nearly all padding).
  expect_eager_matches_interpreter("jagged_to_dense:batch=3,max_len=2,embedding_dim=2,total=6");
  expect_eager_matches_interpreter("jagged_to_dense:batch=3,max_len=2,embedding_dim=2,total=1,padding_value=7");
}

TEST(EagerRecsysJagged, DenseToJaggedGathersTheBagRows) {
  expect_eager_matches_interpreter(std::string("dense_to_jagged:") + kJagged);
  expect_eager_matches_interpreter(std::string("dense_to_jagged:") + kJagged + ",index_dtype=i32,dtype=bf16");
  expect_eager_matches_interpreter("dense_to_jagged:batch=3,max_len=2,embedding_dim=2,total=6,dtype=f16");
}

TEST(EagerRecsysJagged, LengthsToOffsetsWithAndWithoutTheTotal) {
  for (const char* total : {"true", "false"}) {
    for (const char* index : {"i32", "i64"}) {
      expect_eager_matches_interpreter(std::string("lengths_to_offsets:batch=7,max_len=5,include_total=") + total +
                                       ",index_dtype=" + index);
    }
  }
}

TEST(EagerRecsysJagged, AttentionPoolingSoftmaxWithinEachBag) {
  // Few rows for many bags: some bags are empty and must give 0.
  expect_eager_matches_interpreter("jagged_attention_pooling:batch=6,max_len=3,embedding_dim=4,total=7");
  expect_eager_matches_interpreter(
      "jagged_attention_pooling:batch=6,max_len=3,embedding_dim=4,total=7,index_dtype=i32");
  expect_eager_matches_interpreter("jagged_attention_pooling:batch=4,max_len=4,embedding_dim=4,total=10,dtype=bf16");
  expect_eager_matches_interpreter("jagged_attention_pooling:batch=4,max_len=4,embedding_dim=4,total=10,dtype=f16");
}

}  // namespace
}  // namespace dragon::bench::testing
