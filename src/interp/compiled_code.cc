// The shared pieces of the interpreter's code: bounds-checked buffer access, fresh-memory
// patterns and the compiler's scopes of variables and buffers. Node classes live in
// compile_expr.cc, compile_cast.cc, compile_call.cc and compile_stmt.cc.
#include "compiled_code.h"

#include <limits>

#include "dragon/support/error.h"
#include "expr_code.h"

namespace dragon::interp::detail {

void wrong_channel(const char* what) { DRAGON_UNREACHABLE("{}", what); }

Access::Access(const ir::Buffer& buffer, int slot, std::vector<ExprPtr> indices, bool is_store, Context context)
    : slot_(slot),
      indices_(std::move(indices)),
      buffer_name_(buffer->name),
      is_store_(is_store),
      context_(std::move(context)) {
  const std::vector<int64_t>& shape = buffer->shape;
  if (indices_.size() != shape.size()) {
    throw UserError(fmt::format("{} of buffer {} with {} indices, but it has {} dimensions, in {}",
                                is_store ? "store" : "load", buffer_name_, indices_.size(), shape.size(), *context_));
  }
  dims_.resize(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    dims_[d] = Dim{indices_[d].get(), var_slot_of(*indices_[d]), shape[d], stride};
    stride *= shape[d];
  }
}

void Access::fail(Frame& frame) const {
  std::string indices, shape;
  for (size_t d = 0; d < indices_.size(); ++d) {
    indices += fmt::format("{}{}", d ? ", " : "", indices_[d]->eval_int(frame));
    shape += fmt::format("{}{}", d ? ", " : "", dims_[d].extent);
  }
  throw UserError(fmt::format("out-of-bounds {} {} buffer {} at [{}] (shape [{}]) in {}", is_store_ ? "store" : "load",
                              is_store_ ? "to" : "from", buffer_name_, indices, shape, *context_));
}

std::vector<uint8_t> uninitialized_pattern(ir::DataType dtype) {
  std::vector<uint8_t> bytes(dtype.bytes());
  double nan = std::numeric_limits<double>::quiet_NaN();
  if (dtype.is_float()) {
    switch (float_format_of(dtype)) {
      case FloatFormat::kF64: F64Element::write_float(bytes.data(), 0, nan); break;
      case FloatFormat::kF32: F32Element::write_float(bytes.data(), 0, nan); break;
      case FloatFormat::kF16: F16Element::write_float(bytes.data(), 0, nan); break;
      case FloatFormat::kBF16: BF16Element::write_float(bytes.data(), 0, nan); break;
    }
  } else {
    std::fill(bytes.begin(), bytes.end(), uint8_t{0x5a});
  }
  return bytes;
}

Compiler::Compiler(const std::vector<ir::Buffer>& params) {
  for (const ir::Buffer& buffer : params) bind_buffer(buffer);
}

int Compiler::bind_var(const ir::Var& var) {
  int slot = num_var_slots_++;
  vars_[var.get()].push_back(slot);
  return slot;
}

void Compiler::unbind_var(const ir::Var& var) {
  auto it = vars_.find(var.get());
  DRAGON_CHECK(it != vars_.end() && !it->second.empty(), "unbinding unbound variable {}", var.name());
  it->second.pop_back();
}

int Compiler::var_slot(const ir::VarNode* var) const {
  auto it = vars_.find(var);
  if (it == vars_.end() || it->second.empty()) {
    throw UserError(fmt::format("variable {} is used outside the loop or block that defines it, in {}", var->name,
                                context_ ? *context_ : std::string("the function")));
  }
  return it->second.back();
}

int Compiler::bind_buffer(const ir::Buffer& buffer) {
  DRAGON_CHECK(buffer->dtype.is_scalar(), "the interpreter does not run vector buffers ({} of {})", buffer->name,
               ir::to_string(buffer->dtype));
  int slot = num_buffer_slots_++;
  buffers_[buffer.get()].push_back(slot);
  return slot;
}

void Compiler::unbind_buffer(const ir::Buffer& buffer) {
  auto it = buffers_.find(buffer.get());
  DRAGON_CHECK(it != buffers_.end() && !it->second.empty(), "unbinding unbound buffer {}", buffer->name);
  it->second.pop_back();
}

int Compiler::buffer_slot(const ir::Buffer& buffer) const {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end() || it->second.empty()) {
    throw UserError(fmt::format("buffer {} is neither a parameter nor allocated around its use, in {}", buffer->name,
                                context_ ? *context_ : std::string("the function")));
  }
  return it->second.back();
}

}  // namespace dragon::interp::detail
