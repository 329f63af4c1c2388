// verify_index_widths: in the flat form, an access to a buffer of more than 2^31 - 1
// elements must index in i64. An i32 offset past 2^31 wraps to a negative address, which
// the GPU reports only as CUDA_ERROR_ILLEGAL_ADDRESS from a later synchronize (the H200
// tuning runs of embedding_bag and TBE, whose intermediate had one 30721-element copy per
// thread, 4.0e9 elements, indexed in i32 by unify_thread_bindings). The passes that make
// or grow buffers choose the width (flatten_buffers, unify_thread_bindings); this check
// makes a pass that forgets a compiler error instead of a crash on the device.
#include <limits>

#include "dragon/ir/functor.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"

namespace dragon::lower {
namespace {

class IndexWidthChecker : public ir::StmtExprVisitor {
 public:
  explicit IndexWidthChecker(const ir::PrimFunc& func) : func_(func) {}

 protected:
  void visit_(const ir::BufferLoadNode* op) override {
    check(op->buffer, op->indices, "a load of");
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    check(op->buffer, op->indices, "a store to");
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  void check(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices, const char* access) const {
    if (indices.size() != 1 || buffer->shape.size() != 1) return;  // not flat: find_flat_form_problems says so
    if (buffer->shape[0] <= std::numeric_limits<int32_t>::max()) return;
    DRAGON_CHECK(indices[0].dtype() == ir::DataType::i64(),
                 "function '{}': {} '{}' ({} elements, more than i32 offsets reach) indexes in {}: {}; the offset "
                 "would wrap to a negative address",
                 func_->name, access, buffer->name, buffer->shape[0], ir::to_string(indices[0].dtype()),
                 ir::print_expr(indices[0]));
  }

  const ir::PrimFunc& func_;
};

}  // namespace

void verify_index_widths(const ir::PrimFunc& func) { IndexWidthChecker(func).visit(func->body); }

}  // namespace dragon::lower
