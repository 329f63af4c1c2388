// CompiledFunction: compiles a PrimFunc once into pre-resolved code (compiled_code.h) and
// runs it on host tensors. Checking argument shapes and types happens here; the semantics
// of each statement and expression live with its code (compile_*.cc).
#include "dragon/interp/interpreter.h"

#include <fmt/ranges.h>

#include "compiled_code.h"
#include "dragon/support/error.h"

namespace dragon::interp {

struct CompiledFunction::Impl {
  std::string name;
  std::vector<ir::Buffer> params;
  detail::StmtPtr body;
  int num_var_slots = 0;
  int num_buffer_slots = 0;
};

CompiledFunction::CompiledFunction(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledFunction::~CompiledFunction() = default;
CompiledFunction::CompiledFunction(CompiledFunction&&) noexcept = default;
CompiledFunction& CompiledFunction::operator=(CompiledFunction&&) noexcept = default;

CompiledFunction CompiledFunction::compile(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.defined(), "compiling an undefined function");
  auto impl = std::make_unique<Impl>();
  impl->name = func->name;
  for (const ir::Param& param : func->params) impl->params.push_back(param.buffer);
  detail::Compiler compiler(impl->params);
  if (!func->body.defined()) throw UserError(fmt::format("function {} has no body", func->name));
  impl->body = compiler.stmt(func->body);
  impl->num_var_slots = compiler.num_var_slots();
  impl->num_buffer_slots = compiler.num_buffer_slots();
  return CompiledFunction(std::move(impl));
}

void CompiledFunction::run(std::vector<tensor::HostTensor>& args) const {
  if (args.size() != impl_->params.size()) {
    throw UserError(
        fmt::format("function {} takes {} arguments, got {}", impl_->name, impl_->params.size(), args.size()));
  }
  detail::Frame frame;
  frame.vars.assign(impl_->num_var_slots, 0);
  frame.buffers.assign(impl_->num_buffer_slots, nullptr);
  frame.storage.resize(impl_->num_buffer_slots);
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Buffer& buffer = impl_->params[i];
    if (args[i].dtype() != buffer->dtype || args[i].shape() != buffer->shape) {
      throw UserError(fmt::format("argument {} of {} is {} [{}], but parameter {} is {} [{}]", i, impl_->name,
                                  ir::to_string(args[i].dtype()), fmt::join(args[i].shape(), ", "), buffer->name,
                                  ir::to_string(buffer->dtype), fmt::join(buffer->shape, ", ")));
    }
    frame.buffers[i] = static_cast<uint8_t*>(args[i].data());
  }
  impl_->body->exec(frame);
}

void run(const ir::PrimFunc& func, std::vector<tensor::HostTensor>& args) { CompiledFunction::compile(func).run(args); }

}  // namespace dragon::interp
