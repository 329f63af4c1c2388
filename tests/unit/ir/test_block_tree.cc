// BlockTree: scopes, loops above each block (all of them and those in its scope), the
// statement of the scope holding each block, leaves, lookups by name and loop variable,
// parents and paths, on a function with a nested block and a sequence.
#include <gtest/gtest.h>

#include "dragon/ir/block_tree.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"

namespace dragon::ir {
namespace {

const char* const kNested = R"(func nested(in A: f32[4, 8], out C: f32[4, 8]) {
  block root {
    alloc B: f32[4, 8]
    for i in 4 {
      for j in 8 {
        block B [vi: S 4 = i, vj: S 8 = j] {
          reads A[vi, vj]
          writes B[vi, vj]
          B[vi, vj] = A[vi, vj] + 1f32
        }
      }
    }
    for io in 2 {
      block outer [vo: S 2 = io] {
        reads B[vo * 2 +: 2, 0 +: 8]
        writes C[vo * 2 +: 2, 0 +: 8]
        for ii in 2 {
          for j2 in 8 {
            block C [vi: S 4 = vo * 2 + ii, vj: S 8 = j2] {
              reads B[vi, vj]
              writes C[vi, vj]
              C[vi, vj] = B[vi, vj] * 2f32
            }
          }
        }
      }
    }
  }
}
)";

TEST(BlockTree, ScopesLoopsAndStatements) {
  const PrimFunc func = parse_function(kNested);
  const BlockTree tree(func);
  ASSERT_EQ(tree.blocks().size(), 4u);
  EXPECT_TRUE(tree.names_unique());
  const BlockTree::BlockInfo* root = tree.named("root");
  const BlockTree::BlockInfo* b = tree.named("B");
  const BlockTree::BlockInfo* outer = tree.named("outer");
  const BlockTree::BlockInfo* c = tree.named("C");
  ASSERT_TRUE(root && b && outer && c);
  EXPECT_EQ(tree.named("missing"), nullptr);
  // Program order: a block before the blocks inside it.
  EXPECT_EQ(tree.blocks()[0].block, root->block);
  EXPECT_EQ(tree.blocks()[3].block, c->block);
  EXPECT_EQ(root->scope, nullptr);
  EXPECT_EQ(b->scope, root->block);
  EXPECT_EQ(outer->scope, root->block);
  EXPECT_EQ(c->scope, outer->block);
  EXPECT_FALSE(root->leaf);
  EXPECT_FALSE(outer->leaf);
  EXPECT_TRUE(b->leaf && c->leaf);
  EXPECT_EQ(b->statement, 0u);
  EXPECT_EQ(outer->statement, 1u);
  EXPECT_EQ(c->statement, 0u);
  EXPECT_EQ(tree.statement_in(root->block, c->block), 1u);  // through `outer`
  EXPECT_TRUE(tree.encloses(root->block, c->block));
  EXPECT_TRUE(tree.encloses(outer->block, c->block));
  EXPECT_FALSE(tree.encloses(c->block, c->block));
  EXPECT_FALSE(tree.encloses(b->block, c->block));
  // C has io above outer and ii, j2 in its own scope.
  ASSERT_EQ(c->loops.size(), 3u);
  EXPECT_EQ(c->loops[0]->loop_var.name(), "io");
  ASSERT_EQ(c->scope_loops().size(), 2u);
  EXPECT_EQ(c->scope_loops()[0]->loop_var.name(), "ii");
  EXPECT_EQ(c->scope_loops()[1]->loop_var.name(), "j2");
  EXPECT_EQ(b->scope_loops().size(), 2u);
  EXPECT_NE(c->realize, nullptr);
  EXPECT_EQ(c->realize->block.get(), c->block);
}

// Several blocks of one name (a function mid-rewrite can hold them): lookups by name find
// the first in program order, as a first-match search would, whatever the blocks' addresses.
TEST(BlockTree, ANameHeldTwiceFindsTheFirstInProgramOrder) {
  const PrimFunc func = parse_function(kNested);
  const BlockTree original(func);
  const BlockNode* c = original.named("C")->block;
  const BlockNode* b = original.named("B")->block;
  // Each of B and C renamed to "twin", in either order of allocation.
  for (bool c_first : {true, false}) {
    Block twin_c, twin_b;
    auto rename = [](const BlockNode* x) {
      return BlockNode::make("twin", x->iter_vars, x->reads, x->writes, x->body, x->init, x->alloc_buffers,
                             x->annotations);
    };
    if (c_first) {
      twin_c = rename(c);
      twin_b = rename(b);
    } else {
      twin_b = rename(b);
      twin_c = rename(c);
    }
    class Renamer : public StmtMutator {
     public:
      Renamer(const BlockNode* b, Block twin_b, const BlockNode* c, Block twin_c)
          : b_(b), c_(c), twin_b_(std::move(twin_b)), twin_c_(std::move(twin_c)) {}

     protected:
      Stmt visit_(const BlockNode* op) override {
        if (op == b_) return twin_b_;
        if (op == c_) return twin_c_;
        return StmtMutator::visit_(op);
      }

     private:
      const BlockNode *b_, *c_;
      Block twin_b_, twin_c_;
    };
    const PrimFunc renamed = func.with_body(Renamer(b, twin_b, c, twin_c).visit(func->body));
    const BlockTree tree(renamed);
    EXPECT_FALSE(tree.names_unique());
    ASSERT_NE(tree.named("twin"), nullptr);
    EXPECT_EQ(tree.named("twin")->block, twin_b.get()) << "B comes first in program order";
  }
}

// A statement held at two places (IR is shared, a rewrite may leave one so): its parent is
// the first in program order, whichever parent node was made first.
TEST(BlockTree, AStatementHeldTwiceHasItsFirstParentInProgramOrder) {
  const PrimFunc func = parse_function(kNested);
  const BlockNode* root = func.root_block();
  ASSERT_NE(root, nullptr);
  const auto* seq = root->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  const Stmt shared = seq->seq[0];  // the loop nest of block B
  for (bool first_made_first : {true, false}) {
    auto wrap = [&](const char* name) {
      return ForNode::make(Var(name), make_const(DataType::i32(), 0), make_const(DataType::i32(), 1), ForKind::kSerial,
                           shared);
    };
    Stmt first, second;
    if (first_made_first) {
      first = wrap("first");
      second = wrap("second");
    } else {
      second = wrap("second");
      first = wrap("first");
    }
    const PrimFunc held_twice = func.with_body(BlockRealizeNode::make(
        {}, make_const(DataType::boolean(), 1),
        BlockNode::make(root->name, root->iter_vars, root->reads, root->writes, SeqStmtNode::make({first, second}),
                        root->init, root->alloc_buffers, root->annotations)));
    const BlockTree tree(held_twice);
    EXPECT_EQ(tree.parent(shared.get()), first.get());
  }
}

TEST(BlockTree, LoopsParentsAndPaths) {
  const PrimFunc func = parse_function(kNested);
  const BlockTree tree(func);
  const BlockTree::BlockInfo* c = tree.named("C");
  const ForNode* j2 = c->scope_loops()[1];
  const BlockTree::LoopInfo* info = tree.loop_of(j2->loop_var.get());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->loop, j2);
  EXPECT_EQ(tree.find(j2), info);
  EXPECT_EQ(info->scope, tree.named("outer")->block);
  ASSERT_EQ(info->scope_loops.size(), 1u);
  EXPECT_EQ(info->scope_loops[0]->loop_var.name(), "ii");
  // The path from the body down to C: root's realization, root, its sequence, io, outer's
  // realization, outer, ii, j2, C's realization, C.
  const std::vector<const StmtNode*> path = tree.path_to(c->block);
  ASSERT_EQ(path.size(), 10u);
  EXPECT_EQ(path.front(), func->body.get());
  EXPECT_EQ(path[2]->kind, NodeKind::SeqStmt);
  EXPECT_EQ(path[7], j2);
  EXPECT_EQ(path.back(), c->block);
  EXPECT_EQ(tree.parent(c->block), c->realize);
  EXPECT_EQ(tree.parent(func->body.get()), nullptr);
  // A statement of another function is not found.
  const PrimFunc other = parse_function(kNested);
  EXPECT_TRUE(tree.path_to(other.root_block()).empty());
  EXPECT_EQ(tree.find(other.root_block()), nullptr);
}

}  // namespace
}  // namespace dragon::ir
