// validate_record and validate_workload (record_validation.h).
#include "record_validation.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "dragon/ir/printer.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"

namespace dragon::db {
namespace {

// Whether `text` is well-formed UTF-8 (JSON lines must carry it unchanged).
bool is_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next >> 6) != 0x2) return false;
      code = (code << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return false;
    i += length;
  }
  return true;
}

[[noreturn]] void refuse(std::string_view where, std::string_view field, std::string_view why) {
  throw UserError(fmt::format("{}: {}: {}", where, field, why));
}

void check_text(std::string_view where, std::string_view field, std::string_view text, bool may_be_empty) {
  if (!may_be_empty && text.empty()) refuse(where, field, "is empty");
  if (!is_utf8(text)) refuse(where, field, "is not valid UTF-8");
}

void check_optional_text(std::string_view where, std::string_view field, const std::optional<std::string>& text) {
  if (!text) return;
  if (text->empty()) refuse(where, field, "is present but empty (leave it absent instead)");
  check_text(where, field, *text, false);
}

}  // namespace

void validate_record(const Record& record, std::string_view where) {
  check_text(where, "target.name", record.key.target.name, false);
  check_text(where, "target.arch", record.key.target.arch, true);
  check_text(where, "hardware.device", record.key.hardware.device, false);
  check_text(where, "hardware.driver", record.key.hardware.driver, true);
  check_text(where, "origin", record.origin, false);
  check_optional_text(where, "error", record.error);
  check_optional_text(where, "kernel_hash", record.kernel_hash);
  check_optional_text(where, "commit", record.commit);
  check_text(where, "script", record.script, true);

  if (record.status == RecordStatus::kOk) {
    if (record.samples_ms.empty()) refuse(where, "samples_ms", "an ok record needs at least one latency sample");
    if (record.error) refuse(where, "error", "an ok record has no error");
  } else if (!record.error) {
    refuse(where, "error",
           fmt::format("a {} record needs the reason it failed", record_status_id(record.status)));
  }
  for (size_t i = 0; i < record.samples_ms.size(); ++i) {
    const float sample = record.samples_ms[i];
    if (!std::isfinite(sample) || sample <= 0) {
      refuse(where, fmt::format("samples_ms[{}]", i), fmt::format("{} is not a positive finite time", sample));
    }
  }

  std::string canonical;
  try {
    canonical = script::encode(script::decode(record.script));
  } catch (const script::ScriptError& e) {
    refuse(where, "script", fmt::format("line {}:{}: {}", e.line(), e.column(), e.message()));
  } catch (const UserError& e) {
    refuse(where, "script", e.what());
  }
  if (canonical != record.script) {
    refuse(where, "script", "is not in canonical form (store script::encode of the trace)");
  }
}

ir::PrimFunc validate_workload(const Workload& workload, std::string_view where) {
  if (workload.spec) check_text(where, "spec", *workload.spec, false);
  check_text(where, "ir", workload.ir, false);
  ir::PrimFunc func;
  try {
    func = workload.function();
  } catch (const UserError& e) {
    refuse(where, "ir", e.what());
  }
  if (ir::print_function(func) != workload.ir) {
    refuse(where, "ir", "is not canonical IR text (store ir::print_function of the function)");
  }
  const WorkloadHash hash = ir::structural_hash(func);
  if (hash != workload.hash) {
    refuse(where, "hash",
           fmt::format("{} is not the structural hash of its IR ({})", format_workload_hash(workload.hash),
                       format_workload_hash(hash)));
  }
  return func;
}

}  // namespace dragon::db
