// The SQL of the record queries whose speed matters, shared by database.cc and the test
// that checks SQLite answers them from an index (EXPLAIN QUERY PLAN). Internal to src/db.
#pragma once

#include <string_view>

namespace dragon::db::queries {

// The columns every record query selects, in the order Database reads them.
inline constexpr std::string_view kRecordSelect = R"sql(
SELECT r.id, w.hash, t.name, t.arch, h.device, h.driver, r.script, r.status, r.error, r.kernel_hash,
       r.samples_ms, r.git_commit, r.measured_at, r.origin
FROM records r
JOIN workloads w ON w.id = r.workload
JOIN targets t ON t.id = r.target
JOIN hardware h ON h.id = r.hardware)sql";

// Best-k under one key: ?1 workload id, ?2 target id, ?3 hardware id, ?4 k. status = 'ok'
// is a literal, not a parameter, so the planner can match it to records_by_key's column
// and read the rows already ordered by median_ms (then rowid): no sort, k rows read.
inline constexpr std::string_view kTopKWhere =
    "\nWHERE r.workload = ?1 AND r.target = ?2 AND r.hardware = ?3 AND r.status = 'ok'"
    "\nORDER BY r.median_ms, r.id LIMIT ?4";

// The latest record of a kernel hash under one key: ?1 kernel hash, ?2..?4 key ids.
inline constexpr std::string_view kKernelWhere =
    "\nWHERE r.kernel_hash = ?1 AND r.workload = ?2 AND r.target = ?3 AND r.hardware = ?4"
    "\nORDER BY r.id DESC LIMIT 1";

}  // namespace dragon::db::queries
