// dragon cost-model eval: how well the learned cost model ranks measured records it did
// not train on (pairwise accuracy, TVM's top-k score), beside the random model.
// dragon cost-model features: the feature rows of one scheduled function, by column name.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script_file.h"
#include "dragon/search/cost_model.h"
#include "dragon/search/cost_model_eval.h"
#include "dragon/search/measured_records.h"
#include "dragon/search/program_features.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

struct EvalOptions {
  std::string records;
  double train_fraction = 0.5;
  std::string hold_out = "records";
  uint64_t seed = 1;
  int threads = 1;
  bool json = false;
};

nlohmann::json report_json(const search::RankingReport& r) {
  nlohmann::json top = nlohmann::json::object();
  for (const auto& [k, v] : r.top_k) top[std::to_string(k)] = v;
  return {{"train_records", r.train_records}, {"test_records", r.test_records},   {"groups", r.groups},
          {"pairwise_accuracy", r.pairwise_accuracy}, {"top_k", top},            {"train_seconds", r.train_seconds},
          {"predict_seconds", r.predict_seconds}};
}

int eval(const EvalOptions& options) {
  std::vector<search::MeasuredRecord> records = search::read_measured_records(options.records);
  if (records.empty()) throw UserError(options.records + ": no records");
  std::vector<search::FeaturizedCandidate> rows = search::featurize_records(records);
  search::RankingOptions ranking;
  ranking.train_fraction = options.train_fraction;
  ranking.hold_out = options.hold_out == "workloads" ? search::HoldOut::kWorkloads : search::HoldOut::kRecords;
  ranking.seed = options.seed;
  search::XgbCostModelOptions xgb_options;
  xgb_options.min_training_records = 1;  // train on whatever the split gives
  xgb_options.threads = options.threads;
  search::XgbCostModel xgb(xgb_options);
  search::RankingReport learned = search::evaluate_ranking(xgb, rows, ranking);
  search::RandomCostModel random(options.seed);
  search::RankingReport baseline = search::evaluate_ranking(random, rows, ranking);
  if (options.json) {
    nlohmann::json out = {{"records", options.records}, {"hold_out", options.hold_out},
                          {"train_fraction", options.train_fraction}, {"seed", options.seed},
                          {"xgb", report_json(learned)}, {"xgb_rounds", xgb.rounds()},
                          {"random", report_json(baseline)}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%s: %zu records, held out by %s (train fraction %.2f, seed %llu)\n", options.records.c_str(),
              records.size(), options.hold_out.c_str(), options.train_fraction,
              static_cast<unsigned long long>(options.seed));
  std::printf("train %lld, test %lld records in %lld groups\n", static_cast<long long>(learned.train_records),
              static_cast<long long>(learned.test_records), static_cast<long long>(learned.groups));
  std::printf("%-8s %9s %7s %7s %7s %9s\n", "model", "pairwise", "top-1", "top-5", "top-32", "train s");
  for (auto [name, r] : {std::pair{"xgb", &learned}, std::pair{"random", &baseline}}) {
    std::printf("%-8s %9.3f %7.3f %7.3f %7.3f %9.2f\n", name, r->pairwise_accuracy, r->top_k.at(1), r->top_k.at(5),
                r->top_k.at(32), r->train_seconds);
  }
  std::printf("xgb kept %d boosting rounds\n", xgb.rounds());
  return 0;
}

struct FeaturesOptions {
  std::string spec;
  std::string script;
  std::string target = "cpu";
  bool all = false;
};

int features(const FeaturesOptions& options) {
  ir::PrimFunc func = ops::OpRegistry::global().make_workload(options.spec).func;
  if (!options.script.empty()) func = script::replay(func, script::load(options.script)).func();
  search::ProgramFeatures f = search::extract_program_features(func, search::parse_record_target(options.target));
  const auto& names = search::feature_names();
  for (int64_t r = 0; r < f.rows(); ++r) {
    std::printf("row %lld\n", static_cast<long long>(r));
    for (size_t c = 0; c < names.size(); ++c) {
      const float v = f.row(r)[c];
      if (v != 0 || options.all) std::printf("  %-36s %10.4f\n", names[c].c_str(), v);
    }
  }
  return 0;
}

}  // namespace

Command add_cost_model_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("cost-model", "The search's learned cost model: evaluate it, show features");
  sub->require_subcommand(1);
  auto eval_options = std::make_shared<EvalOptions>();
  CLI::App* e = sub->add_subcommand("eval", "Train on part of measured records, report ranking quality on the rest");
  e->add_option("--records", eval_options->records, "Measured records, JSON Lines (search/measured_records.h)")
      ->required();
  e->add_option("--train-fraction", eval_options->train_fraction, "Fraction used for training")->capture_default_str();
  e->add_option("--hold-out", eval_options->hold_out,
                "records: hold out part of every workload's records; workloads: hold out whole workloads")
      ->check(CLI::IsMember({"records", "workloads"}))
      ->capture_default_str();
  e->add_option("--seed", eval_options->seed, "Seed of the split and the random model")->capture_default_str();
  e->add_option("--threads", eval_options->threads, "XGBoost threads (0: all cores)")->capture_default_str();
  e->add_flag("--json", eval_options->json, "Print JSON");
  auto features_options = std::make_shared<FeaturesOptions>();
  CLI::App* f = sub->add_subcommand("features", "Print the per-store feature rows of a scheduled op (non-zero columns)");
  f->add_option("spec", features_options->spec, "Op spec")->required();
  f->add_option("--script", features_options->script, "Schedule script to apply first");
  f->add_option("--target", features_options->target, "cpu or cuda")->capture_default_str();
  f->add_flag("--all", features_options->all, "Print zero columns too");
  return [sub, e, eval_options, features_options]() {
    if (e->parsed()) return eval(*eval_options);
    return features(*features_options);
  };
}

}  // namespace dragon::cli
