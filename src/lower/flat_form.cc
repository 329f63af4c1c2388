// find_flat_form_problems: checks the promises of lower.h's flat form (no blocks, every
// buffer one-dimensional) that the IR verifier, which accepts any stage, does not.
#include "dragon/ir/functor.h"
#include "dragon/lower/lower.h"

namespace dragon::lower {
namespace {

class FlatFormChecker : public ir::StmtExprVisitor {
 public:
  std::vector<std::string> problems;

  void check_buffer(const ir::Buffer& buffer, std::string_view where) {
    if (buffer.ndim() != 1) {
      problems.push_back(fmt::format("buffer '{}' ({}) has rank {}, not 1", buffer->name, where, buffer.ndim()));
    }
  }

 protected:
  void visit_(const ir::BlockRealizeNode* op) override {
    problems.push_back("block '" + op->block->name + "' is left");
  }
  void visit_(const ir::AllocateNode* op) override {
    check_buffer(op->buffer, "allocated");
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    if (op->indices.size() != 1) problems.push_back("a load of '" + op->buffer->name + "' has several indices");
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    if (op->indices.size() != 1) problems.push_back("a store to '" + op->buffer->name + "' has several indices");
    ir::StmtExprVisitor::visit_(op);
  }
};

}  // namespace

std::vector<std::string> find_flat_form_problems(const ir::PrimFunc& func) {
  FlatFormChecker checker;
  for (const ir::Param& p : func->params) checker.check_buffer(p.buffer, "a parameter");
  checker.visit(func->body);
  return std::move(checker.problems);
}

}  // namespace dragon::lower
