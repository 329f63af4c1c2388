#include "dragon/bench/suite_results.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no infinity: a NaN/Inf disagreement's error is written as null.
Json number(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }
double number_or_inf(const Json& j) { return j.is_number() ? j.get<double>() : INFINITY; }

Json to_json(const Contender& c) {
  Json j;
  j["name"] = c.name;
  j["status"] = c.status;
  if (!c.error.empty()) j["error"] = c.error;
  j["checks"] = Json::array();
  for (const OutputCheck& check : c.checks) {
    j["checks"].push_back({{"output", check.output},
                           {"normalized_error", number(check.normalized_error)},
                           {"tolerance", check.tolerance},
                           {"ok", check.ok},
                           {"detail", check.detail}});
  }
  if (c.time) {
    j["time"] = {{"median_ms", c.time->median_ms}, {"min_ms", c.time->min_ms},   {"max_ms", c.time->max_ms},
                 {"ci95_ms", c.time->ci95_ms},     {"calls", c.time->calls},     {"converged", c.time->converged}};
  }
  return j;
}

// Reading: every field a report uses is checked, with the problem it belongs to.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  const Json& field(const Json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) throw UserError(path_ + ": " + where + ": field '" + key + "' missing");
    return j.at(key);
  }
  std::string text(const Json& j, const char* key, const std::string& where) const {
    const Json& v = field(j, key, where);
    if (!v.is_string()) throw UserError(path_ + ": " + where + ": field '" + key + "' is not a string");
    return v.get<std::string>();
  }
  double real(const Json& j, const char* key, const std::string& where) const {
    const Json& v = field(j, key, where);
    if (!v.is_number()) throw UserError(path_ + ": " + where + ": field '" + key + "' is not a number");
    return v.get<double>();
  }
  Contender contender(const Json& j, const std::string& where) const {
    Contender c;
    c.name = text(j, "name", where);
    c.status = text(j, "status", where);
    c.error = j.value("error", "");
    for (const Json& check : field(j, "checks", where)) {
      c.checks.push_back(OutputCheck{text(check, "output", where), number_or_inf(field(check, "normalized_error", where)),
                                     real(check, "tolerance", where), check.value("ok", false),
                                     check.value("detail", "")});
    }
    if (j.contains("time")) {
      const Json& t = j.at("time");
      c.time = Measured{real(t, "median_ms", where), real(t, "min_ms", where), real(t, "max_ms", where),
                        real(t, "ci95_ms", where), static_cast<int>(real(t, "calls", where)),
                        t.value("converged", false)};
    }
    return c;
  }

 private:
  std::string path_;
};

}  // namespace

std::string suite_run_to_json(const SuiteRun& run, int indent) {
  Json j;
  j["suite"] = run.suite;
  j["command"] = run.command;
  j["commit"] = run.commit;
  j["started_at"] = run.started_at;
  j["device"] = run.device;
  j["gpu"] = {{"name", run.gpu.name},
              {"sm_clock_mhz", run.gpu.sm_clock_mhz},
              {"max_sm_clock_mhz", run.gpu.max_sm_clock_mhz},
              {"memory_clock_mhz", run.gpu.memory_clock_mhz},
              {"temperature_c", run.gpu.temperature_c},
              {"driver_version", run.gpu.driver_version}};
  j["eager_library"] = run.eager_library;
  if (run.peaks) j["peaks"] = Json::parse(run.peaks->to_json());
  j["problems"] = Json::array();
  for (const ProblemResult& p : run.problems) {
    Json q;
    q["id"] = p.id;
    q["name"] = p.name;
    q["spec"] = p.spec;
    q["output_shape"] = p.output_shape;
    q["status"] = p.status;
    if (!p.message.empty()) q["message"] = p.message;
    q["schedule"] = p.schedule;
    q["reference"] = p.reference;
    q["bytes"] = p.bytes;
    q["flops"] = p.flops;
    q["floor_ms"] = p.floor_ms;
    q["compute_bound"] = p.compute_bound;
    q["seconds"] = p.seconds;
    q["ours"] = to_json(p.ours);
    if (p.tuned) q["tuned"] = to_json(*p.tuned);
    q["baselines"] = Json::array();
    for (const Contender& b : p.baselines) q["baselines"].push_back(to_json(b));
    j["problems"].push_back(std::move(q));
  }
  return j.dump(indent);
}

SuiteRun load_suite_run(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(path + ": cannot read the results file");
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::exception& e) {
    throw UserError(path + ": not JSON: " + e.what());
  }
  Reader r(path);
  SuiteRun run;
  run.suite = r.text(j, "suite", "the run");
  run.command = j.value("command", "");
  run.commit = j.value("commit", "");
  run.started_at = j.value("started_at", "");
  run.device = r.text(j, "device", "the run");
  if (j.contains("gpu")) {
    const Json& g = j.at("gpu");
    run.gpu.name = g.value("name", "");
    run.gpu.sm_clock_mhz = g.value("sm_clock_mhz", 0);
    run.gpu.max_sm_clock_mhz = g.value("max_sm_clock_mhz", 0);
    run.gpu.memory_clock_mhz = g.value("memory_clock_mhz", 0);
    run.gpu.temperature_c = g.value("temperature_c", 0);
    run.gpu.driver_version = g.value("driver_version", "");
  }
  run.eager_library = j.value("eager_library", "");
  if (j.contains("peaks")) {
    // The peaks object has the layout of a `dragon peaks` file.
    MeasuredPeaks peaks;
    const Json& p = j.at("peaks");
    peaks.device = p.value("device", "");
    peaks.copy_bytes_per_s = r.real(p, "copy_bytes_per_s", "peaks");
    peaks.f32_flops_per_s = r.real(p, "f32_flops_per_s", "peaks");
    peaks.f16_flops_per_s = r.real(p, "f16_flops_per_s", "peaks");
    peaks.bf16_flops_per_s = r.real(p, "bf16_flops_per_s", "peaks");
    peaks.l2_bytes = static_cast<int64_t>(p.value("l2_bytes", 0.0));
    run.peaks = peaks;
  }
  const Json& problems = r.field(j, "problems", "the run");
  if (!problems.is_array()) throw UserError(path + ": field 'problems' is not a list");
  for (size_t i = 0; i < problems.size(); ++i) {
    const Json& q = problems[i];
    std::string where = "problem " + std::to_string(i + 1);
    ProblemResult p;
    p.id = r.text(q, "id", where);
    where = "problem " + p.id;
    p.name = r.text(q, "name", where);
    p.spec = q.value("spec", "");
    p.output_shape = q.value("output_shape", "");
    p.status = r.text(q, "status", where);
    p.message = q.value("message", "");
    p.schedule = q.value("schedule", "");
    p.reference = q.value("reference", "");
    p.bytes = q.value("bytes", 0.0);
    p.flops = q.value("flops", 0.0);
    p.floor_ms = q.value("floor_ms", 0.0);
    p.compute_bound = q.value("compute_bound", false);
    p.seconds = q.value("seconds", 0.0);
    p.ours = r.contender(r.field(q, "ours", where), where + " ours");
    if (q.contains("tuned")) p.tuned = r.contender(q.at("tuned"), where + " tuned");
    for (const Json& b : q.value("baselines", Json::array())) p.baselines.push_back(r.contender(b, where + " baseline"));
    run.problems.push_back(std::move(p));
  }
  return run;
}

}  // namespace dragon::bench
