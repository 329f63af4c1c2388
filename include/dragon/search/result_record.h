// A measured candidate as a tuning-database record and back: the one translation between
// search's MeasureResult and db::Record, used by the tuner and by `dragon optimize`
// (the model's attempts are stored like search's candidates, with another origin).
#pragma once

#include <string>

#include "dragon/db/record.h"
#include "dragon/search/measure_result.h"

namespace dragon::search {

db::RecordStatus record_status(MeasureStatus status);
MeasureStatus measure_status(db::RecordStatus status);

// Who measured it: Little Dragon's commit (may be empty) and the origin ("search", "model").
struct RecordProvenance {
  std::string commit;
  std::string origin = "search";
};

// The record of `result` for `script` under `key`, measured now. A kOk result without a
// finite positive sample becomes kRunFailed ("timing gave no positive sample"): the
// database never holds a latency that was not measured.
db::Record record_of(const db::TuningKey& key, std::string script, const MeasureResult& result,
                     const RecordProvenance& provenance);

// A stored record as the measurer's cache would have it.
MeasureResult result_of(const db::Record& record);

}  // namespace dragon::search
