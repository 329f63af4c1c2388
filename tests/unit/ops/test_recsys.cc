// Recommender ops (embedding_bag, table_batched_embedding, dlrm_dot_interaction,
// dcn_cross_layer, jagged ops, lengths_to_offsets) against plain double-precision references
// written here, plus the user errors of bad parameter combinations and the DLRM-Bench suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dragon/ir/op.h"
#include "dragon/ir/stmt.h"
#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using interp::Distribution;
using tensor::HostTensor;
using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::user_error_of;
using testing::find_block;

// The argument of the parameter whose buffer is called `name`.
const HostTensor& arg_named(const OpRun& run, std::string_view name) {
  const auto& params = run.workload.func->params;
  for (size_t p = 0; p < params.size(); ++p) {
    if (params[p].buffer->name == name) return run.args[p];
  }
  throw std::out_of_range("no parameter " + std::string(name));
}

std::vector<int64_t> ints(const HostTensor& t) {
  std::vector<int64_t> values(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) values[i] = t.get_int(i);
  return values;
}

int count_empty_bags(const std::vector<int64_t>& offsets) {
  int empty = 0;
  for (size_t b = 0; b + 1 < offsets.size(); ++b) empty += offsets[b + 1] == offsets[b];
  return empty;
}

// The block called `name` in the function's root sequence of loop nests, or nullptr.
// ---------------------------------------------------------------- embedding_bag

// torch.nn.EmbeddingBag(mode, include_last_offset=True) in double precision.
std::vector<double> embedding_bag_reference(const OpRun& run, const std::string& mode, bool weighted) {
  const HostTensor& weight = arg_named(run, "weight");
  std::vector<int64_t> indices = ints(arg_named(run, "indices"));
  std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
  int64_t dim = weight.shape()[1], batch = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<double> out(batch * dim, 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t begin = offsets[b], end = offsets[b + 1];
    if (begin == end) continue;  // empty bags give 0 in every mode
    for (int64_t d = 0; d < dim; ++d) {
      double acc = mode == "max" ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t k = begin; k < end; ++k) {
        double x = weight.get(indices[k] * dim + d);
        if (weighted) x *= arg_named(run, "per_sample_weights").get(k);
        acc = mode == "max" ? std::max(acc, x) : acc + x;
      }
      if (mode == "mean") acc /= static_cast<double>(end - begin);
      out[b * dim + d] = acc;
    }
  }
  return out;
}

struct BagCase {
  std::string spec;
  std::string mode;
  bool weighted;
  double rtol, atol;
};

void check_embedding_bag(const BagCase& c, uint64_t seed, Distribution distribution = Distribution::kNormal) {
  SCOPED_TRACE(c.spec);
  OpRun run = run_op(c.spec, seed, distribution);
  EXPECT_TRUE(all_close(run.output(), embedding_bag_reference(run, c.mode, c.weighted), c.rtol, c.atol));
}

TEST(RecsysEmbeddingBag, EveryModeMatchesTorchWithEmptyBags) {
  // 5 indices in 9 bags of at most 3: most bags are empty.
  for (std::string mode : {"sum", "mean", "max"}) {
    std::string spec =
        "embedding_bag:num_embeddings=13,embedding_dim=7,batch=9,max_bag_length=3,num_indices=5,mode=" + mode;
    OpRun run = run_op(spec, 3);
    EXPECT_GE(count_empty_bags(ints(arg_named(run, "offsets"))), 4) << spec;
    EXPECT_TRUE(all_close(run.output(), embedding_bag_reference(run, mode, false), 1e-6, 1e-6)) << spec;
  }
}

TEST(RecsysEmbeddingBag, FullBagsAtMaximumLength) {
  // num_indices = batch * max_bag_length forces every bag to the maximum length.
  for (std::string mode : {"sum", "mean", "max"}) {
    std::string spec =
        "embedding_bag:num_embeddings=11,embedding_dim=5,batch=4,max_bag_length=6,num_indices=24,mode=" + mode;
    OpRun run = run_op(spec, 5);
    std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
    for (size_t b = 0; b + 1 < offsets.size(); ++b) EXPECT_EQ(offsets[b + 1] - offsets[b], 6);
    EXPECT_TRUE(all_close(run.output(), embedding_bag_reference(run, mode, false), 1e-6, 1e-6)) << spec;
  }
}

TEST(RecsysEmbeddingBag, MaxOfNegativeRowsIsNotClampedToZero) {
  // Uniform [-1, 1) rows: a max that started from 0 instead of -inf would differ.
  BagCase c{"embedding_bag:num_embeddings=17,embedding_dim=9,batch=6,max_bag_length=4,num_indices=14,mode=max", "max",
            false, 1e-6, 1e-6};
  OpRun run = run_op(c.spec, 7, Distribution::kUniform);
  std::vector<double> expected = embedding_bag_reference(run, "max", false);
  EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](double v) { return v < 0; }));
  EXPECT_TRUE(all_close(run.output(), expected, c.rtol, c.atol));
  check_embedding_bag(c, 8, Distribution::kEdge);
}

TEST(RecsysEmbeddingBag, PerSampleWeightsWithSum) {
  check_embedding_bag({"embedding_bag:num_embeddings=19,embedding_dim=6,batch=7,max_bag_length=5,num_indices=20,"
                       "mode=sum,per_sample_weights=true",
                       "sum", true, 1e-6, 1e-6},
                      11);
}

TEST(RecsysEmbeddingBag, Int32IndicesAndDefaults) {
  check_embedding_bag({"embedding_bag:index_dtype=i32,mode=mean", "mean", false, 1e-6, 1e-6}, 13);
  check_embedding_bag({"embedding_bag", "sum", false, 1e-6, 1e-6}, 14);
}

TEST(RecsysEmbeddingBag, HalfAndBfloatWeightsAccumulateInF32) {
  for (std::string mode : {"sum", "mean", "max"}) {
    std::string shape = "embedding_bag:num_embeddings=23,embedding_dim=8,batch=6,max_bag_length=7,num_indices=25,mode=";
    check_embedding_bag({shape + mode + ",dtype=f16", mode, false, 2e-3, 2e-3}, 17);
    check_embedding_bag({shape + mode + ",dtype=bf16", mode, false, 1.6e-2, 1.6e-2}, 18);
  }
  check_embedding_bag({"embedding_bag:num_embeddings=23,embedding_dim=8,batch=6,max_bag_length=7,num_indices=25,"
                       "per_sample_weights=true,dtype=f16",
                       "sum", true, 3e-3, 3e-3},
                      19);
  check_embedding_bag({"embedding_bag:dtype=f64", "sum", false, 1e-12, 1e-12}, 20);
}

TEST(RecsysEmbeddingBag, PoolingLoopIsBoundedByMaxBagLengthNotIndexCount) {
  Workload w =
      OpRegistry::global().make_workload("embedding_bag:num_embeddings=100,batch=10,max_bag_length=6,num_indices=50");
  const ir::BlockNode* pooled = find_block(w.func, "pooled");
  ASSERT_NE(pooled, nullptr);
  ASSERT_EQ(pooled->iter_vars.size(), 3u);
  EXPECT_EQ(pooled->iter_vars[2].kind, ir::IterKind::kReduce);
  EXPECT_EQ(ir::as_const_int(pooled->iter_vars[2].dom.extent), std::optional<int64_t>(6));
}

TEST(RecsysEmbeddingBag, BadCombinationsNameTheParameter) {
  std::string weighted_mean = user_error_of("embedding_bag:mode=mean,per_sample_weights=true");
  EXPECT_NE(weighted_mean.find("parameter per_sample_weights"), std::string::npos) << weighted_mean;
  EXPECT_NE(weighted_mean.find("embedding_bag"), std::string::npos) << weighted_mean;
  std::string weighted_max = user_error_of("embedding_bag:mode=max,per_sample_weights=true");
  EXPECT_NE(weighted_max.find("parameter per_sample_weights"), std::string::npos) << weighted_max;
  std::string too_many = user_error_of("embedding_bag:batch=2,max_bag_length=3,num_indices=7");
  EXPECT_NE(too_many.find("parameter num_indices"), std::string::npos) << too_many;
  EXPECT_NE(user_error_of("embedding_bag:index_dtype=f32").find("index_dtype"), std::string::npos);
}

// ---------------------------------------------------------------- table_batched_embedding

std::vector<double> tbe_reference(const OpRun& run, const std::vector<int64_t>& rows, int64_t batch,
                                  const std::string& pooling, bool weighted) {
  const HostTensor& weights = arg_named(run, "weights");
  std::vector<int64_t> indices = ints(arg_named(run, "indices"));
  std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
  int64_t tables = static_cast<int64_t>(rows.size()), dim = weights.shape()[1];
  std::vector<double> out(batch * tables * dim, 0.0);
  int64_t start = 0;
  for (int64_t t = 0; t < tables; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      int64_t begin = offsets[t * batch + b], end = offsets[t * batch + b + 1];
      for (int64_t d = 0; d < dim; ++d) {
        double acc = 0;
        for (int64_t k = begin; k < end; ++k) {
          EXPECT_LT(indices[k], rows[t]);
          double x = weights.get((start + indices[k]) * dim + d);
          if (weighted) x *= arg_named(run, "per_sample_weights").get(k);
          acc += x;
        }
        if (pooling == "mean" && end > begin) acc /= static_cast<double>(end - begin);
        out[b * tables * dim + t * dim + d] = acc;
      }
    }
    start += rows[t];
  }
  return out;
}

TEST(RecsysTableBatchedEmbedding, SumOverTablesOfDifferentSizes) {
  OpRun run = run_op("table_batched_embedding:rows=9x4x15,embedding_dim=5,batch=3,max_bag_length=4,num_indices=20", 21);
  EXPECT_EQ(run.output().shape(), (std::vector<int64_t>{3, 15}));
  EXPECT_TRUE(all_close(run.output(), tbe_reference(run, {9, 4, 15}, 3, "sum", false), 1e-6, 1e-6));
}

TEST(RecsysTableBatchedEmbedding, MeanWithEmptyBagsAndWeightedSum) {
  OpRun mean = run_op(
      "table_batched_embedding:rows=6x11,embedding_dim=3,batch=5,max_bag_length=3,num_indices=6,"
      "pooling=mean,index_dtype=i32",
      22);
  EXPECT_GE(count_empty_bags(ints(arg_named(mean, "offsets"))), 2);
  EXPECT_TRUE(all_close(mean.output(), tbe_reference(mean, {6, 11}, 5, "mean", false), 1e-6, 1e-6));
  OpRun weighted = run_op(
      "table_batched_embedding:rows=8x5x7x3,embedding_dim=4,batch=3,max_bag_length=5,"
      "num_indices=30,per_sample_weights=true",
      23);
  EXPECT_TRUE(all_close(weighted.output(), tbe_reference(weighted, {8, 5, 7, 3}, 3, "sum", true), 1e-6, 1e-6));
}

TEST(RecsysTableBatchedEmbedding, HalfWeightsWithF32AndHalfOutputs) {
  std::string shape = "table_batched_embedding:rows=10x3x12,embedding_dim=8,batch=4,max_bag_length=6,num_indices=50,";
  OpRun f32_out = run_op(shape + "weights_dtype=f16,output_dtype=f32", 24);
  // f16 rows summed in f32: only the f32 rounding of the sum separates it from double.
  EXPECT_TRUE(all_close(f32_out.output(), tbe_reference(f32_out, {10, 3, 12}, 4, "sum", false), 1e-6, 1e-6));
  OpRun f16_out = run_op(shape + "weights_dtype=f16,output_dtype=f16", 25);
  EXPECT_TRUE(all_close(f16_out.output(), tbe_reference(f16_out, {10, 3, 12}, 4, "sum", false), 1e-3, 2e-3));
  OpRun bf16 = run_op(shape + "weights_dtype=bf16,output_dtype=bf16", 26);
  EXPECT_TRUE(all_close(bf16.output(), tbe_reference(bf16, {10, 3, 12}, 4, "sum", false), 8e-3, 1.6e-2));
}

// Int8-rowwise rows: code = the stored byte read as unsigned, value = scale * code + bias.
std::vector<double> int8_tbe_reference(const OpRun& run, const std::vector<int64_t>& rows, int64_t batch) {
  const HostTensor& codes = arg_named(run, "weights");
  const HostTensor& scale_bias = arg_named(run, "scale_bias");
  std::vector<int64_t> indices = ints(arg_named(run, "indices"));
  std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
  int64_t tables = static_cast<int64_t>(rows.size()), dim = codes.shape()[1];
  std::vector<double> out(batch * tables * dim, 0.0);
  int64_t start = 0;
  for (int64_t t = 0; t < tables; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = offsets[t * batch + b]; k < offsets[t * batch + b + 1]; ++k) {
        int64_t row = start + indices[k];
        for (int64_t d = 0; d < dim; ++d) {
          double code = static_cast<double>(static_cast<uint8_t>(codes.get_int(row * dim + d)));
          out[b * tables * dim + t * dim + d] += scale_bias.get(row * 2) * code + scale_bias.get(row * 2 + 1);
        }
      }
    }
    start += rows[t];
  }
  return out;
}

TEST(RecsysTableBatchedEmbedding, Int8RowwiseDequantizeAndPool) {
  std::string shape =
      "table_batched_embedding:rows=7x12x5,embedding_dim=6,batch=4,max_bag_length=5,num_indices=37,"
      "weights_dtype=i8,output_dtype=";
  OpRun f16 = run_op(shape + "f16", 27);
  std::vector<int64_t> codes = ints(arg_named(f16, "weights"));
  // Codes cover the whole byte range, so the unsigned reading is exercised.
  EXPECT_TRUE(std::any_of(codes.begin(), codes.end(), [](int64_t c) { return c < 0; }));
  EXPECT_TRUE(all_close(f16.output(), int8_tbe_reference(f16, {7, 12, 5}, 4), 1e-3, 1e-3));
  OpRun f32 = run_op(shape + "f32", 28);
  EXPECT_TRUE(all_close(f32.output(), int8_tbe_reference(f32, {7, 12, 5}, 4), 1e-5, 1e-4));
}

TEST(RecsysTableBatchedEmbedding, BadCombinationsNameTheParameter) {
  std::string weighted = user_error_of("table_batched_embedding:pooling=mean,per_sample_weights=true");
  EXPECT_NE(weighted.find("parameter per_sample_weights"), std::string::npos) << weighted;
  std::string too_many = user_error_of("table_batched_embedding:rows=5x5,batch=2,max_bag_length=2,num_indices=9");
  EXPECT_NE(too_many.find("parameter num_indices"), std::string::npos) << too_many;
  EXPECT_NE(user_error_of("table_batched_embedding:weights_dtype=f64").find("weights_dtype"), std::string::npos);
}

// ---------------------------------------------------------------- dlrm_dot_interaction

// DLRM interact_features with "dot": T = cat(dense, sparse), Z = T T^T, then Z[:, li, lj]
// for li, lj = torch.tril_indices(F+1, F+1, offset), written as the row-major walk of the
// triangle that tril_indices produces.
std::vector<double> dot_interaction_reference(const OpRun& run, int64_t batch, int64_t features, int64_t dim,
                                              bool self) {
  const HostTensor& dense = arg_named(run, "dense");
  const HostTensor& sparse = arg_named(run, "sparse");
  auto feature = [&](int64_t b, int64_t f, int64_t d) {
    return f == 0 ? dense.get(b * dim + d) : sparse.get((b * features + f - 1) * dim + d);
  };
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = 0; d < dim; ++d) out.push_back(dense.get(b * dim + d));
    for (int64_t i = 0; i <= features; ++i) {
      for (int64_t j = 0; j < (self ? i + 1 : i); ++j) {
        double dot = 0;
        for (int64_t d = 0; d < dim; ++d) dot += feature(b, i, d) * feature(b, j, d);
        out.push_back(dot);
      }
    }
  }
  return out;
}

TEST(RecsysDotInteraction, StrictLowerTriangleInTrilIndicesOrder) {
  OpRun run = run_op("dlrm_dot_interaction:batch=3,num_sparse=5,embedding_dim=7", 31);
  EXPECT_EQ(run.output().shape(), (std::vector<int64_t>{3, 7 + 15}));
  EXPECT_TRUE(all_close(run.output(), dot_interaction_reference(run, 3, 5, 7, false), 1e-5, 1e-5));
}

TEST(RecsysDotInteraction, SelfInteractionAndSingleFeature) {
  OpRun self = run_op("dlrm_dot_interaction:batch=2,num_sparse=4,embedding_dim=3,self_interaction=true", 32);
  EXPECT_EQ(self.output().shape(), (std::vector<int64_t>{2, 3 + 15}));
  EXPECT_TRUE(all_close(self.output(), dot_interaction_reference(self, 2, 4, 3, true), 1e-5, 1e-5));
  OpRun one = run_op("dlrm_dot_interaction:batch=4,num_sparse=1,embedding_dim=5", 33);
  EXPECT_TRUE(all_close(one.output(), dot_interaction_reference(one, 4, 1, 5, false), 1e-5, 1e-5));
}

TEST(RecsysDotInteraction, PairMappingHoldsForTwentySixFeatures) {
  // The DLRM shape's 351 pairs, on a narrow D to stay small.
  OpRun run = run_op("dlrm_dot_interaction:batch=2,num_sparse=26,embedding_dim=2", 34);
  EXPECT_EQ(run.output().shape(), (std::vector<int64_t>{2, 2 + 351}));
  EXPECT_TRUE(all_close(run.output(), dot_interaction_reference(run, 2, 26, 2, false), 1e-5, 1e-5));
}

TEST(RecsysDotInteraction, HalfAndBfloatAccumulateInF32) {
  OpRun f16 = run_op("dlrm_dot_interaction:batch=3,num_sparse=4,embedding_dim=16,dtype=f16", 35);
  EXPECT_TRUE(all_close(f16.output(), dot_interaction_reference(f16, 3, 4, 16, false), 2e-3, 2e-3));
  OpRun bf16 = run_op("dlrm_dot_interaction:batch=3,num_sparse=4,embedding_dim=16,dtype=bf16", 36);
  EXPECT_TRUE(all_close(bf16.output(), dot_interaction_reference(bf16, 3, 4, 16, false), 8e-3, 3e-2));
}

// ---------------------------------------------------------------- dcn_cross_layer

std::vector<double> cross_layer_reference(const OpRun& run, int64_t batch, int64_t dim, int64_t rank) {
  const HostTensor& x0 = arg_named(run, "x0");
  const HostTensor& x = arg_named(run, "x");
  const HostTensor& v = arg_named(run, "v");
  const HostTensor& u = arg_named(run, "u");
  const HostTensor& bias = arg_named(run, "bias");
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> low(rank, 0.0);
    for (int64_t r = 0; r < rank; ++r) {
      for (int64_t j = 0; j < dim; ++j) low[r] += x.get(b * dim + j) * v.get(j * rank + r);
    }
    for (int64_t j = 0; j < dim; ++j) {
      double gate = bias.get(j);
      for (int64_t r = 0; r < rank; ++r) gate += low[r] * u.get(r * dim + j);
      out.push_back(x0.get(b * dim + j) * gate + x.get(b * dim + j));
    }
  }
  return out;
}

TEST(RecsysCrossLayer, MatchesLowRankCrossNet) {
  OpRun run = run_op("dcn_cross_layer:batch=3,dim=11,rank=4", 37);
  EXPECT_TRUE(all_close(run.output(), cross_layer_reference(run, 3, 11, 4), 1e-5, 1e-4));
  OpRun defaults = run_op("dcn_cross_layer", 38);
  EXPECT_TRUE(all_close(defaults.output(), cross_layer_reference(defaults, 8, 32, 8), 1e-5, 1e-4));
}

TEST(RecsysCrossLayer, BfloatAccumulatesInF32) {
  OpRun run = run_op("dcn_cross_layer:batch=2,dim=16,rank=8,dtype=bf16", 39);
  EXPECT_TRUE(all_close(run.output(), cross_layer_reference(run, 2, 16, 8), 1.6e-2, 5e-2));
}

// ---------------------------------------------------------------- jagged tensors

TEST(RecsysJagged, JaggedToDensePadsWithThePaddingValue) {
  for (std::string extra : {",padding_value=-2.5", ",padding_value=0,index_dtype=i32,dtype=bf16"}) {
    std::string spec = "jagged_to_dense:batch=5,max_len=4,embedding_dim=3,total=9" + extra;
    OpRun run = run_op(spec, 41);
    double padding = extra.find("-2.5") != std::string::npos ? -2.5 : 0.0;
    const HostTensor& values = arg_named(run, "values");
    std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
    std::vector<double> expected;
    for (int64_t b = 0; b < 5; ++b) {
      for (int64_t l = 0; l < 4; ++l) {
        for (int64_t d = 0; d < 3; ++d) {
          bool inside = offsets[b] + l < offsets[b + 1];
          expected.push_back(inside ? values.get((offsets[b] + l) * 3 + d) : padding);
        }
      }
    }
    EXPECT_TRUE(all_close(run.output(), expected, 0, 0)) << spec;
  }
}

TEST(RecsysJagged, DenseToJaggedWritesEveryRowOnce) {
  for (std::string spec : {"dense_to_jagged:batch=6,max_len=5,embedding_dim=3,total=13",
                           "dense_to_jagged:batch=3,max_len=4,embedding_dim=2,total=12,index_dtype=i32,dtype=f16",
                           "dense_to_jagged:batch=7,max_len=3,embedding_dim=4,total=2"}) {
    OpRun run = run_op(spec, 42);
    const HostTensor& dense = arg_named(run, "dense");
    std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
    int64_t max_len = dense.shape()[1], dim = dense.shape()[2];
    std::vector<double> expected(run.output().num_elements(), std::numeric_limits<double>::quiet_NaN());
    for (size_t b = 0; b + 1 < offsets.size(); ++b) {
      for (int64_t l = 0; l < offsets[b + 1] - offsets[b]; ++l) {
        for (int64_t d = 0; d < dim; ++d) {
          expected[(offsets[b] + l) * dim + d] = dense.get((static_cast<int64_t>(b) * max_len + l) * dim + d);
        }
      }
    }
    // The output starts as NaN: a row the scatter missed stays NaN and fails here.
    for (double v : expected) ASSERT_FALSE(std::isnan(v)) << spec;
    EXPECT_TRUE(all_close(run.output(), expected, 0, 0)) << spec;
  }
}

TEST(RecsysJagged, RoundTripThroughDenseIsTheIdentity) {
  // jagged_to_dense then dense_to_jagged on the same offsets gives the values back.
  OpRun to_dense = run_op("jagged_to_dense:batch=4,max_len=5,embedding_dim=3,total=11", 43);
  Workload back = OpRegistry::global().make_workload("dense_to_jagged:batch=4,max_len=5,embedding_dim=3,total=11");
  std::vector<HostTensor> args = interp::make_arguments(back.func, 44, Distribution::kNormal);
  args[0] = to_dense.output();
  args[1] = arg_named(to_dense, "offsets");
  interp::run(back.func, args);
  EXPECT_TRUE(all_close(args[2], testing::to_doubles(arg_named(to_dense, "values")), 0, 0));
}

// DIN target attention: softmax of <h_l, q_b> over the bag's rows, then sum_l p_l h_l.
std::vector<double> attention_pooling_reference(const OpRun& run) {
  const HostTensor& history = arg_named(run, "history");
  const HostTensor& query = arg_named(run, "query");
  std::vector<int64_t> offsets = ints(arg_named(run, "offsets"));
  int64_t batch = query.shape()[0], dim = query.shape()[1];
  std::vector<double> out(batch * dim, 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> scores;
    for (int64_t k = offsets[b]; k < offsets[b + 1]; ++k) {
      double s = 0;
      for (int64_t d = 0; d < dim; ++d) s += history.get(k * dim + d) * query.get(b * dim + d);
      scores.push_back(s);
    }
    if (scores.empty()) continue;
    double largest = *std::max_element(scores.begin(), scores.end()), sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - largest));
    for (size_t l = 0; l < scores.size(); ++l) {
      for (int64_t d = 0; d < dim; ++d) {
        out[b * dim + d] += scores[l] / sum * history.get((offsets[b] + static_cast<int64_t>(l)) * dim + d);
      }
    }
  }
  return out;
}

TEST(RecsysJagged, AttentionPoolingWithEmptyAndFullBags) {
  OpRun sparse = run_op("jagged_attention_pooling:batch=7,max_len=4,embedding_dim=5,total=6", 45);
  EXPECT_GE(count_empty_bags(ints(arg_named(sparse, "offsets"))), 1);
  EXPECT_TRUE(all_close(sparse.output(), attention_pooling_reference(sparse), 1e-5, 1e-5));
  OpRun full = run_op("jagged_attention_pooling:batch=3,max_len=6,embedding_dim=9,total=18,index_dtype=i32", 46);
  EXPECT_TRUE(all_close(full.output(), attention_pooling_reference(full), 1e-5, 1e-5));
  // Large scores (uniform rows would be too tame): exp without the max would overflow.
  OpRun edge = run_op("jagged_attention_pooling", 47, Distribution::kEdge);
  EXPECT_TRUE(all_close(edge.output(), attention_pooling_reference(edge), 1e-5, 1e-4));
}

TEST(RecsysJagged, AttentionPoolingInBfloat) {
  OpRun run = run_op("jagged_attention_pooling:batch=4,max_len=5,embedding_dim=8,total=12,dtype=bf16", 48);
  EXPECT_TRUE(all_close(run.output(), attention_pooling_reference(run), 1.6e-2, 2e-2));
}

TEST(RecsysJagged, BadTotalNamesTheParameter) {
  EXPECT_NE(user_error_of("jagged_to_dense:batch=2,max_len=3,total=7").find("parameter total"), std::string::npos);
  EXPECT_NE(user_error_of("dense_to_jagged:batch=2,max_len=3,total=7").find("parameter total"), std::string::npos);
  EXPECT_NE(user_error_of("jagged_attention_pooling:batch=2,max_len=3,total=7").find("parameter total"),
            std::string::npos);
}

TEST(RecsysLengthsToOffsets, CompleteAndExclusiveCumsum) {
  // max_len=1 makes about half the lengths 0 (empty bags).
  for (std::string index : {"i32", "i64"}) {
    for (bool with_total : {true, false}) {
      std::string spec = "lengths_to_offsets:batch=11,max_len=" + std::string(index == "i32" ? "1" : "5") +
                         ",index_dtype=" + index + ",include_total=" + (with_total ? "true" : "false");
      OpRun run = run_op(spec, 51);
      std::vector<int64_t> lengths = ints(arg_named(run, "lengths"));
      std::vector<double> expected{0};
      for (int64_t l : lengths) expected.push_back(expected.back() + static_cast<double>(l));
      if (!with_total) expected.pop_back();
      EXPECT_EQ(run.output().dtype(), *ir::parse_dtype(index));
      EXPECT_TRUE(all_close(run.output(), expected, 0, 0)) << spec;
    }
  }
}

TEST(RecsysLengthsToOffsets, IsAnOrderedScanNotAReduction) {
  Workload w = OpRegistry::global().make_workload("lengths_to_offsets:batch=100");
  const ir::BlockNode* scan = find_block(w.func, "offsets");
  ASSERT_NE(scan, nullptr);
  ASSERT_EQ(scan->iter_vars.size(), 1u);
  EXPECT_EQ(scan->iter_vars[0].kind, ir::IterKind::kOrdered);
  EXPECT_EQ(ir::as_const_int(scan->iter_vars[0].dom.extent), std::optional<int64_t>(101));
}

}  // namespace
}  // namespace dragon::ops
