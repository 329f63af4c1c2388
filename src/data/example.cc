// An example's JSON line, both ways, and its prompt under the model's tokenizer.
#include "dragon/data/example.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/support/error.h"

namespace dragon::data {
namespace {

using Json = nlohmann::ordered_json;

Json latency_json(const Latency& latency) {
  Json j;
  j["median_ms"] = latency.median_ms;
  if (latency.ci95) j["ci95_ms"] = Json::array({latency.ci95->low_ms, latency.ci95->high_ms});
  j["samples"] = latency.samples;
  return j;
}

// Reads the fields of one line, failing with "ORIGIN:LINE: why".
class LineReader {
 public:
  LineReader(const nlohmann::json& j, std::string_view origin, int line_number)
      : j_(j), origin_(origin), line_number_(line_number) {}

  UserError fail(std::string_view why) const { return UserError(fmt::format("{}:{}: {}", origin_, line_number_, why)); }

  std::optional<std::string> text(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    if (!j_[key].is_string()) throw fail(fmt::format("'{}' is not a string", key));
    return j_[key].get<std::string>();
  }
  std::string required_text(const char* key) const {
    std::optional<std::string> value = text(key);
    if (!value) throw fail(fmt::format("missing '{}'", key));
    return *value;
  }
  double positive(const nlohmann::json& v, const std::string& what) const {
    if (!v.is_number()) throw fail(fmt::format("'{}' is not a number", what));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x <= 0) throw fail(fmt::format("'{}' is {}, not a positive finite number", what, x));
    return x;
  }
  std::optional<Latency> latency(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    const nlohmann::json& v = j_[key];
    if (!v.is_object()) throw fail(fmt::format("'{}' is not an object", key));
    Latency l;
    if (!v.contains("median_ms")) throw fail(fmt::format("'{}' has no 'median_ms'", key));
    l.median_ms = positive(v["median_ms"], fmt::format("{}.median_ms", key));
    if (!v.contains("samples") || !v["samples"].is_number_integer() || v["samples"].get<int64_t>() < 1) {
      throw fail(fmt::format("'{}.samples' is not a positive integer", key));
    }
    l.samples = v["samples"].get<int64_t>();
    if (v.contains("ci95_ms")) {
      const nlohmann::json& ci = v["ci95_ms"];
      if (!ci.is_array() || ci.size() != 2) throw fail(fmt::format("'{}.ci95_ms' is not [low, high]", key));
      l.ci95 = db::LatencySummary::Interval{positive(ci[0], fmt::format("{}.ci95_ms[0]", key)),
                                            positive(ci[1], fmt::format("{}.ci95_ms[1]", key))};
      if (!(l.ci95->low_ms <= l.median_ms && l.median_ms <= l.ci95->high_ms)) {
        throw fail(fmt::format("'{}.ci95_ms' [{}, {}] does not contain the median {}", key, l.ci95->low_ms,
                               l.ci95->high_ms, l.median_ms));
      }
    }
    return l;
  }

 private:
  const nlohmann::json& j_;
  std::string_view origin_;
  int line_number_;
};

}  // namespace

std::string_view example_kind_id(ExampleKind kind) {
  return kind == ExampleKind::kConstruction ? "construction" : "refinement";
}

std::optional<Latency> Latency::of(const db::Record& record) {
  std::optional<db::LatencySummary> summary = record.latency();
  if (!summary) return std::nullopt;
  return Latency{summary->median_ms, summary->median_ci95, summary->samples};
}

bool Latency::operator==(const Latency& other) const {
  if (median_ms != other.median_ms || samples != other.samples || ci95.has_value() != other.ci95.has_value()) {
    return false;
  }
  return !ci95 || (ci95->low_ms == other.ci95->low_ms && ci95->high_ms == other.ci95->high_ms);
}

std::optional<double> Example::speedup() const {
  if (!prompt_latency) return std::nullopt;
  return prompt_latency->median_ms / target_latency.median_ms;
}

std::string to_json_line(const Example& example) {
  Json j;
  // The SFT trainer's fields first (model/sft_data.h), spelled as it spells them.
  j["task"] = std::string(example_kind_id(example.kind));
  j["prompt"] = "ir";
  j["workload"] = example.spec;
  if (example.existing_script) j["existing_script"] = *example.existing_script;
  j["script"] = example.script;
  j["hash"] = db::format_workload_hash(example.hash);
  j["split"] = std::string(split_id(example.split));
  j["family"] = example.family;
  j["target_latency"] = latency_json(example.target_latency);
  if (example.prompt_latency) {
    j["prompt_latency"] = latency_json(*example.prompt_latency);
    j["speedup"] = *example.speedup();
  }
  return j.dump();
}

Example parse_example_line(std::string_view line, std::string_view origin, int line_number) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}:{}: not JSON ({})", origin, line_number, e.what()));
  }
  LineReader r(j, origin, line_number);
  if (!j.is_object()) throw r.fail("expected a JSON object");
  Example e;
  const std::string task = r.required_text("task");
  if (task == "construction") e.kind = ExampleKind::kConstruction;
  else if (task == "refinement") e.kind = ExampleKind::kRefinement;
  else throw r.fail(fmt::format("task '{}' is neither 'construction' nor 'refinement'", task));
  if (const std::string prompt = r.text("prompt").value_or("ir"); prompt != "ir") {
    throw r.fail(fmt::format("prompt '{}': the data set's prompts are 'ir'", prompt));
  }
  e.spec = r.required_text("workload");
  e.existing_script = r.text("existing_script");
  e.script = r.required_text("script");
  if (e.kind == ExampleKind::kRefinement && !e.existing_script) throw r.fail("a refinement needs 'existing_script'");
  if (e.kind == ExampleKind::kConstruction && e.existing_script) throw r.fail("a construction has no 'existing_script'");
  try {
    e.hash = db::parse_workload_hash(r.required_text("hash"));
  } catch (const UserError& error) {
    throw r.fail(error.what());
  }
  const std::string split = r.required_text("split");
  std::optional<Split> parsed_split = parse_split(split);
  if (!parsed_split) throw r.fail(fmt::format("split '{}' is not train, validation or held_out", split));
  e.split = *parsed_split;
  e.family = r.required_text("family");
  std::optional<Latency> target = r.latency("target_latency");
  if (!target) throw r.fail("missing 'target_latency'");
  e.target_latency = *target;
  e.prompt_latency = r.latency("prompt_latency");
  if (e.kind == ExampleKind::kRefinement && !e.prompt_latency) throw r.fail("a refinement needs 'prompt_latency'");
  if (e.prompt_latency) {
    if (!j.contains("speedup")) throw r.fail("missing 'speedup'");
    const double speedup = r.positive(j["speedup"], "speedup");
    const double expected = *e.speedup();
    if (std::abs(speedup - expected) > 1e-9 * expected) {
      throw r.fail(fmt::format("'speedup' {} is not prompt median / target median ({})", speedup, expected));
    }
  } else if (j.contains("speedup")) {
    throw r.fail("'speedup' without 'prompt_latency'");
  }
  return e;
}

script::Example tokenizer_example(const Example& example, std::string prompt) {
  script::Example out;
  out.prompt = std::move(prompt);
  out.existing_script = example.existing_script;
  out.script = example.script;
  return out;
}

}  // namespace dragon::data
