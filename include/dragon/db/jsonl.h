// The tuning database as JSON lines: one JSON object per line, a header line first, then
// the workloads, then the records (docs/db.md has the fields). Lossless: exporting a
// database, importing the file into an empty one and exporting again gives the same
// bytes; importing the same file twice stores everything once. Not the SQLite store
// (database.h) and not MetaSchedule's layout (metaschedule_import.h).
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "dragon/db/database.h"
#include "dragon/db/record.h"

namespace dragon::db {

struct ExportSummary {
  int64_t workloads = 0;
  int64_t records = 0;
};

struct ImportSummary {
  int64_t workloads_added = 0;   // new to the database (already stored ones are not counted)
  int64_t records_inserted = 0;
  int64_t duplicates = 0;        // identical to a stored record, skipped
  // Records left out with the reason, "FILE:LINE: why" (a MetaSchedule trace our
  // schedule cannot replay, ...); a malformed file is an error, never a skip.
  std::vector<std::string> skipped;
};

// Writes the header line, the workloads the selected records belong to (every workload
// when `filter` is empty) and the records matching `filter`, in commit order.
ExportSummary export_jsonl(const Database& db, std::ostream& out, const RecordFilter& filter = {});
// export_jsonl into `path`, written aside and renamed into place; zstd-compressed when
// `path` ends in ".zst" (support/compressed_jsonl.h: a tenth of the size, for the records a
// repository keeps and a GPU machine returns).
ExportSummary export_jsonl_file(const Database& db, const std::string& path, const RecordFilter& filter = {});

// Adds the file's workloads and records. `source` names the input in errors: malformed
// lines throw UserError "SOURCE:LINE: why" and records are committed in batches, so a
// failure leaves the batches before it stored (importing again after a fix is safe).
ImportSummary import_jsonl(Database& db, std::istream& in, const std::string& source);
// The same from a file; one ending in ".zst" is read as zstd-compressed.
ImportSummary import_jsonl_file(Database& db, const std::string& path);

// One line each (without the newline), as export_jsonl writes them; for tools that write
// their own streams of records (evaluations).
std::string jsonl_header_line();
std::string workload_to_json_line(const Workload& workload);
std::string record_to_json_line(const Record& record);

}  // namespace dragon::db
