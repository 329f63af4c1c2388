// Measured records in JSON Lines (measured_records.h): reading, writing, and turning
// them into feature rows by replaying their scripts.
#include "dragon/search/measured_records.h"

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"

namespace dragon::search {

std::vector<MeasuredRecord> read_measured_records(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot open the records file", path.string()));
  std::vector<MeasuredRecord> records;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(line);
      MeasuredRecord r;
      r.workload = j.at("workload").get<std::string>();
      r.target = j.at("target").get<std::string>();
      r.script = j.at("script").get<std::string>();
      if (j.contains("latency_s") && !j.at("latency_s").is_null()) r.latency_s = j.at("latency_s").get<double>();
      if (j.contains("error")) r.error = j.at("error").get<std::string>();
      if (r.latency_s && !(*r.latency_s > 0)) throw UserError("latency_s must be positive");
      records.push_back(std::move(r));
    } catch (const nlohmann::json::exception& e) {
      throw UserError(fmt::format("{}:{}: not a measured record: {}", path.string(), number, e.what()));
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}:{}: {}", path.string(), number, e.what()));
    }
  }
  return records;
}

void write_measured_record(std::ostream& out, const MeasuredRecord& record) {
  nlohmann::json j = {{"workload", record.workload},
                      {"target", record.target},
                      {"script", record.script},
                      {"latency_s", record.latency_s ? nlohmann::json(*record.latency_s) : nlohmann::json(nullptr)},
                      {"error", record.error}};
  out << j.dump() << '\n';
}

lower::Target parse_record_target(const std::string& target) {
  if (target == "cpu") return lower::Target::cpu();
  if (target.rfind("cuda", 0) == 0) return lower::Target::cuda_h200();
  throw UserError(fmt::format("unknown record target '{}' (cpu or cuda)", target));
}

std::vector<FeaturizedCandidate> featurize_records(const std::vector<MeasuredRecord>& records, int threads) {
  std::map<std::string, ir::PrimFunc> workloads;
  std::vector<Candidate> candidates;
  for (const MeasuredRecord& r : records) {
    auto it = workloads.find(r.workload);
    if (it == workloads.end()) {
      it = workloads.emplace(r.workload, ops::OpRegistry::global().make_workload(r.workload).func).first;
    }
    schedule::Schedule sch = schedule::replay(script::decode(r.script), it->second);
    candidates.push_back({sch.func(), r.workload, parse_record_target(r.target)});
  }
  std::vector<FeaturizedCandidate> out = featurize(candidates, threads);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].latency_s = records[i].latency_s;
    out[i].target = records[i].target.rfind("cuda", 0) == 0 ? "cuda" : records[i].target;
  }
  return out;
}

}  // namespace dragon::search
