// Internal to the database: how the importers (JSONL, MetaSchedule's files) group rows.
#pragma once

#include <cstddef>

namespace dragon::db::detail {

// Records per import transaction: large enough to amortise the commit's fsync.
inline constexpr size_t kImportBatch = 4096;

}  // namespace dragon::db::detail
