// MeasureResult <-> db::Record (result_record.h).
#include "dragon/search/result_record.h"

#include <chrono>
#include <cmath>

namespace dragon::search {

db::RecordStatus record_status(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk: return db::RecordStatus::kOk;
    case MeasureStatus::kApplyFailed: return db::RecordStatus::kApplyFailed;
    case MeasureStatus::kRejected: return db::RecordStatus::kRejected;
    case MeasureStatus::kBuildFailed: return db::RecordStatus::kBuildFailed;
    case MeasureStatus::kRunFailed: return db::RecordStatus::kRunFailed;
    case MeasureStatus::kCrashed: return db::RecordStatus::kCrashed;
    case MeasureStatus::kTimedOut: return db::RecordStatus::kTimedOut;
    case MeasureStatus::kWrongResult: return db::RecordStatus::kWrongResult;
  }
  return db::RecordStatus::kRunFailed;
}

MeasureStatus measure_status(db::RecordStatus status) {
  switch (status) {
    case db::RecordStatus::kOk: return MeasureStatus::kOk;
    case db::RecordStatus::kApplyFailed: return MeasureStatus::kApplyFailed;
    case db::RecordStatus::kRejected: return MeasureStatus::kRejected;
    case db::RecordStatus::kBuildFailed: return MeasureStatus::kBuildFailed;
    case db::RecordStatus::kRunFailed: return MeasureStatus::kRunFailed;
    case db::RecordStatus::kCrashed: return MeasureStatus::kCrashed;
    case db::RecordStatus::kTimedOut: return MeasureStatus::kTimedOut;
    case db::RecordStatus::kWrongResult: return MeasureStatus::kWrongResult;
  }
  return MeasureStatus::kRunFailed;
}

db::Record record_of(const db::TuningKey& key, std::string script, const MeasureResult& result,
                     const RecordProvenance& provenance) {
  db::Record r;
  r.key = key;
  r.script = std::move(script);
  r.status = record_status(result.status);
  if (!result.kernel_hash.empty()) r.kernel_hash = result.kernel_hash;
  if (result.ok()) {
    for (double ms : result.samples_ms) {
      if (std::isfinite(ms) && ms > 0) r.samples_ms.push_back(static_cast<float>(ms));
    }
    if (r.samples_ms.empty()) {
      r.status = db::RecordStatus::kRunFailed;
      r.error = "timing gave no positive sample";
    }
  } else {
    r.error = result.error.empty() ? std::string(measure_status_id(result.status)) : result.error;
  }
  if (!provenance.commit.empty()) r.commit = provenance.commit;
  r.measured_at = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  r.origin = provenance.origin;
  return r;
}

MeasureResult result_of(const db::Record& record) {
  MeasureResult r;
  r.status = measure_status(record.status);
  r.error = record.error.value_or("");
  r.kernel_hash = record.kernel_hash.value_or("");
  for (float s : record.samples_ms) r.samples_ms.push_back(s);
  return r;
}

}  // namespace dragon::search
