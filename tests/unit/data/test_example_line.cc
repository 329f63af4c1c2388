// An example's JSON line (data/example.h): it round-trips; it carries the SFT trainer's
// fields under the trainer's names first; a malformed line is a user error naming the
// origin and line, with the reason.
#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "dragon/data/example.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

Example refinement() {
  Example e;
  e.kind = ExampleKind::kRefinement;
  e.spec = "softmax:shape=16x256";
  e.hash = 0x00ff00ff00ff00ffull;
  e.family = "llama";
  e.split = Split::kHeldOut;
  e.existing_script = "b0 = get_block \"T\"\n";
  e.script = "b0 = get_block \"U\"\n";
  e.target_latency = Latency{0.125, db::LatencySummary::Interval{0.12, 0.13}, 40};
  e.prompt_latency = Latency{0.3125, db::LatencySummary::Interval{0.3, 0.33}, 17};
  return e;
}

std::string example_line_error(const std::string& line) {
  try {
    parse_example_line(line, "shard-0-of-1.jsonl.zst", 17);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ExampleLine, RoundTrips) {
  Example r = refinement();
  EXPECT_EQ(parse_example_line(to_json_line(r), "x", 1), r);
  Example c = r;
  c.kind = ExampleKind::kConstruction;
  c.existing_script.reset();
  c.prompt_latency.reset();
  c.target_latency.ci95.reset();
  EXPECT_EQ(parse_example_line(to_json_line(c), "x", 1), c);
}

TEST(ExampleLine, CarriesTheSftFieldsFirstThenWhatWasMeasured) {
  const std::string line = to_json_line(refinement());
  EXPECT_EQ(line.find('\n'), std::string::npos);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"task", "prompt", "workload", "existing_script", "script", "hash", "split",
                                            "family", "target_latency", "prompt_latency", "speedup"}));
  EXPECT_EQ(j["task"], "refinement");
  EXPECT_EQ(j["prompt"], "ir");
  EXPECT_EQ(j["workload"], "softmax:shape=16x256");
  EXPECT_EQ(j["hash"], "00ff00ff00ff00ff");
  EXPECT_EQ(j["split"], "held_out");
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.5);
  EXPECT_EQ(j["target_latency"]["ci95_ms"], nlohmann::json::array({0.12, 0.13}));
}

TEST(ExampleLine, MalformedLinesNameTheirPlaceAndReason) {
  const std::string good = to_json_line(refinement());
  auto edited = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(good);
    edit(j);
    return example_line_error(j.dump());
  };
  EXPECT_NE(example_line_error("{\"task\": ").find("shard-0-of-1.jsonl.zst:17: not JSON"), std::string::npos);
  EXPECT_NE(example_line_error("[1]").find(":17: expected a JSON object"), std::string::npos);
  EXPECT_NE(edited([](auto& j) { j.erase("existing_script"); }).find("a refinement needs 'existing_script'"),
            std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["task"] = "construction"; }).find("a construction has no 'existing_script'"),
            std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["task"] = "tuning"; }).find("task 'tuning'"), std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["split"] = "test"; }).find("split 'test'"), std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["hash"] = "xyz"; }).find(":17:"), std::string::npos);
  EXPECT_NE(edited([](auto& j) { j.erase("family"); }).find("missing 'family'"), std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["speedup"] = 3.0; }).find("'speedup' 3 is not prompt median / target median"),
            std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["target_latency"]["median_ms"] = -1; }).find("not a positive finite number"),
            std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["target_latency"]["ci95_ms"] = {0.2, 0.3}; }).find("does not contain the median"),
            std::string::npos);
  EXPECT_NE(edited([](auto& j) { j.erase("prompt_latency"); }).find("a refinement needs 'prompt_latency'"),
            std::string::npos);
  EXPECT_NE(edited([](auto& j) { j["prompt"] = "spec"; }).find("prompt 'spec'"), std::string::npos);
}

TEST(ExampleLine, ThePromptIsTheCanonicalIrOfTheSpec) {
  const std::string prompt = prompt_text("matmul:m=32,n=32,k=32");
  EXPECT_EQ(prompt, prompt_text("matmul:m=32,n=32,k=32"));
  EXPECT_NE(prompt.find("32"), std::string::npos);
  Example e = refinement();
  script::Example t = tokenizer_example(e, prompt);
  EXPECT_EQ(t.prompt, prompt);
  EXPECT_EQ(t.existing_script, e.existing_script);
  EXPECT_EQ(t.script, e.script);
  EXPECT_THROW(prompt_text("no_such_op:x=1"), UserError);
}

}  // namespace
}  // namespace dragon::data
