// serialize_thread_loops (CPU): loops bound to blockIdx/threadIdx/vthread become serial
// loops, the sequential semantics of block IR, so any schedule the interpreter runs also
// runs on the CPU. Not for GPU targets, where those loops become the kernel launch.
#include "dragon/ir/functor.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

class ThreadLoopSerializer : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);
    if (op->for_kind != ir::ForKind::kThreadBinding) return visited;
    const auto* loop = visited.as<ir::ForNode>();
    return ir::ForNode::make(loop->loop_var, loop->min, loop->extent, ir::ForKind::kSerial, loop->body, {},
                             loop->annotations);
  }
};

}  // namespace

ir::PrimFunc serialize_thread_loops(const ir::PrimFunc& func) {
  return func.with_body(ThreadLoopSerializer().visit(func->body));
}

}  // namespace dragon::lower
