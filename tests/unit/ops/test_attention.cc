// scaled_dot_product_attention on the interpreter against plain double loops (with and
// without the causal mask), its stage structure and the KernelBench mapping. Not a test
// of the interpreter itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dragon/ir/op.h"
#include "dragon/ir/stmt.h"
#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"

namespace dragon::ops {
namespace {

using interp::Distribution;
using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::to_doubles;

struct Shape {
  int64_t batch, heads, seq_q, seq_kv, head_dim;
  bool causal;

  std::string spec(const std::string& dtype = "f32") const {
    return "scaled_dot_product_attention:batch=" + std::to_string(batch) + ",heads=" + std::to_string(heads) +
           ",seq_q=" + std::to_string(seq_q) + ",seq_kv=" + std::to_string(seq_kv) +
           ",head_dim=" + std::to_string(head_dim) + ",causal=" + (causal ? "true" : "false") + ",dtype=" + dtype;
  }
};

// softmax(Q K^T / sqrt(head_dim), keys j > i hidden when causal) V, per batch and head.
std::vector<double> reference_attention(const OpRun& run, const Shape& s) {
  std::vector<double> q = to_doubles(run.arg(0)), k = to_doubles(run.arg(1)), v = to_doubles(run.arg(2));
  std::vector<double> out(static_cast<size_t>(s.batch * s.heads * s.seq_q * s.head_dim));
  double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  std::vector<double> weights(s.seq_kv);
  for (int64_t bh = 0; bh < s.batch * s.heads; ++bh) {
    const double* qs = &q[bh * s.seq_q * s.head_dim];
    const double* ks = &k[bh * s.seq_kv * s.head_dim];
    const double* vs = &v[bh * s.seq_kv * s.head_dim];
    for (int64_t i = 0; i < s.seq_q; ++i) {
      int64_t visible = s.causal ? std::min(i + 1, s.seq_kv) : s.seq_kv;
      double largest = -INFINITY;
      for (int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < s.head_dim; ++d) dot += qs[i * s.head_dim + d] * ks[j * s.head_dim + d];
        weights[j] = dot * scale;
        largest = std::max(largest, weights[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < visible; ++j) {
        weights[j] = std::exp(weights[j] - largest);
        sum += weights[j];
      }
      for (int64_t e = 0; e < s.head_dim; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < visible; ++j) acc += weights[j] / sum * vs[j * s.head_dim + e];
        out[(bh * s.seq_q + i) * s.head_dim + e] = acc;
      }
    }
  }
  return out;
}

TEST(AttentionSdpa, MatchesReference) {
  for (const Shape& s : {Shape{2, 3, 7, 13, 5, false}, Shape{1, 2, 13, 7, 8, false}, Shape{1, 1, 5, 1, 3, false},
                         Shape{1, 2, 9, 9, 16, false}}) {
    OpRun run = run_op(s.spec(), 31);
    ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{s.batch, s.heads, s.seq_q, s.head_dim}));
    EXPECT_TRUE(all_close(run.output(), reference_attention(run, s), 1e-5, 1e-5)) << s.spec();
  }
}

// KernelBench feeds torch.rand: all-positive scores, weights far from one-hot.
TEST(AttentionSdpa, RandInputs) {
  Shape s{2, 2, 7, 13, 32, false};
  OpRun run = run_op(s.spec(), 32, Distribution::kRand);
  EXPECT_TRUE(all_close(run.output(), reference_attention(run, s), 1e-5, 1e-5));
}

// Top-left aligned mask: query i sees keys 0..i, for more, fewer and as many keys as queries.
TEST(AttentionSdpa, CausalMaskHidesLaterKeys) {
  for (const Shape& s : {Shape{2, 2, 9, 9, 8, true}, Shape{1, 3, 7, 13, 5, true}, Shape{1, 2, 13, 7, 5, true}}) {
    OpRun run = run_op(s.spec(), 33);
    std::vector<double> expected = reference_attention(run, s);
    EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 1e-5)) << s.spec();
    // Query 0 sees only key 0: its output is V's first row.
    std::vector<double> v = to_doubles(run.arg(2));
    for (int64_t e = 0; e < s.head_dim; ++e) EXPECT_NEAR(run.output().get(e), v[e], 1e-6) << s.spec();
  }
}

TEST(AttentionSdpa, HalfTypes) {
  struct TypeCase {
    std::string dtype;
    double rtol, atol;
  };
  for (const TypeCase& t : {TypeCase{"f16", 1e-3, 1e-4}, TypeCase{"bf16", 8e-3, 1e-3}}) {
    for (bool causal : {false, true}) {
      Shape s{1, 2, 7, 13, 16, causal};
      OpRun run = run_op(s.spec(t.dtype), 34);
      ASSERT_EQ(run.output().dtype(), *ir::parse_dtype(t.dtype));
      EXPECT_TRUE(all_close(run.output(), reference_attention(run, s), t.rtol, t.atol)) << s.spec(t.dtype);
    }
  }
}

void collect_blocks(const ir::Stmt& s, std::vector<const ir::BlockNode*>& out) {
  if (const auto* realize = s.as<ir::BlockRealizeNode>()) {
    if (realize->block->name != "root") out.push_back(realize->block.get());
    collect_blocks(realize->block->body, out);
  } else if (const auto* loop = s.as<ir::ForNode>()) {
    collect_blocks(loop->body, out);
  } else if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    for (const ir::Stmt& child : seq->seq) collect_blocks(child, out);
  }
}

// One stage per step, as schedules expect to find them; the two products reduce over
// head_dim and over the keys.
TEST(AttentionSdpa, StagesAreUnfused) {
  Workload w = OpRegistry::global().make_workload("scaled_dot_product_attention:seq_q=8,seq_kv=16,head_dim=4");
  std::vector<const ir::BlockNode*> blocks;
  collect_blocks(w.func->body, blocks);
  std::vector<std::string> names;
  for (const ir::BlockNode* b : blocks) names.push_back(b->name);
  EXPECT_EQ(names, (std::vector<std::string>{"scores", "logits", "row_max", "exp", "row_sum", "weights", "out"}));
  ASSERT_EQ(blocks.size(), 7u);
  auto reduce_extent = [](const ir::BlockNode* b) {
    for (const ir::IterVar& iv : b->iter_vars) {
      if (iv.kind == ir::IterKind::kReduce) return ir::as_const_int(iv.dom.extent).value_or(-1);
    }
    return int64_t{-1};
  };
  EXPECT_EQ(reduce_extent(blocks[0]), 4);
  EXPECT_EQ(reduce_extent(blocks[6]), 16);

  Workload half = OpRegistry::global().make_workload("scaled_dot_product_attention:dtype=bf16");
  EXPECT_EQ(half.func.outputs()[0]->dtype, ir::DataType::bf16());
  // The output keeps its name when a cast stage rounds the f32 accumulator.
  EXPECT_EQ(half.func.outputs()[0]->name, "out");
}

// Defaults stay small enough for `dragon run` on the interpreter.
TEST(AttentionSdpa, DefaultsRunToFiniteValues) {
  OpRun run = run_op("scaled_dot_product_attention", 1);
  ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{2, 2, 64, 32}));
  for (double v : to_doubles(run.output())) ASSERT_TRUE(std::isfinite(v));
}

TEST(AttentionSdpa, ZeroSizesAreUserErrors) {
  for (const std::string param : {"batch", "heads", "seq_q", "seq_kv", "head_dim"}) {
    std::string message = "(no error)";
    try {
      OpRegistry::global().make_workload("scaled_dot_product_attention:" + param + "=0");
    } catch (const UserError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("parameter " + param), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dragon::ops
