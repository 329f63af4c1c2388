// Fuzzes the compact script decoder: any text either is rejected with a ScriptError (a
// UserError with line and column) or decodes to a trace whose canonical script decodes to
// the same trace and encodes to itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/script/script.h"
#include "dragon/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  dragon::schedule::Trace trace;
  try {
    trace = dragon::script::decode(text);
  } catch (const dragon::UserError&) {
    return 0;
  }
  std::string canonical = dragon::script::encode(trace);
  dragon::schedule::Trace again = dragon::script::decode(canonical);
  if (!(again == trace)) __builtin_trap();
  if (dragon::script::encode(again) != canonical) __builtin_trap();
  if (!dragon::script::is_canonical(canonical)) __builtin_trap();
  return 0;
}
