// The CPU emitter (cpu_codegen.h): overrides of the C printer for OpenMP loops, stack or
// heap allocations and the 16-bit float prelude. Thread-bound loops are serial loops
// (lower.h), so any schedule the interpreter runs also runs here.
#include "dragon/codegen/cpu_codegen.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu_prelude.h"
#include "dragon/codegen/c_printer.h"
#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::codegen {
namespace {

// Allocations up to this size live on the stack (OpenMP worker threads have small stacks).
constexpr int64_t kMaxStackBytes = 64 * 1024;
constexpr int64_t kMaxUnroll = 16;

class CpuEmitter final : public CPrinter {
 public:
  CpuSource emit(const ir::PrimFunc& func, const CpuCodegenOptions& options) {
    // Entry names are the caller's C identifiers; the prefix keeps buffer names apart.
    std::string impl = options.entry_name + "_impl";
    names_.reserve(impl);
    names_.reserve(options.entry_name);
    std::vector<std::string> params, casts;
    for (size_t i = 0; i < func->params.size(); ++i) {
      const ir::Buffer& buffer = func->params[i].buffer;
      std::string type = type_name(buffer->dtype);
      params.push_back(fmt::format("{}* {} {}", type, restrict_qualifier(), buffer_name(buffer)));
      casts.push_back(fmt::format("({}*)args[{}]", type, i));
    }
    out_ << cpu_prelude() << "\n";
    out_ << "// " << func->name << "\n";
    open(fmt::format("extern \"C\" void {}({})", impl, fmt::join(params, ", ")));
    print_stmt(func->body);
    close();
    open(fmt::format("extern \"C\" void {}(void* const* args)", options.entry_name));
    line(fmt::format("{}({});", impl, fmt::join(casts, ", ")));
    close();
    return CpuSource{out_.str(), options.entry_name};
  }

 protected:
  std::string f16_type() const override { return "dragon_f16"; }
  std::string bf16_type() const override { return "dragon_bf16"; }
  std::string half_to_float(const std::string& value, ir::DataType from) const override {
    return fmt::format("dragon_{}_to_float({})", from == ir::DataType::f16() ? "f16" : "bf16", value);
  }
  std::string float_to_half(const std::string& value, ir::DataType from, ir::DataType to) const override {
    return fmt::format("dragon_{}_from_double({})", to == ir::DataType::f16() ? "f16" : "bf16", value);
  }
  std::string math_call(ir::Intrinsic op, ir::DataType dtype, const std::vector<std::string>& args) const override {
    if (op == ir::Intrinsic::IsNan) return fmt::format("std::isnan({})", args[0]);
    if (op == ir::Intrinsic::IsInf) return fmt::format("std::isinf({})", args[0]);
    // The prelude's exp vectorizes; libm's expf is a call in every iteration.
    if (op == ir::Intrinsic::Exp && dtype == ir::DataType::f32()) return fmt::format("dragon_expf({})", args[0]);
    return CPrinter::math_call(op, dtype, args);
  }
  std::string float_extremum(std::string_view which, bool f64) const override {
    return f64 ? CPrinter::float_extremum(which, f64) : fmt::format("dragon_f{}f", which);
  }

  std::string loop_pragma(const ir::ForNode* op) const override {
    switch (op->for_kind) {
      case ir::ForKind::kParallel: return "#pragma omp parallel for";
      case ir::ForKind::kVectorized: return "#pragma omp simd";
      case ir::ForKind::kUnrolled:
        // Full unrolling of long or nested loops makes compile time explode; the compiler
        // unrolls further where it pays.
        if (auto extent = ir::as_const_int(op->extent); extent && *extent <= kMaxUnroll) {
          return fmt::format("#pragma GCC unroll {}", *extent);
        }
        return fmt::format("#pragma GCC unroll {}", kMaxUnroll);
      case ir::ForKind::kSerial:
      case ir::ForKind::kThreadBinding: return {};  // thread-bound loops run serially here
    }
    return {};
  }

  void print_allocate(const ir::AllocateNode* op) override {
    const ir::Buffer& buffer = op->buffer;
    int64_t count = std::max<int64_t>(buffer->num_elements(), 1);
    int64_t bytes = count * buffer->dtype.bytes();
    std::string name = buffer_name(buffer);
    std::string type = type_name(buffer->dtype);
    if (bytes <= kMaxStackBytes) {
      line(fmt::format("alignas(64) {} {}[{}];  // {} {}", type, name, count, buffer->scope, buffer->name));
      print_stmt(op->body);
      return;
    }
    line(fmt::format("{}* {} = ({}*)aligned_alloc(64, {});  // {} {}", type, name, type, (bytes + 63) / 64 * 64,
                     buffer->scope, buffer->name));
    print_stmt(op->body);
    line(fmt::format("free({});", name));
  }
};

}  // namespace

CpuSource generate_cpu(const ir::PrimFunc& flat, const CpuCodegenOptions& options) {
  CpuEmitter emitter;
  return emitter.emit(flat, options);
}

}  // namespace dragon::codegen
