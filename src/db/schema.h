// The tuning database's SQLite schema (version kSchemaVersion, docs/db.md): creating it in
// a new file, recognising it in an existing one, and WAL mode. Internal to src/db.
#pragma once

#include "sqlite.h"

namespace dragon::db {

// Makes `connection` ready for use: creates the schema in an empty file (unless
// read-only), checks an existing one and switches the file to WAL mode. Throws UserError
// naming the path for a file that is not an SQLite database, another program's database,
// an empty file opened read-only, or a schema version this build does not know.
void prepare_schema(sqlite::Connection& connection, bool read_only);

}  // namespace dragon::db
