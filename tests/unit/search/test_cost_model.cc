// The cost models: XGBoost learns a synthetic ranking (latency a known function of the
// features) to high pairwise accuracy on held-out programs; training and prediction are
// deterministic for a seed; save/load gives identical predictions; the cold start is
// random; a corrupt model file is a UserError naming what is wrong. Also the ranking
// metrics on hand-made cases and candidates scored end to end from scheduled functions.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "dragon/ops/te.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/cost_model.h"
#include "dragon/search/cost_model_eval.h"
#include "dragon/search/measured_records.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

// Programs of random feature rows, as many rows as their workload has stores (1, 2, 3
// and 1 for the four workloads, as every schedule of a workload keeps its stores); the
// latency depends on a few columns of each row (a sum over rows, as PackSum assumes) with
// a threshold and a product, plus 2% noise, on a different scale per workload.
std::vector<FeaturizedCandidate> synthetic_records(int count, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 8.0f);
  std::normal_distribution<double> noise(0.0, 0.02);
  const int cols = feature_count();
  std::vector<FeaturizedCandidate> out;
  for (int p = 0; p < count; ++p) {
    FeaturizedCandidate c;
    c.workload = "w" + std::to_string(p % 4);
    c.target = "cpu";
    const int n = 1 + (p % 4) % 3;
    double cost = 0;
    for (int r = 0; r < n; ++r) {
      std::vector<float> row(static_cast<size_t>(cols));
      for (int k = 0; k < 24; ++k) row[static_cast<size_t>(k)] = uniform(engine);  // the rest stays 0, as most columns of a real row do
      cost += row[0] + 0.5 * row[3] + (row[10] > 4 ? 3.0 : 0.0) + 0.25 * row[20] * row[21] / 8;
      c.features.values.insert(c.features.values.end(), row.begin(), row.end());
    }
    c.latency_s = (1 + p % 4) * 1e-3 * std::exp(cost / 8) * (1 + noise(engine));
    out.push_back(std::move(c));
  }
  return out;
}

XgbCostModelOptions small_options() {
  XgbCostModelOptions o;
  o.min_training_records = 50;
  o.max_rounds = 150;  // keeps each training at a second or two on a loaded 2-core machine
  return o;
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("dragon_cost_model_" + std::to_string(::getpid()) + "_" + name);
}

TEST(RankingMetrics, HandMadeCases) {
  // Labels 1, 0.5, 0.25 (latencies 1, 2, 4). A perfect order, a reversed one, ties.
  const std::vector<double> labels = {1.0, 0.5, 0.25};
  EXPECT_DOUBLE_EQ(*pairwise_accuracy({3, 2, 1}, labels), 1.0);
  EXPECT_DOUBLE_EQ(*pairwise_accuracy({1, 2, 3}, labels), 0.0);
  EXPECT_DOUBLE_EQ(*pairwise_accuracy({1, 1, 1}, labels), 0.5);
  EXPECT_DOUBLE_EQ(*pairwise_accuracy({3, 1, 2}, labels), 2.0 / 3);
  EXPECT_FALSE(pairwise_accuracy({1, 2}, {0.5, 0.5}).has_value());
  // Top-1 picks the program of label 0.25: best latency 1 over its latency 4.
  EXPECT_DOUBLE_EQ(top_k_score({1, 2, 3}, labels, 1), 0.25);
  EXPECT_DOUBLE_EQ(top_k_score({1, 2, 3}, labels, 2), 0.5);
  EXPECT_DOUBLE_EQ(top_k_score({1, 2, 3}, labels, 3), 1.0);
  EXPECT_DOUBLE_EQ(top_k_score({1, 2, 3}, labels, 32), 1.0);
  // a-peak@3 of that order: (0.25 + 0.5 + 1) / 3.
  EXPECT_DOUBLE_EQ(average_peak_score({1, 2, 3}, labels, 3), 1.75 / 3);
  // Labels: best of the group over each latency; a failure is 0; groups apart.
  std::vector<double> l = workload_labels({"a", "a", "b", "a", "b"}, {2.0, 4.0, 3.0, std::nullopt, 6.0});
  EXPECT_EQ(l, (std::vector<double>{1.0, 0.5, 1.0, 0.0, 0.5}));
}

TEST(XgbCostModel, LearnsASyntheticRankingOnHeldOutPrograms) {
  std::vector<FeaturizedCandidate> records = synthetic_records(1000, 3);
  XgbCostModel model(small_options());
  RankingReport report = evaluate_ranking(model, records, {.train_fraction = 0.5, .seed = 5});
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(report.train_records, 500);
  EXPECT_EQ(report.test_records, 500);
  EXPECT_EQ(report.groups, 4);
  // Measured: pairwise 0.777, top-1 0.946, top-5 0.983. Depths 4-10 and min_child_weight
  // 0-1 all gave 0.775-0.796, so the trees' parameters are not what limits it; a likely
  // cause (not measured) is that PackSum sums rows while this label is a product over rows.
  EXPECT_GT(report.pairwise_accuracy, 0.75) << "rounds " << model.rounds();
  EXPECT_GT(report.top_k.at(1), 0.8);
  EXPECT_GT(report.top_k.at(5), 0.9);
  // The random model, on the same split, is near one half.
  RandomCostModel random(1);
  RankingReport baseline = evaluate_ranking(random, records, {.train_fraction = 0.5, .seed = 5});
  EXPECT_NEAR(baseline.pairwise_accuracy, 0.5, 0.08);
  EXPECT_GT(report.pairwise_accuracy, baseline.pairwise_accuracy + 0.2);
}

TEST(XgbCostModel, DeterministicForASeed) {
  std::vector<FeaturizedCandidate> records = synthetic_records(200, 4);
  std::vector<FeaturizedCandidate> probe = synthetic_records(40, 9);
  XgbCostModel a(small_options()), b(small_options());
  a.update(records);
  b.update(records);
  EXPECT_EQ(a.predict(probe), b.predict(probe));
  EXPECT_EQ(a.rounds(), b.rounds());
}

TEST(XgbCostModel, RandomUntilEnoughRecordsThenRetrainsOnGrowth) {
  XgbCostModelOptions options = small_options();
  options.min_training_records = 100;
  XgbCostModel model(options);
  std::vector<FeaturizedCandidate> records = synthetic_records(140, 6);
  std::vector<FeaturizedCandidate> probe = synthetic_records(20, 7);
  model.update(std::vector<FeaturizedCandidate>(records.begin(), records.begin() + 99));
  EXPECT_FALSE(model.trained());
  RandomCostModel random(options.seed);
  EXPECT_EQ(model.predict(probe), random.predict(probe));
  model.update(std::vector<FeaturizedCandidate>(records.begin() + 99, records.begin() + 100));
  EXPECT_TRUE(model.trained());
  const std::vector<double> first = model.predict(probe);
  // 110 records: less than 20% more than 100, no retraining.
  model.update(std::vector<FeaturizedCandidate>(records.begin() + 100, records.begin() + 110));
  EXPECT_EQ(model.predict(probe), first);
  EXPECT_EQ(model.training_records(), 110);
  // 120: retrained on everything.
  model.update(std::vector<FeaturizedCandidate>(records.begin() + 110, records.begin() + 120));
  EXPECT_NE(model.predict(probe), first);
}

TEST(XgbCostModel, SaveLoadRoundTripPredictsIdentically) {
  std::vector<FeaturizedCandidate> records = synthetic_records(150, 8);
  std::vector<FeaturizedCandidate> probe = synthetic_records(30, 10);
  XgbCostModel model(small_options());
  model.update(records);
  ASSERT_TRUE(model.trained());
  const std::filesystem::path path = temp_file("roundtrip.bin");
  model.save(path);
  XgbCostModel loaded(small_options());
  loaded.load(path);
  EXPECT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.training_records(), 150);
  EXPECT_EQ(loaded.rounds(), model.rounds());
  EXPECT_EQ(loaded.predict(probe), model.predict(probe));
  // Resuming: the loaded model retrains on the saved records plus new ones like the
  // original would.
  std::vector<FeaturizedCandidate> more = synthetic_records(40, 11);
  model.update(more);
  loaded.update(more);
  EXPECT_EQ(loaded.predict(probe), model.predict(probe));
  std::filesystem::remove(path);

  RandomCostModel random(3);
  random.predict(probe);
  random.save(path);
  RandomCostModel random_loaded(99);
  random_loaded.load(path);
  EXPECT_EQ(random_loaded.predict(probe), random.predict(probe));
  std::filesystem::remove(path);
}

// The UserError's message when loading `path`, or "" when it loads.
std::string load_error(const std::filesystem::path& path) {
  XgbCostModel model(small_options());
  try {
    model.load(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(XgbCostModel, CorruptFilesAreUserErrors) {
  XgbCostModel model(small_options());
  model.update(synthetic_records(60, 12));
  const std::filesystem::path good = temp_file("good.bin"), bad = temp_file("bad.bin");
  model.save(good);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& content) {
    std::ofstream out(bad, std::ios::binary | std::ios::trunc);
    out << content;
  };
  EXPECT_NE(load_error(temp_file("missing.bin")).find("cannot open"), std::string::npos);
  write("hello, not a model");
  EXPECT_NE(load_error(bad).find("not a Little Dragon cost model"), std::string::npos);
  write(bytes.substr(0, bytes.size() / 2));
  const std::string truncated = load_error(bad);
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find(bad.string()), std::string::npos) << truncated;
  // Damage inside the XGBoost model (the file's last part): XGBoost refuses it.
  std::string damaged = bytes;
  for (size_t i = damaged.size() - 200; i < damaged.size() - 20; ++i) damaged[i] = static_cast<char>(0x5a);
  write(damaged);
  EXPECT_NE(load_error(bad).find("XGBoost model"), std::string::npos) << load_error(bad);
  write(bytes + "x");
  EXPECT_NE(load_error(bad).find("unexpected bytes"), std::string::npos);
  RandomCostModel random;
  EXPECT_THROW(random.load(good), UserError);  // an xgb file is not a random model's
  EXPECT_EQ(load_error(good), "");
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

TEST(CostModel, ScoresScheduledCandidatesEndToEnd) {
  // A copy with different inner-loop orders: the model is fed the real features and
  // latencies that favour the contiguous one; it must rank it first on fresh copies.
  auto copy = [](bool swap, int64_t inner) {
    ops::FunctionBuilder fb("copy");
    ops::Tensor in = fb.input("A", ir::DataType::f32(), {64, 64});
    ops::Tensor out = fb.compute("B", {64, 64}, [&](const ops::IndexVars& i) { return in(i[0], i[1]); });
    schedule::Schedule sch(fb.build({out}));
    std::vector<schedule::LoopRV> loops = sch.get_loops(sch.get_block("B"));
    std::vector<schedule::LoopRV> j = sch.split(loops[1], {schedule::None{}, inner});
    if (swap) sch.reorder({j[1], loops[0]});
    return sch.func();
  };
  std::vector<MeasuredCandidate> measured;
  for (int64_t inner : {1, 2, 4, 8, 16, 32, 64}) {
    for (bool swap : {false, true}) {
      measured.push_back({{copy(swap, inner), "copy", lower::Target::cpu()}, swap ? 4e-3 * (1 + 1.0 / static_cast<double>(inner)) : 1e-3});
    }
  }
  XgbCostModelOptions options = small_options();
  options.min_training_records = 10;
  XgbCostModel model(options);
  model.update(measured);
  ASSERT_TRUE(model.trained());
  std::vector<double> scores = model.predict(std::vector<Candidate>{
      {copy(false, 8), "copy", lower::Target::cpu()}, {copy(true, 1), "copy", lower::Target::cpu()}});
  EXPECT_GT(scores[0], scores[1]);
}

TEST(CostModel, FeaturizeOnThreadsMatchesOneThread) {
  // Random schedules of a GEMM share IR with the unscheduled function; extracting on four
  // threads must give exactly the rows of one thread, in candidate order.
  ops::FunctionBuilder fb("gemm");
  ops::Tensor a = fb.input("A", ir::DataType::f32(), {32, 32});
  ops::Tensor b = fb.input("B", ir::DataType::f32(), {32, 32});
  ops::Tensor c = fb.reduce("C", {32, 32}, {32}, ir::DataType::f32(), ops::Reducer::sum(),
                            [&](const ops::IndexVars& i, const ops::IndexVars& r) { return a(i[0], r[0]) * b(r[0], i[1]); });
  const ir::PrimFunc func = fb.build({c});
  std::vector<Candidate> candidates;
  for (int64_t inner : {1, 2, 4, 8, 16, 32}) {
    for (bool gpu : {false, true}) {
      schedule::Schedule sch(func);
      std::vector<schedule::LoopRV> loops = sch.get_loops(sch.get_block("C"));
      std::vector<schedule::LoopRV> i = sch.split(loops[0], {schedule::None{}, inner});
      if (gpu) {
        sch.bind(i[0], "blockIdx.x");
        sch.bind(i[1], "threadIdx.x");
      }
      candidates.push_back({sch.func(), "gemm", gpu ? lower::Target::cuda_h200() : lower::Target::cpu()});
    }
  }
  std::vector<FeaturizedCandidate> serial = featurize(candidates, 1), threaded = featurize(candidates, 4);
  ASSERT_EQ(serial.size(), candidates.size());
  for (size_t k = 0; k < candidates.size(); ++k) {
    EXPECT_GT(serial[k].features.rows(), 0) << k;
    EXPECT_EQ(serial[k].features.values, threaded[k].features.values) << k;
    EXPECT_EQ(threaded[k].target, candidates[k].target.to_string()) << k;
  }
}

TEST(MeasuredRecords, RoundTripReplayAndErrorsWithLineNumbers) {
  const std::filesystem::path path = temp_file("records.jsonl");
  {
    std::ofstream out(path);
    // The unscheduled matmul (empty script) measured, and one that failed.
    write_measured_record(out, {"matmul:m=16,n=16,k=16", "cpu", "", 2e-3, ""});
    write_measured_record(out, {"matmul:m=16,n=16,k=16", "cuda", "", std::nullopt, "build: too many threads"});
  }
  std::vector<MeasuredRecord> records = read_measured_records(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].latency_s, 2e-3);
  EXPECT_FALSE(records[1].latency_s.has_value());
  EXPECT_EQ(records[1].error, "build: too many threads");
  std::vector<FeaturizedCandidate> rows = featurize_records(records, 1);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].features.rows(), 1);  // the update C += A * B
  EXPECT_EQ(rows[0].features.at(0, "is_gpu"), 0);
  EXPECT_EQ(rows[1].features.at(0, "is_gpu"), 1);
  EXPECT_EQ(rows[1].target, "cuda");
  {
    std::ofstream out(path, std::ios::app);
    out << "{\"workload\": \"matmul\"}\n";
  }
  try {
    read_measured_records(path);
    FAIL() << "a record without target and script was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":3:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_record_target("tpu"), UserError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace dragon::search
