// The rules a workload and a record must meet before they are stored (record.h states
// them field by field). Internal to src/db: the database and the importers call these, so
// a bad value is refused with a message, never stored.
#pragma once

#include <string_view>

#include "dragon/db/record.h"
#include "dragon/ir/function.h"

namespace dragon::db {

// Throws UserError "WHERE: FIELD: why" for the first rule `record` breaks: a script that
// is not canonical (with the decoder's line:column), an ok record without samples or with
// an error, a failed one without an error, a sample not finite or not > 0, an empty
// origin, target name or device, an empty optional string, text that is not UTF-8.
void validate_record(const Record& record, std::string_view where);

// Parses the workload's IR and checks it: canonical text (the printer reproduces it) and
// a hash equal to its structural hash. Returns the function; throws UserError "WHERE: why".
ir::PrimFunc validate_workload(const Workload& workload, std::string_view where);

}  // namespace dragon::db
