// transform_block_layout (and IndexMap::as_fusion / fusing, which it stands on): conv2d
// with reindexed, laid-out operands becomes a 3-loop GEMM block reading A[m, k] and
// B[n, k]; semantic preservation on the interpreter for conv1d/2d/3d, strided, dilated,
// grouped and transposed convs and a matmul, with and without reindexed operands (then
// the inverse map is substituted); replay and JSON; each precondition's error.
#include <gtest/gtest.h>

#include <functional>

#include "dragon/ir/uses_var.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/index_map.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::expect_refusal;
using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using Type = Schedule::BufferIndexType;

// ---- IndexMap::as_fusion and fusing ---------------------------------------------------

TEST(IndexMapFusion, FusionsInvertAndOthersSayWhy) {
  IndexMap gemm = IndexMap::fusing({"n", "oc", "h", "w", "rc", "kh", "kw"}, {2, 4, 6, 6, 3, 3, 3},
                                   {{0, 2, 3}, {1}, {4, 5, 6}});
  EXPECT_EQ(gemm.to_string(), "lambda n, oc, h, w, rc, kh, kw: (n * 36 + h * 6 + w, oc, rc * 9 + kh * 3 + kw)");
  IndexMap::Fusion f = gemm.as_fusion({2, 4, 6, 6, 3, 3, 3}, {"m", "n", "k"}, ir::DataType::i32());
  ASSERT_TRUE(f.problem.empty()) << f.problem;
  EXPECT_EQ(f.shape, (std::vector<int64_t>{72, 4, 27}));
  EXPECT_EQ(f.sources, (std::vector<std::vector<size_t>>{{0, 2, 3}, {1}, {4, 5, 6}}));
  std::vector<std::string> inverse;
  for (const ir::Expr& e : f.inverse) inverse.push_back(ir::print_expr(e));
  EXPECT_EQ(inverse, (std::vector<std::string>{"m // 36", "n", "m // 6 % 6", "m % 6", "k // 9", "k // 3 % 3", "k % 3"}));
  // Order inside a result does not matter; unit extents may be left out or scaled freely.
  EXPECT_TRUE(IndexMap::parse("lambda i, j: (j * 8 + i,)").as_fusion({8, 4}).problem.empty());
  IndexMap::Fusion unit = IndexMap::parse("lambda i, u, j: (i * 5 + u * 3 + j,)").as_fusion({3, 1, 5});
  EXPECT_TRUE(unit.problem.empty()) << unit.problem;
  EXPECT_EQ(unit.sources, (std::vector<std::vector<size_t>>{{0, 2}}));
  EXPECT_EQ(unit.mentions, (std::vector<std::vector<size_t>>{{0, 1, 2}}));
  EXPECT_TRUE(IndexMap::parse("lambda i, u, j: (j, i)").as_fusion({3, 1, 5}).problem.empty());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"lambda i, j: (i * 4 + j,)", "scales 'i' by 4 where the extents of the parameters below it make 8: two points"},
      {"lambda i, j: (i * 16 + j,)", "indices are skipped"},
      {"lambda i, j: (i, j + 1)", "adds the constant 1"},
      {"lambda i, j: (i, -1 * j)", "negative"},
      {"lambda i, j: (i // 2, j)", "uses // or %"},
      {"lambda i, j: (i, i)", "'i' is used by results 0 and 1"},
      {"lambda i, j: (i,)", "'j' (extent 8) is used by no result"},
  };
  for (const auto& [text, why] : bad) {
    IndexMap::Fusion b = IndexMap::parse(text).as_fusion({4, 8});
    EXPECT_NE(b.problem.find(why), std::string::npos) << text << ": " << b.problem;
    EXPECT_TRUE(b.shape.empty() && b.inverse.empty());
  }
}

// ---- transform_block_layout -------------------------------------------------------------

// The reduction block: the leaf with a reduction iteration variable.
BlockRV reduction_block(Schedule& sch) {
  for (const ir::BlockTree::BlockInfo& info : sch.tree().blocks()) {
    if (!info.leaf) continue;
    for (const ir::IterVar& iv : info.block->iter_vars) {
      if (iv.kind == ir::IterKind::kReduce) return sch.get_block(info.block->name);
    }
  }
  ADD_FAILURE() << "no reduction block";
  return BlockRV{};
}

// The block's GEMM map: m fuses the spatial variables the last read (the weight) does not
// use, n those it does, k the reduction variables.
IndexMap gemm_map(const ir::BlockNode* block, std::vector<std::string>* names = nullptr,
                  std::vector<int64_t>* extents = nullptr, std::vector<std::vector<size_t>>* groups = nullptr) {
  std::vector<std::string> n;
  std::vector<int64_t> e;
  std::vector<std::vector<size_t>> g(3);
  const ir::BufferRegion& weight = block->reads.back();
  for (size_t p = 0; p < block->iter_vars.size(); ++p) {
    const ir::IterVar& iv = block->iter_vars[p];
    n.push_back(iv.var.name());
    e.push_back(*ir::as_const_int(iv.dom.extent));
    bool in_weight = false;
    for (const ir::Range& r : weight.region) in_weight |= ir::uses_var(r.min, iv.var.get());
    g[iv.kind == ir::IterKind::kReduce ? 2 : in_weight ? 1 : 0].push_back(p);
  }
  if (names) *names = n;
  if (extents) *extents = e;
  if (groups) *groups = g;
  return IndexMap::fusing(n, e, g);
}

// Reindexes every read and the write of the reduction block, lays each copy out by the
// GEMM map restricted to the variables it has, and transforms the block by the map.
void to_gemm(Schedule& sch, BlockRV block) {
  std::vector<std::string> names;
  std::vector<int64_t> extents;
  std::vector<std::vector<size_t>> groups;
  const IndexMap map = gemm_map(sch.get(block), &names, &extents, &groups);
  // The layout of a copy over variables `used` (block positions, in order).
  auto layout = [&](const std::vector<size_t>& used) {
    std::vector<std::string> n;
    std::vector<int64_t> e;
    std::vector<std::vector<size_t>> g;
    for (size_t p : used) {
      n.push_back(names[p]);
      e.push_back(extents[p]);
    }
    for (const std::vector<size_t>& group : groups) {
      std::vector<size_t> kept;
      for (size_t p : group) {
        auto at = std::find(used.begin(), used.end(), p);
        if (at != used.end()) kept.push_back(static_cast<size_t>(at - used.begin()));
      }
      if (!kept.empty()) g.push_back(kept);
    }
    return IndexMap::fusing(n, e, g);
  };
  auto used_by = [&](const ir::BufferRegion& r) {
    std::vector<size_t> used;
    const ir::BlockNode* b = sch.get(block);
    for (size_t p = 0; p < b->iter_vars.size(); ++p) {
      for (const ir::Range& range : r.region) {
        if (ir::uses_var(range.min, b->iter_vars[p].var.get())) {
          used.push_back(p);
          break;
        }
      }
    }
    return used;
  };
  const size_t reads = sch.get(block)->reads.size();
  for (size_t i = 0; i < reads; ++i) {
    const std::vector<size_t> used = used_by(sch.get(block)->reads[i]);
    BlockRV copy = sch.reindex(block, static_cast<int64_t>(i), Type::kRead);
    sch.transform_layout(copy, 0, Type::kWrite, layout(used));
  }
  const std::vector<size_t> used = used_by(sch.get(block)->writes[0]);
  BlockRV back = sch.reindex(block, 0, Type::kWrite);
  sch.transform_layout(back, 0, Type::kRead, layout(used));
  sch.transform_block_layout(block, map);
}

TEST(TransformBlockLayout, Conv2dBecomesAGemm) {
  Schedule sch(workload("conv2d:batch=2,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  BlockRV y = sch.get_block("Y");
  to_gemm(sch, y);
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc X_pad_reindex: f32[72, 18]")) << text;
  EXPECT_TRUE(has_line(text, "alloc W_reindex: f32[3, 18]")) << text;
  EXPECT_TRUE(has_line(text, "alloc Y_reindex: f32[72, 3]")) << text;
  EXPECT_TRUE(has_line(text, "for l_vi0_vi2_vi3 in 72 {")) << text;
  EXPECT_TRUE(has_line(text, "block Y [vi0_vi2_vi3: S 72 = l_vi0_vi2_vi3, vi1: S 3 = l_vi1, vr0_vr1_vr2: R 18 = "
                             "l_vr0_vr1_vr2] {"))
      << text;
  EXPECT_TRUE(has_line(text, "reads X_pad_reindex[vi0_vi2_vi3, vr0_vr1_vr2], W_reindex[vi1, vr0_vr1_vr2]")) << text;
  EXPECT_TRUE(has_line(text, "Y_reindex[vi0_vi2_vi3, vi1] = Y_reindex[vi0_vi2_vi3, vi1] + "
                             "X_pad_reindex[vi0_vi2_vi3, vr0_vr1_vr2] * W_reindex[vi1, vr0_vr1_vr2]"))
      << text;
  EXPECT_TRUE(has_line(text, "X_pad_reindex[vi0 * 36 + vi2 * 6 + vi3, vr0 * 9 + vr1 * 3 + vr2] = "
                             "X_pad[vi0, vr0, vi2 + vr1, vi3 + vr2]"))
      << text;
  EXPECT_EQ(sch.get_loops(y).size(), 3u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  const std::string trace = sch.trace().to_string();
  EXPECT_NE(trace.find(R"x(TransformBlockLayout(b0 | "lambda vi0, vi1, vi2, vi3, vr0, vr1, vr2: (vi0 * 36 + vi2 * 6 + vi3, vi1, vr0 * 9 + vr1 * 3 + vr2)"))x"),
            std::string::npos)
      << trace;
}

constexpr const char* kSpecs[] = {
    "conv1d:batch=2,in_channels=3,out_channels=4,size=10,kernel=3,padding=1",
    "conv2d:batch=2,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1",
    "conv3d:batch=1,in_channels=2,out_channels=2,size=4x5x4,kernel=3x2x3,padding=1x0x1",
    "conv2d:batch=1,in_channels=2,out_channels=3,size=9x7,kernel=3x3,stride=2x2,padding=1x1",
    "conv2d:batch=1,in_channels=2,out_channels=3,size=8x8,kernel=3x3,dilation=2x2,padding=2x2",
    "conv2d:batch=1,in_channels=4,out_channels=6,size=6x6,kernel=3x3,groups=2,padding=1x1",
    "conv_transpose2d:batch=1,in_channels=2,out_channels=3,size=4x4,kernel=3x3,stride=2x2,padding=1x1",
    "conv2d:batch=2,in_channels=4,out_channels=4,size=6x6,kernel=3x3,dtype=f16,padding=1x1",
    "matmul:m=12,n=8,k=6",
};

TEST(TransformBlockLayout, ReindexedConvsAndMatmulPreserveSemantics) {
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    Schedule sch(workload(spec));
    BlockRV block = reduction_block(sch);
    to_gemm(sch, block);
    EXPECT_EQ(sch.get(block)->iter_vars.size(), 3u);
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

// Without reindexed operands no index equals a result of the map: each use of an old
// variable becomes its inverse (u // c % e).
TEST(TransformBlockLayout, PlainBlocksGetTheInverse) {
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    Schedule sch(workload(spec));
    BlockRV block = reduction_block(sch);
    sch.transform_block_layout(block, gemm_map(sch.get(block)));
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
  Schedule sch(workload("matmul:m=12,n=8,k=6"));
  BlockRV c = reduction_block(sch);
  sch.transform_block_layout(c, IndexMap::parse("lambda i, j, k: (j, i, k)"));
  const std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for l_vi1 in 8 {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
}

TEST(TransformBlockLayout, Preconditions) {
  Schedule sch(workload("matmul:m=12,n=8,k=6"));
  BlockRV c = reduction_block(sch);
  const std::string marked = "block " + sch.get(c)->name + " [";
  const IndexMap swap = IndexMap::parse("lambda i, j, k: (j, i, k)");
  expect_refusal(InstructionKind::TransformBlockLayout, sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda i, j: (j, i)")); },
               {2, "MapArityMismatch", "index_map"}, marked, "the map takes 2 indices");
  expect_refusal(InstructionKind::TransformBlockLayout, sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda i, j, k: (i * 4 + j, k)")); },
               {4, "NotBijective", "index_map"}, marked, "over the extents [12, 8, 6]: result 0");
  expect_refusal(InstructionKind::TransformBlockLayout, sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda i, j, k: (i, j, k + 2)")); },
               {4, "NotBijective", "index_map"}, marked, "adds the constant 2");
  expect_refusal(InstructionKind::TransformBlockLayout, sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda i, j, k: (i, j // 2, k)")); },
               {4, "NotBijective", "index_map"}, marked, "uses // or %");
  expect_refusal(InstructionKind::TransformBlockLayout, sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda i, j, k: (i * 6 + k, j)")); },
               {5, "MixedIterKinds", "index_map"}, marked, "fuses 'vi0' (S) and 'vr0' (R)");

  // A reduction of extent 1 keeps its reduce variable even where it is left out of the
  // fusion's extents; dropping it, or fusing it with a spatial variable, is refused.
  Schedule unit(workload("matmul:m=16,n=8,k=1"));
  BlockRV cu = reduction_block(unit);
  expect_refusal(InstructionKind::TransformBlockLayout, unit, [&] { unit.transform_block_layout(cu, IndexMap::parse("lambda i, j, k: (i, j)")); },
               {5, "MixedIterKinds", "index_map"}, marked, "no result keeps a reduction variable ('vr0' is one)");
  expect_refusal(InstructionKind::TransformBlockLayout, unit, [&] { unit.transform_block_layout(cu, IndexMap::parse("lambda i, j, k: (i, j + k)")); },
               {5, "MixedIterKinds", "index_map"}, marked, "fuses 'vi1' (S) and 'vr0' (R)");
  unit.transform_block_layout(cu, IndexMap::parse("lambda i, j, k: (j * 16 + i, k)"));
  const std::string text = ir::print_function(unit.func());
  EXPECT_TRUE(has_line(text, "vi0_vi1: S 128 = l_vi0_vi1, vr0: R 1 = l_vr0")) << text;
  EXPECT_TRUE(same_outputs(unit.original(), unit.func()));

  // Bindings: a split leaves a binding that is no loop of its own.
  Schedule split(workload("matmul:m=12,n=8,k=6"));
  BlockRV cs = reduction_block(split);
  split.split(split.get_loops(cs)[0], {None{}, int64_t{4}});
  expect_refusal(InstructionKind::TransformBlockLayout, split, [&] { split.transform_block_layout(cs, swap); }, {3, "NonTrivialBinding", "block b0"}, marked,
               "is bound to");
  // A block sharing its loops with another (compute_at) or under a parallel loop.
  Schedule shared(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  BlockRV y = shared.get_block("Y");
  BlockRV x_copy = shared.reindex(y, 0, Type::kRead);
  shared.compute_at(x_copy, shared.get_loops(y)[6]);
  expect_refusal(InstructionKind::TransformBlockLayout, shared, [&] { shared.transform_block_layout(y, gemm_map(shared.get(y))); },
               {3, "NonTrivialBinding", "block b0"}, "block Y [", "holds more than");
  Schedule parallel(workload("matmul:m=12,n=8,k=6"));
  BlockRV cp = reduction_block(parallel);
  parallel.parallel(parallel.get_loops(cp)[0]);
  expect_refusal(InstructionKind::TransformBlockLayout, parallel, [&] { parallel.transform_block_layout(cp, swap); }, {3, "NonTrivialBinding", "block b0"},
               marked, "(0 +: 12, parallel) is not a plain serial loop");
  Schedule annotated(workload("matmul:m=12,n=8,k=6"));
  BlockRV ca = reduction_block(annotated);
  annotated.annotate(annotated.get_loops(ca)[2], "pragma_unroll_explicit", int64_t{1});
  expect_refusal(InstructionKind::TransformBlockLayout, annotated, [&] { annotated.transform_block_layout(ca, swap); }, {3, "NonTrivialBinding", "block b0"},
               marked, "(0 +: 6, serial, annotated) is not a plain serial loop");
  // A block with blocks inside.
  Schedule outer(workload("matmul:m=12,n=8,k=6"));
  BlockRV co = reduction_block(outer);
  BlockRV blockized = outer.blockize(outer.get_loops(co)[1]);
  const std::string outer_name = outer.get(blockized)->name;
  expect_refusal(InstructionKind::TransformBlockLayout, outer, [&] { outer.transform_block_layout(blockized, IndexMap::parse("lambda i: (i,)")); },
               {1, "NotLeafBlock", "block b4"}, "block " + outer_name + " [", "the block has blocks inside it");
}

TEST(TransformBlockLayout, MalformedInstructionsAreUserErrors) {
  Schedule sch(workload("matmul:m=12,n=8,k=6"));
  sch.transform_block_layout(reduction_block(sch), IndexMap::parse("lambda i, j, k: (j, i, k)"));
  auto with = [&](const std::function<void(Instruction&)>& edit) {
    Trace t;
    for (Instruction inst : sch.trace().instructions()) {
      if (inst.kind == InstructionKind::TransformBlockLayout) edit(inst);
      t.append(inst);
    }
    return t;
  };
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs[0] = Arg("lambda i, j, k: (j k)"); }), sch.original()),
               UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs[0] = Arg(int64_t{1}); }), sch.original()), UserError);
  EXPECT_THROW(replay(with([](Instruction& i) { i.attrs.pop_back(); }), sch.original()), UserError);
}

}  // namespace
}  // namespace dragon::schedule
