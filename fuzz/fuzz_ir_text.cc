// Fuzzes the IR text parser: any text either is rejected with a UserError or parses to a
// function whose printed text parses back to the same text (print(parse(t)) is canonical).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  dragon::ir::PrimFunc func;
  try {
    func = dragon::ir::parse_function(text, "<fuzz>");
  } catch (const dragon::UserError&) {
    return 0;
  }
  std::string printed = dragon::ir::print_function(func);
  std::string reprinted = dragon::ir::print_function(dragon::ir::parse_function(printed, "<printed>"));
  if (printed != reprinted) __builtin_trap();
  return 0;
}
