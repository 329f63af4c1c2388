// dragon: the Little Dragon command line. Exit status 0 success, 1 user error,
// 2 internal error. Only this file decides exit codes.
#include <cstdio>
#include <exception>
#include <vector>

#include "commands.h"
#include "dragon/support/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Little Dragon: tensor programs optimised by schedule scripts"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dragon 0.1.0");

  std::vector<std::pair<CLI::App*, dragon::cli::Command>> commands;
  auto add = [&](dragon::cli::Command (*make)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    dragon::cli::Command run = make(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(run));
  };
#ifdef DRAGON_MODEL_IN_PROCESS
  // dragon-model: the model's commands alone, linked with libtorch (model_binary.h).
  add(dragon::cli::add_train_command);
  add(dragon::cli::add_propose_command);
#else
  add(dragon::cli::add_ops_command);
  add(dragon::cli::add_show_command);
  add(dragon::cli::add_run_command);
  add(dragon::cli::add_apply_command);
  add(dragon::cli::add_profile_command);
  add(dragon::cli::add_script_command);
  add(dragon::cli::add_build_command);
  add(dragon::cli::add_bench_command);
  add(dragon::cli::add_verify_command);
  add(dragon::cli::add_peaks_command);
  add(dragon::cli::add_audit_command);
  add(dragon::cli::add_cost_model_command);
  add(dragon::cli::add_db_command);
  add(dragon::cli::add_tune_command);
  add(dragon::cli::add_best_command);
  add(dragon::cli::add_export_command);
  add(dragon::cli::add_space_command);
  add(dragon::cli::add_train_command);
  add(dragon::cli::add_data_command);
  add(dragon::cli::add_propose_command);
  add(dragon::cli::add_optimize_command);
  add(dragon::cli::add_evaluate_command);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : 1;
  }
  try {
    for (auto& [sub, run] : commands) {
      if (sub->parsed()) return run();
    }
    return 1;
  } catch (const dragon::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const dragon::InternalError& e) {
    std::fprintf(stderr, "%s\n(this is a bug in Little Dragon)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n(this is a bug in Little Dragon)\n", e.what());
    return 2;
  }
}
