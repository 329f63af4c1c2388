// ScheduleError messages: the short line is built from strings already at hand; the
// detailed one prints the function and marks the offending loop or block.
#include "dragon/schedule/schedule_error.h"

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/printer.h"

namespace dragon::schedule {

namespace {

std::string short_message(InstructionKind kind, int precondition, const std::string& error_name,
                          const std::string& operand, const std::string& reason) {
  return fmt::format("{}: {}: precondition {} ({}): {}", instruction_kind_name(kind), operand, precondition,
                     error_name, reason);
}

// Finds the locus's position among loops (or blocks) in printing order: the printer
// writes one "for " (or "block ") line per loop (block), in this same pre-order.
class LocusCounter : public ir::StmtVisitor {
 public:
  explicit LocusCounter(const ErrorLocus& locus) : locus_(locus) {}
  int found = -1;

 protected:
  void visit_(const ir::ForNode* op) override {
    if (locus_.loop_var == nullptr) return ir::StmtVisitor::visit_(op);
    if (locus_.loop_var == op->loop_var.get() && found < 0) found = seen_;
    ++seen_;
    ir::StmtVisitor::visit_(op);
  }
  void visit_(const ir::BlockNode* op) override {
    if (locus_.loop_var != nullptr) return ir::StmtVisitor::visit_(op);
    if (op->name == locus_.block_name && found < 0) found = seen_;
    ++seen_;
    ir::StmtVisitor::visit_(op);
  }

 private:
  const ErrorLocus& locus_;
  int seen_ = 0;  // loops, or blocks, met so far: whichever the locus is
};

}  // namespace

ScheduleError::ScheduleError(InstructionKind kind, int precondition, std::string error_name, std::string operand,
                             std::string reason, ir::PrimFunc func, ErrorLocus locus)
    : Error(short_message(kind, precondition, error_name, operand, reason)),
      kind_(kind),
      precondition_(precondition),
      error_name_(std::move(error_name)),
      operand_(std::move(operand)),
      reason_(std::move(reason)),
      func_(std::move(func)),
      locus_(std::move(locus)) {}

ScheduleError::ScheduleError(InstructionKind kind, int precondition, std::string error_name)
    : Error(""), kind_(kind), precondition_(precondition), error_name_(std::move(error_name)) {}

std::string ScheduleError::detail() const {
  std::string out = std::string(what()) + "\n";
  if (func_.defined()) out += print_with_marker(func_, locus_);
  return out;
}

std::string print_with_marker(const ir::PrimFunc& func, const ErrorLocus& locus) {
  std::string text = ir::print_function(func);
  if (locus.loop_var == nullptr && locus.block_name.empty()) return text;
  LocusCounter counter(locus);
  counter.visit(func->body);
  if (counter.found < 0) return text;
  const std::string_view head = locus.loop_var != nullptr ? "for " : "block ";
  std::string out;
  int seen = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    out += line;
    size_t indent = line.find_first_not_of(' ');
    if (indent != std::string_view::npos && line.substr(indent).starts_with(head)) {
      if (seen++ == counter.found) out += "  <-- here";
    }
    out += '\n';
    pos = end + 1;
  }
  return out;
}

}  // namespace dragon::schedule
