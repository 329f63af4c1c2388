// The value types of record.h: workload hashes and functions, status ids, time stamps,
// descriptions. No storage here.
#include "dragon/db/record.h"

#include <array>
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/support/error.h"

namespace dragon::db {
namespace {

struct StatusName {
  RecordStatus status;
  std::string_view id;
};
// The one table of status spellings (record.h lists the meanings).
constexpr std::array<StatusName, 8> kStatusNames = {{
    {RecordStatus::kOk, "ok"},
    {RecordStatus::kApplyFailed, "apply_failed"},
    {RecordStatus::kRejected, "rejected"},
    {RecordStatus::kBuildFailed, "build_failed"},
    {RecordStatus::kRunFailed, "run_failed"},
    {RecordStatus::kCrashed, "crashed"},
    {RecordStatus::kTimedOut, "timed_out"},
    {RecordStatus::kWrongResult, "wrong_result"},
}};

constexpr std::array<RecordStatus, kStatusNames.size()> kAllStatuses = [] {
  std::array<RecordStatus, kStatusNames.size()> out{};
  for (size_t i = 0; i < kStatusNames.size(); ++i) out[i] = kStatusNames[i].status;
  return out;
}();

// Parses exactly `digits` decimal digits at text[pos..]; nullopt otherwise.
std::optional<int> fixed_digits(std::string_view text, size_t pos, size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int value = 0;
  for (size_t i = pos; i < pos + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::string format_workload_hash(WorkloadHash hash) { return fmt::format("{:016x}", hash); }

WorkloadHash parse_workload_hash(std::string_view text) {
  WorkloadHash value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.size() != 16 || ec != std::errc() || end != text.data() + text.size()) {
    throw UserError(fmt::format("bad workload hash '{}': expected 16 hex digits", text));
  }
  return value;
}

Workload Workload::of(const ir::PrimFunc& func, std::optional<std::string> spec) {
  return Workload{ir::structural_hash(func), ir::print_function(func), std::move(spec)};
}

ir::PrimFunc Workload::function() const {
  std::string source = fmt::format("<workload {}>", format_workload_hash(hash));
  return ir::parse_function(ir, source);
}

std::string Target::describe() const { return arch.empty() ? name : name + " " + arch; }

std::string Hardware::describe() const {
  return driver.empty() ? device : fmt::format("{} (driver {})", device, driver);
}

std::string_view record_status_id(RecordStatus status) {
  for (const StatusName& entry : kStatusNames) {
    if (entry.status == status) return entry.id;
  }
  DRAGON_UNREACHABLE("record status {}", static_cast<int>(status));
}

std::optional<RecordStatus> parse_record_status(std::string_view id) {
  for (const StatusName& entry : kStatusNames) {
    if (entry.id == id) return entry.status;
  }
  return std::nullopt;
}

std::span<const RecordStatus> all_record_statuses() { return kAllStatuses; }

std::string format_time(TimePoint time) {
  using namespace std::chrono;
  const sys_days day = floor<days>(time);
  const year_month_day date(day);
  const hh_mm_ss<milliseconds> clock(time - day);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), clock.hours().count(),
                     clock.minutes().count(), clock.seconds().count(), clock.subseconds().count());
}

TimePoint parse_time(std::string_view text) {
  using namespace std::chrono;
  // YYYY-MM-DDTHH:MM:SS.mmmZ, 24 characters.
  auto bad = [&]() -> UserError {
    return UserError(fmt::format("bad time '{}': expected YYYY-MM-DDTHH:MM:SS.mmmZ (UTC)", text));
  };
  if (text.size() != 24 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text[19] != '.' || text[23] != 'Z') {
    throw bad();
  }
  auto y = fixed_digits(text, 0, 4), mo = fixed_digits(text, 5, 2), d = fixed_digits(text, 8, 2);
  auto h = fixed_digits(text, 11, 2), mi = fixed_digits(text, 14, 2), s = fixed_digits(text, 17, 2);
  auto ms = fixed_digits(text, 20, 3);
  if (!y || !mo || !d || !h || !mi || !s || !ms || *h > 23 || *mi > 59 || *s > 59) throw bad();
  const year_month_day date{year(*y), month(static_cast<unsigned>(*mo)), day(static_cast<unsigned>(*d))};
  if (!date.ok()) throw bad();
  return sys_days(date) + hours(*h) + minutes(*mi) + seconds(*s) + milliseconds(*ms);
}

std::optional<double> Record::median_ms() const {
  std::optional<LatencySummary> summary = latency();
  if (!summary) return std::nullopt;
  return summary->median_ms;
}

RecordFilter RecordFilter::of(const TuningKey& key) {
  RecordFilter filter;
  filter.workload = key.workload;
  filter.target = key.target;
  filter.hardware = key.hardware;
  return filter;
}

}  // namespace dragon::db
