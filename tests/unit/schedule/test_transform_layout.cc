// transform_layout and IndexMap: the lambda text (round trip, normalization, errors with
// their column, floor semantics), the rewritten buffers, accesses and regions (tiling a
// matmul's shared cache 16x16, before and after blockize; fusing, splitting and permuting
// a softmax intermediate; NCHW -> NHWC of conv2d's padded input), semantic preservation on
// the interpreter, replay and JSON (both TVM layouts), and each precondition's error.
#include <gtest/gtest.h>

#include <functional>

#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/index_map.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::expect_refusal;
using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using Type = Schedule::BufferIndexType;

// ---- IndexMap ---------------------------------------------------------------------------

TEST(IndexMap, CanonicalTextRoundTrips) {
  for (const char* text : {"lambda i, j: (i // 16, j // 16, i % 16, j % 16)", "lambda i, j: (j, i)",
                           "lambda i, j: (i * 8 + j,)", "lambda i: (i // 4, i % 4)", "lambda n, c, h, w: (n, h, w, c)",
                           "lambda i, j: (i - (j + 1),)", "lambda i: ((i + 1) // 2,)", "lambda i: (-1 * i + 7,)",
                           "lambda: ()", "lambda i: (i * 2 % 4, 2 * (i // 4))", "lambda x_0, y: (x_0 - -3, y)"}) {
    IndexMap map = IndexMap::parse(text);
    EXPECT_EQ(map.to_string(), text);
    EXPECT_EQ(IndexMap::parse(map.to_string()), map);
  }
}

TEST(IndexMap, OtherSpellingsNormalize) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"lambda i,j:(i//16,j)", "lambda i, j: (i // 16, j)"},
      {"lambda i, j: [j, i]", "lambda i, j: (j, i)"},
      {"lambda i, j: j, i", "lambda i, j: (j, i)"},
      {"lambda i: (i)", "lambda i: (i,)"},
      {"lambda i: i", "lambda i: (i,)"},
      {"lambda i: ((i),)", "lambda i: (i,)"},
      {"lambda i: i // (4 * 4)", "lambda i: (i // 16,)"},
      {"lambda i: (-i,)", "lambda i: (-1 * i,)"},
      {"lambda i, j: (i + 1) // 2, j", "lambda i, j: ((i + 1) // 2, j)"},
      {"lambda i, j,: (i, j,)", "lambda i, j: (i, j)"},
  };
  for (const auto& [text, canonical] : cases) EXPECT_EQ(IndexMap::parse(text).to_string(), canonical) << text;
}

TEST(IndexMap, BadTextIsUserErrorWithColumn) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"lambda i, j: (i * j,)", 17},       // not affine
      {"lambda i: (i // j,)", 17},         // unknown name
      {"lambda i: (i // 0,)", 14},         // divisor
      {"lambda i: (i % (i + 1),)", 14},    // divisor
      {"lambda i, i: (i,)", 11},           // duplicate parameter
      {"lambda i: (i,", 14},               // unclosed
      {"lam i: (i,)", 1},                  // no lambda
      {"lambda i: (i $ 2)", 14},           // character
      {"lambda i: (i + 1))", 18},          // trailing
      {"lambda i (i)", 10},                // missing ':'
  };
  for (const auto& [text, column] : cases) {
    try {
      IndexMap::parse(text);
      ADD_FAILURE() << "expected an error for " << text;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("<index_map>:1:{}:", column)), std::string::npos)
          << text << " -> " << e.what();
    }
  }
}

TEST(IndexMap, EvaluatesWithFloorSemanticsAndAppliesInTheIndexType) {
  IndexMap map = IndexMap::parse("lambda i, j: (i // 4, i % 4, j * 3 - 1)");
  EXPECT_EQ(map.evaluate({-5, 2}), (std::vector<int64_t>{-2, 3, 5}));
  EXPECT_EQ(map.evaluate({9, 0}), (std::vector<int64_t>{2, 1, -1}));
  ir::Var i("i"), j("j");
  std::vector<ir::Expr> out = map.apply({i, j});
  ASSERT_EQ(out.size(), 3u);
  for (const ir::Expr& e : out) EXPECT_EQ(e.dtype(), ir::DataType::i32());
  EXPECT_EQ(ir::print_expr(out[0]), "i // 4");
  ir::Var k("k", ir::DataType::i64());
  for (const ir::Expr& e : map.apply({i, k})) EXPECT_EQ(e.dtype(), ir::DataType::i64());
}

// ---- transform_layout ---------------------------------------------------------------------

constexpr const char* kTile16 = "lambda i, j: (i // 16, j // 16, i % 16, j % 16)";

TEST(TransformLayout, MatmulSharedCacheTiled16x16) {
  Schedule sch(workload("matmul:m=32,n=32,k=32"));
  BlockRV c = sch.get_block("C");
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  sch.transform_layout(a_shared, 0, Type::kWrite, IndexMap::parse(kTile16));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc A_shared: f32[2, 2, 16, 16] shared")) << text;
  EXPECT_TRUE(has_line(text, "A_shared[v0 // 16, v1 // 16, v0 % 16, v1 % 16] = A[v0, v1]")) << text;
  EXPECT_TRUE(has_line(text, "writes A_shared[v0 // 16, v1 // 16, v0 % 16, v1 % 16]")) << text;
  EXPECT_TRUE(has_line(text, "reads A_shared[vi0 // 16, vr0 // 16, vi0 % 16, vr0 % 16], B[vr0, vi1]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(TransformLayout, TiledCacheUnderComputeAtAndBlockizedConsumer) {
  // The tensor-core flow: tile the loops by 16, cache A in shared memory at the reduction
  // tile, lay it out in 16x16 tiles, then wrap a 16x16x16 tile of C into an outer block
  // whose read region of A_shared is a whole tile.
  Schedule sch(workload("matmul:m=32,n=32,k=32"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{16}});
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, int64_t{16}});
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{16}});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  sch.compute_at(a_shared, k[0]);
  sch.blockize(i[1]);
  sch.transform_layout(c, 0, Type::kRead, IndexMap::parse(kTile16));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc A_shared: f32[2, 2, 16, 16] shared")) << text;
  // The outer block reads one whole tile; the inner one a point of it.
  EXPECT_NE(text.find("A_shared[vi0_o, vr0_o, 0 +: 16, 0 +: 16]"), std::string::npos) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(TransformLayout, SoftmaxIntermediateFusedSplitPermuted) {
  for (const char* map : {"lambda i, j: (i * 8 + j,)", "lambda i, j: (i, j // 4, j % 4)", "lambda i, j: (j, i)",
                          "lambda i, j: (j % 2, i, j // 2)"}) {
    Schedule sch(workload("softmax:shape=4x8"));
    sch.transform_layout(sch.get_block("x_exp"), 0, Type::kWrite, IndexMap::parse(map));
    EXPECT_TRUE(same_outputs(sch.original(), sch.func())) << map;
    EXPECT_TRUE(replays_exactly(sch)) << map;
  }
  Schedule sch(workload("softmax:shape=4x8"));
  // Through a reader's reads: x_exp is read 0 of exp_sum.
  sch.transform_layout(sch.get_block("exp_sum"), 0, Type::kRead, IndexMap::parse("lambda i, j: (i * 8 + j,)"));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc x_exp: f32[32]")) << text;
  EXPECT_TRUE(has_line(text, "x_exp[vi0 * 8 + vi1] = exp(X[vi0, vi1] - x_max[vi0])")) << text;
  EXPECT_TRUE(has_line(text, "exp_sum[vi0] = exp_sum[vi0] + x_exp[vi0 * 8 + vr0]")) << text;
  EXPECT_TRUE(has_line(text, "softmax[vi0, vi1] = x_exp[vi0 * 8 + vi1] / exp_sum[vi0]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(TransformLayout, SparseImageGetsTheLargestImagePlusOne) {
  Schedule sch(workload("softmax:shape=4x8"));
  sch.transform_layout(sch.get_block("x_exp"), 0, Type::kWrite, IndexMap::parse("lambda i, j: (j, i * 2 + 1)"));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc x_exp: f32[8, 8]")) << text;  // rows 1, 3, 5, 7 used
  EXPECT_TRUE(has_line(text, "x_exp[vi1, vi0 * 2 + 1] = exp(X[vi0, vi1] - x_max[vi0])")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(TransformLayout, SoftmaxTwiceComposes) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV x_exp = sch.get_block("x_exp");
  sch.transform_layout(x_exp, 0, Type::kWrite, IndexMap::parse("lambda i, j: (j, i)"));
  sch.transform_layout(x_exp, 0, Type::kWrite, IndexMap::parse("lambda a, b: (a // 2, b, a % 2)"));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc x_exp: f32[4, 4, 2]")) << text;
  EXPECT_TRUE(has_line(text, "x_exp[vi1 // 2, vi0, vi1 % 2] = exp(X[vi0, vi1] - x_max[vi0])")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(TransformLayout, Conv2dPaddedInputToNhwc) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  sch.transform_layout(sch.get_block("Y"), 0, Type::kRead, IndexMap::parse("lambda n, c, h, w: (n, h, w, c)"));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc X_pad: f32[1, 8, 8, 2]")) << text;
  // vi0 has extent 1: the simplified index is 0.
  EXPECT_TRUE(has_line(text, "writes X_pad[0, vi2, vi3, vi1]")) << text;
  EXPECT_TRUE(has_line(text, "reads X_pad[0, vi2 + vr1, vi3 + vr2, vr0], W[vi1, vr0, vr1, vr2]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

// A consumer reading a range of B (8 consecutive elements per instance): the region's
// image is exact when the range stays in one row of the new layout, else it covers the
// dimensions it may cross.
constexpr const char* kRangeReader = R"(func ranges(in A: f32[32], out C: f32[4]) {
  block root {
    alloc B: f32[32]
    for i0 in 32 {
      block B [v0: S 32 = i0] {
        reads A[v0]
        writes B[v0]
        B[v0] = A[v0] * 2f32
      }
    }
    for i0 in 4 {
      block C [v0: S 4 = i0] {
        reads B[v0 * 8 +: 8]
        writes C[v0]
        C[v0] = 0f32
        for k in 8 {
          C[v0] = C[v0] + B[v0 * 8 + k]
        }
      }
    }
  }
}
)";

TEST(TransformLayout, RangeRegionsStayExactOrCoverWhatTheyMayCross) {
  {
    Schedule sch(ir::parse_function(kRangeReader));
    sch.transform_layout(sch.get_block("C"), 0, Type::kRead, IndexMap::parse("lambda i: (i // 8, i % 8)"));
    std::string text = ir::print_function(sch.func());
    EXPECT_TRUE(has_line(text, "alloc B: f32[4, 8]")) << text;
    EXPECT_TRUE(has_line(text, "reads B[v0, 0 +: 8]")) << text;
    EXPECT_TRUE(has_line(text, "C[v0] = C[v0] + B[v0, k]")) << text;
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
  {
    Schedule sch(ir::parse_function(kRangeReader));
    sch.transform_layout(sch.get_block("C"), 0, Type::kRead, IndexMap::parse("lambda i: (i % 16, i // 16)"));
    std::string text = ir::print_function(sch.func());
    EXPECT_TRUE(has_line(text, "alloc B: f32[16, 2]")) << text;
    // i = 8*v0 + k (k < 8) stays inside one multiple of 16: the region is exact.
    EXPECT_TRUE(has_line(text, "reads B[v0 % 2 * 8 +: 8, v0 // 2]")) << text;
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(TransformLayout, TraceTextAndJsonFollowTvm) {
  Schedule sch(workload("softmax:shape=4x8"));
  sch.transform_layout(sch.get_block("x_exp"), 0, Type::kWrite, IndexMap::parse("lambda i, j: (j, i)"));
  const std::string text = sch.trace().to_string();
  EXPECT_NE(text.find(R"x(TransformLayout(b0, "lambda i, j: (j, i)" | 0 1 None false))x"), std::string::npos) << text;
  const std::string json = trace_to_json(sch.trace());
  const std::string recorded = R"x(["TransformLayout",["b0","\"lambda i, j: (j, i)\""],[0,1,null,false],[]])x";
  EXPECT_NE(json.find(recorded), std::string::npos) << json;
  EXPECT_TRUE(replays_exactly(sch));

  // TVM before v0.12 recorded (block | buffer_index, buffer_index_type, index_map).
  Trace old_layout;
  for (const Instruction& inst : sch.trace().instructions()) {
    if (inst.kind != InstructionKind::TransformLayout) {
      old_layout.append(inst);
      continue;
    }
    old_layout.append(Instruction{inst.kind, {inst.inputs[0]}, {inst.attrs[0], inst.attrs[1], inst.inputs[1]}, {}});
  }
  Schedule old_replay = replay(old_layout, sch.original());
  EXPECT_TRUE(ir::structural_equal(old_replay.func(), sch.func()));
}

TEST(TransformLayout, MalformedInstructionsAreUserErrors) {
  Schedule sch(workload("softmax:shape=4x8"));
  sch.transform_layout(sch.get_block("x_exp"), 0, Type::kWrite, IndexMap::parse("lambda i, j: (j, i)"));
  auto with = [&](const std::function<void(Instruction&)>& edit) {
    Trace t;
    for (Instruction inst : sch.trace().instructions()) {
      if (inst.kind == InstructionKind::TransformLayout) edit(inst);
      t.append(inst);
    }
    return t;
  };
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs[2] = Arg(int64_t{0}); }), sch.original()), UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs[1] = Arg(int64_t{2}); }), sch.original()), UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.inputs[1] = Arg("lambda i, j: (j i)"); }), sch.original()),
               UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs.pop_back(); }), sch.original()), UserError);
}

TEST(TransformLayout, Preconditions) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV x_exp = sch.get_block("x_exp");
  BlockRV out = sch.get_block("softmax");
  const IndexMap swap = IndexMap::parse("lambda i, j: (j, i)");
  const std::string marked = "block x_exp [";
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 1, Type::kWrite, swap); }, {1, "IndexOutOfRange", "buffer_index"},
               marked);
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 2, Type::kRead, swap); }, {1, "IndexOutOfRange", "buffer_index"},
               marked);
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 0, Type::kRead, swap); }, {2, "ParameterBuffer", "block b0"},
               marked, "'X'");
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(out, 0, Type::kWrite, swap); }, {2, "ParameterBuffer", "block b1"},
               "block softmax [", "'softmax'");
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 0, Type::kWrite, IndexMap::parse("lambda i: (i,)")); },
               {3, "MapArityMismatch", "index_map"}, marked);
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 0, Type::kWrite, IndexMap::parse("lambda i, j: (i - 1, j)")); },
               {5, "NegativeIndex", "index_map"}, marked, "index [0, 0] of 'x_exp' maps to [-1, 0]");
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 0, Type::kWrite, IndexMap::parse("lambda i, j: (i + j,)")); },
               {6, "NotInjective", "index_map"}, marked, "indices [0, 1] and [1, 0] of 'x_exp' both map to [1]");
  expect_refusal(InstructionKind::TransformLayout, sch, [&] { sch.transform_layout(x_exp, 0, Type::kWrite, IndexMap::parse("lambda i, j: (i % 2, j)")); },
               {6, "NotInjective", "index_map"}, marked, "indices [0, 0] and [2, 0]");

  // 1024 x 1025 elements is more than 2^20: enumerating the images would be too slow, so a
  // map that is not a fusion of whole dimensions is refused; a permutation is known a
  // bijection without enumerating.
  Schedule big(workload("softmax:shape=1024x1025"));
  BlockRV big_exp = big.get_block("x_exp");
  expect_refusal(InstructionKind::TransformLayout, 
      big, [&] { big.transform_layout(big_exp, 0, Type::kWrite, IndexMap::parse("lambda i, j: (j, i // 2, i % 2)")); },
      {4, "DomainTooLarge", "index_map"}, marked);
  big.transform_layout(big_exp, 0, Type::kWrite, swap);
  EXPECT_TRUE(has_line(ir::print_function(big.func()), "alloc x_exp: f32[1025, 1024]"));
}

}  // namespace
}  // namespace dragon::schedule
