// A global intermediate computed at a loop bound to threads (compute_at of embedding_bag's
// or TBE's pooled block at its consumer's threadIdx loop) lives once per thread:
// unify_thread_bindings hoists it out of the kernel with one copy per launch instance. On
// the H200 five such candidates failed with CUDA_ERROR_ILLEGAL_ADDRESS
// (data/regressions/h200_illegal_address.jsonl): 131072 copies of 30721 floats, 4.0e9
// elements, whose offsets (blockIdx.x * 512 + threadIdx.x) * 30721 + i were i32 and wrapped
// negative past 2^31. Here: those scripts' copies index in i64 and stay inside the buffer,
// verify_index_widths rejects an i32 offset into such a buffer, and the same kind of
// schedule on small embedding_bag and TBE workloads, lowered for the H200 and run on the
// interpreter (bounds-checked), computes what the unscheduled function does with indices
// that hit the tables' first and last rows.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dragon/interp/input_generator.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/substitute.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "unit/lower/lower_test_util.h"

namespace dragon::lower {
namespace {

constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

struct FailedRecord {
  std::string spec;
  std::string script;
};

std::vector<FailedRecord> h200_illegal_address_records() {
  const std::string path = std::string(DRAGON_SOURCE_DIR) + "/data/regressions/h200_illegal_address.jsonl";
  std::istringstream in(read_text_file(path));
  std::vector<FailedRecord> records;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    records.push_back({j.at("spec").get<std::string>(), j.at("script").get<std::string>()});
  }
  return records;
}

ir::PrimFunc scheduled(const std::string& spec, const std::string& script) {
  return schedule::replay(script::decode(script), ops::OpRegistry::global().make_workload(spec).func).func();
}

// Every access to one buffer, with the loops around it bound in `loops`.
struct Access {
  ir::Expr index;
  ir::Analyzer loops;
  bool guarded = false;  // under an IfThenElse, whose condition the loop ranges ignore
};
class AccessFinder : public ir::StmtExprVisitor {
 public:
  explicit AccessFinder(std::string buffer) : buffer_(std::move(buffer)) {}
  std::vector<Access> accesses;
  int64_t allocated = -1;  // the Allocate's element count

 protected:
  void visit_(const ir::ForNode* op) override {
    loops_.push_back(op);
    ir::StmtExprVisitor::visit_(op);
    loops_.pop_back();
  }
  void visit_(const ir::IfThenElseNode* op) override {
    ++guards_;
    ir::StmtExprVisitor::visit_(op);
    --guards_;
  }
  void visit_(const ir::AllocateNode* op) override {
    if (op->buffer->name == buffer_ && op->buffer->shape.size() == 1) allocated = op->buffer->shape[0];
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    record(op->buffer, op->indices);
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    record(op->buffer, op->indices);
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  void record(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
    if (buffer->name != buffer_) return;
    Access a{indices.at(0), {}, guards_ > 0};
    for (const ir::ForNode* l : loops_) a.loops.bind(l->loop_var, ir::Range::make(l->min, l->extent));
    accesses.push_back(std::move(a));
  }
  std::string buffer_;
  std::vector<const ir::ForNode*> loops_;
  int guards_ = 0;
};

// The five candidates that crashed the H200: lowered for it (no GPU needed), each thread's
// copy of `pooled` is addressed in i64, and every unguarded access lies inside the hoisted
// buffer for every value of the loops around it, the last thread of the last block
// included (TBE's guarded rows, whose bound the guard gives, are checked for width only).
TEST(GlobalIntermediateCopies, TheH200IllegalAddressScriptsIndexTheirCopiesInI64) {
  std::vector<FailedRecord> records = h200_illegal_address_records();
  ASSERT_EQ(records.size(), 5u);
  for (const FailedRecord& r : records) {
    SCOPED_TRACE(r.spec);
    Lowered lowered = lower(scheduled(r.spec, r.script), Target::cuda_h200());
    AccessFinder finder("pooled");
    finder.visit(lowered.func->body);
    ASSERT_GT(finder.allocated, kI32Max) << "the copies no longer pass 2^31 elements; the test lost its point";
    ASSERT_FALSE(finder.accesses.empty());
    for (const Access& a : finder.accesses) {
      EXPECT_EQ(a.index.dtype(), ir::DataType::i64()) << ir::print_expr(a.index);
      ir::ConstIntBound bound = a.loops.const_int_bound(a.index);
      ASSERT_TRUE(bound.min && bound.max) << ir::print_expr(a.index);
      EXPECT_GE(*bound.min, 0) << ir::print_expr(a.index);
      if (!a.guarded) EXPECT_LT(*bound.max, finder.allocated) << ir::print_expr(a.index);
    }
  }
}

// The last copy's offset, evaluated: with the loops at their last values the i64 offset is
// the buffer's last element, where the i32 one was -268304385 (4026662911 - 2^32).
TEST(GlobalIntermediateCopies, TheLastThreadsCopyEndsAtTheBuffersLastElement) {
  const FailedRecord r = h200_illegal_address_records().at(0);
  Lowered lowered = lower(scheduled(r.spec, r.script), Target::cuda_h200());
  struct LastValues : ir::StmtExprVisitor {
    ir::VarMap last;
    std::vector<ir::Expr> stores;
    void visit_(const ir::ForNode* op) override {
      last[op->loop_var.get()] = ir::simplify(op->min + op->extent - ir::make_const(op->min.dtype(), 1));
      ir::StmtExprVisitor::visit_(op);
    }
    void visit_(const ir::BufferStoreNode* op) override {
      if (op->buffer->name == "pooled") stores.push_back(op->indices.at(0));
      ir::StmtExprVisitor::visit_(op);
    }
  } walk;
  walk.visit(lowered.func->body);
  ASSERT_FALSE(walk.stores.empty());
  ir::Expr last = ir::simplify(ir::substitute(walk.stores.front(), walk.last));
  ASSERT_TRUE(ir::as_const_int(last)) << ir::print_expr(last);
  EXPECT_EQ(*ir::as_const_int(last), 256LL * 512 * 30721 - 1) << ir::print_expr(walk.stores.front());
}

// The check behind the fix: an i32 offset into a buffer past 2^31 elements is an error
// naming the access; the same access in i64, or an i32 one into a smaller buffer, passes.
TEST(VerifyIndexWidths, RejectsAnI32OffsetIntoABufferPastTwoToThe31Elements) {
  auto func_with = [](int64_t elements, ir::DataType index_type) {
    ir::Buffer big = ir::Buffer::make("big", ir::DataType::f32(), {elements}, "global");
    ir::Buffer out = ir::Buffer::make("out", ir::DataType::f32(), {4});
    ir::Var i("i", index_type);
    ir::Expr offset = ir::cast(index_type, i) * ir::make_const(index_type, 1000000000.0);
    ir::Stmt body = ir::ForNode::make(
        i, ir::make_zero(index_type), ir::make_const(index_type, 3.0), ir::ForKind::kSerial,
        ir::BufferStoreNode::make(out, ir::BufferLoadNode::make(big, {offset}), {ir::cast(ir::DataType::i32(), i)}));
    std::vector<ir::Param> params = {ir::Param{big, ir::ParamRole::kInput, {}},
                                     ir::Param{out, ir::ParamRole::kOutput, {}}};
    return ir::PrimFunc::make("f", std::move(params), body);
  };
  try {
    verify_index_widths(func_with(3000000000LL, ir::DataType::i32()));
    FAIL() << "an i32 offset into 3e9 elements passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'big' (3000000000 elements"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("indexes in i32"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(verify_index_widths(func_with(3000000000LL, ir::DataType::i64())));
  EXPECT_NO_THROW(verify_index_widths(func_with(kI32Max, ir::DataType::i32())));
}

// `args`' integer parameter `name` (a gather's row indices) rewritten so the first and last
// rows of its range are read, alternating with the drawn values.
void hit_first_and_last_rows(const ir::PrimFunc& func, std::vector<tensor::HostTensor>& args, const std::string& name) {
  for (size_t p = 0; p < func->params.size(); ++p) {
    const ir::Param& param = func->params[p];
    if (param.buffer->name != name) continue;
    ASSERT_EQ(param.domain.kind, ir::ValueDomain::Kind::kIntRange) << name;
    for (int64_t i = 0; i < args[p].num_elements(); i += 3) {
      args[p].set_int(i, i % 2 == 0 ? param.domain.hi - 1 : param.domain.lo);
    }
    return;
  }
  FAIL() << "no parameter " << name;
}

// The schedule of the failing scripts, minimized (pooled computed at the threadIdx loop of
// its consumer, every thread recomputing the rows its outputs need), on small workloads:
// the H200 lowering (copies per thread hoisted, launch loops unified) run on the
// interpreter gives the unscheduled function's bytes, over several input draws.
void expect_lowered_matches(const std::string& spec, const std::string& script, const std::string& index_param) {
  SCOPED_TRACE(spec);
  ir::PrimFunc before = ops::OpRegistry::global().make_workload(spec).func;
  ir::PrimFunc after = scheduled(spec, script);
  Lowered lowered = lower(after, Target::cuda_h200());
  AccessFinder finder("pooled");
  finder.visit(lowered.func->body);
  ASSERT_GT(finder.allocated, 0) << "pooled is no longer an intermediate with one copy per thread:\n"
                                 << ir::print_function(lowered.func);
  for (uint64_t seed : {1, 2, 3}) {
    for (interp::Distribution d : {interp::Distribution::kNormal, interp::Distribution::kEdge}) {
      std::vector<tensor::HostTensor> inputs = interp::make_arguments(before, seed, d);
      hit_first_and_last_rows(before, inputs, index_param);
      EXPECT_TRUE(testing::same_bytes(before, testing::run_reshaped(before, inputs),
                                      testing::run_reshaped(lowered.func, inputs)))
          << "seed " << seed << " " << interp::distribution_name(d);
    }
  }
}

TEST(GlobalIntermediateCopies, EmbeddingBagPooledAtTheConsumersThreadLoopComputesTheSame) {
  expect_lowered_matches(
      "embedding_bag:num_embeddings=50,embedding_dim=16,batch=64,max_bag_length=4,num_indices=128,mode=mean,"
      "per_sample_weights=false,dtype=f32,index_dtype=i64",
      "gb bag_length\nci b0\ngb out\ngl b1 2\nfu l0 l1\nsp l2 None 4 64\nro l4 l5 l3\nbind l4 bx\nbind l5 tx\n"
      "gb pooled\nca b2 l5\n",
      "indices");
}

TEST(GlobalIntermediateCopies, TableBatchedEmbeddingPooledAtTheConsumersThreadLoopComputesTheSame) {
  expect_lowered_matches(
      "table_batched_embedding:rows=20x7x13,embedding_dim=8,batch=4,max_bag_length=4,num_indices=24,pooling=sum,"
      "per_sample_weights=false,weights_dtype=f32,output_dtype=f32,index_dtype=i64",
      "gb bag_length\nci b0\ngb table_row_start\nci b1\ngb out\ngl b2 2\nfu l0 l1\nsp l2 None 3 8\nro l4 l5 l3\n"
      "bind l4 bx\nbind l5 tx\ngb pooled\nca b3 l5\n",
      "indices");
}

}  // namespace
}  // namespace dragon::lower
