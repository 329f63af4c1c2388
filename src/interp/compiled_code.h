// Private to the interpreter: the executable form of a PrimFunc (a tree of small nodes
// with pre-resolved variable slots, buffer slots and strides, specialised by type) and the
// compiler that builds it from the IR. Not a public API; include only from src/interp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/ir/expr.h"
#include "dragon/ir/stmt.h"

namespace dragon::interp::detail {

// The state of one run: loop and block variables by slot, buffer base pointers by slot,
// and the storage of buffers allocated inside the function (indexed by buffer slot).
struct Frame {
  std::vector<int64_t> vars;
  std::vector<uint8_t*> buffers;
  std::vector<std::vector<uint8_t>> storage;
};

// An expression: floats (f64, f32, f16, bf16) are evaluated through eval_float as a
// double already rounded to their type; ints and bool through eval_int, sign-extended from
// their width (bool as 0 or 1). Calling the other channel is our bug.
class ExprCode {
 public:
  explicit ExprCode(ir::DataType dtype) : dtype_(dtype) {}
  virtual ~ExprCode() = default;
  virtual double eval_float(Frame& frame) const;
  virtual int64_t eval_int(Frame& frame) const;
  ir::DataType dtype() const { return dtype_; }

 private:
  ir::DataType dtype_;
};
using ExprPtr = std::unique_ptr<ExprCode>;

class StmtCode {
 public:
  virtual ~StmtCode() = default;
  virtual void exec(Frame& frame) const = 0;
};
using StmtPtr = std::unique_ptr<StmtCode>;

// What a runtime error names: the statement (and block) whose evaluation failed.
using Context = std::shared_ptr<const std::string>;

// The indices of one buffer access, checked against the shape and turned into a flat
// element offset. An index that is a plain variable is read straight from its slot (no
// virtual call): the common case of every unscheduled loop nest.
class Access {
 public:
  Access(const ir::Buffer& buffer, int slot, std::vector<ExprPtr> indices, bool is_store, Context context);
  // Throws UserError naming the buffer, the indices and the statement when out of bounds.
  int64_t offset(Frame& frame) const {
    int64_t flat = 0;
    for (const Dim& dim : dims_) {
      int64_t index = dim.var_slot >= 0 ? frame.vars[dim.var_slot] : dim.code->eval_int(frame);
      if (static_cast<uint64_t>(index) >= static_cast<uint64_t>(dim.extent)) [[unlikely]]
        fail(frame);
      flat += index * dim.stride;
    }
    return flat;
  }
  int slot() const { return slot_; }

 private:
  struct Dim {
    const ExprCode* code;  // owned by indices_
    int var_slot;          // >= 0 when the index is a plain variable
    int64_t extent;
    int64_t stride;
  };
  [[noreturn]] void fail(Frame& frame) const;

  int slot_;
  std::vector<ExprPtr> indices_;
  std::vector<Dim> dims_;
  std::string buffer_name_;
  bool is_store_;
  Context context_;
};

// The slot of `code` if it only reads a variable, else -1.
int var_slot_of(const ExprCode& code);
// The value of `code` if it is an integer constant.
std::optional<int64_t> const_int_of(const ExprCode& code);

// The bytes one element of `dtype` starts as in freshly allocated memory: NaN for floats,
// 0x5a... for ints, so that reading uninitialised memory shows.
std::vector<uint8_t> uninitialized_pattern(ir::DataType dtype);

// Turns IR into code: resolves every variable and buffer to a slot once, so running never
// looks anything up. Scopes follow the IR: a loop variable is bound inside its loop, a
// block's iteration variables inside the block, an allocated buffer inside its owner.
class Compiler {
 public:
  // Parameters take buffer slots 0..n-1.
  explicit Compiler(const std::vector<ir::Buffer>& params);

  ExprPtr expr(const ir::Expr& e);  // compile_expr.cc
  StmtPtr stmt(const ir::Stmt& s);  // compile_stmt.cc

  int bind_var(const ir::Var& var);
  void unbind_var(const ir::Var& var);
  int var_slot(const ir::VarNode* var) const;
  int bind_buffer(const ir::Buffer& buffer);
  void unbind_buffer(const ir::Buffer& buffer);
  int buffer_slot(const ir::Buffer& buffer) const;

  const Context& context() const { return context_; }
  void set_context(Context context) { context_ = std::move(context); }
  // The innermost block being compiled, for messages.
  const std::string& block_name() const { return block_name_; }
  void set_block_name(std::string name) { block_name_ = std::move(name); }

  int num_var_slots() const { return num_var_slots_; }
  int num_buffer_slots() const { return num_buffer_slots_; }

 private:
  std::unordered_map<const ir::VarNode*, std::vector<int>> vars_;
  std::unordered_map<const ir::BufferNode*, std::vector<int>> buffers_;
  int num_var_slots_ = 0;
  int num_buffer_slots_ = 0;
  Context context_;
  std::string block_name_;
};

}  // namespace dragon::interp::detail
