// Subcommands of the dragon CLI. Each file adds its subcommand to the app and returns
// the function that runs it once arguments are parsed.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace dragon::cli {

// Runs a parsed subcommand; returns the process exit status.
using Command = std::function<int()>;

Command add_apply_command(CLI::App& app);
Command add_ops_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_profile_command(CLI::App& app);
Command add_script_command(CLI::App& app);
Command add_build_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_verify_command(CLI::App& app);
Command add_peaks_command(CLI::App& app);
Command add_audit_command(CLI::App& app);
Command add_cost_model_command(CLI::App& app);
Command add_db_command(CLI::App& app);
Command add_best_command(CLI::App& app);
Command add_export_command(CLI::App& app);  // cmd_export.cc
Command add_tune_command(CLI::App& app);
Command add_space_command(CLI::App& app);
Command add_train_command(CLI::App& app);
Command add_data_command(CLI::App& app);  // cmd_data.cc
Command add_propose_command(CLI::App& app);
Command add_optimize_command(CLI::App& app);
Command add_evaluate_command(CLI::App& app);  // cmd_evaluate.cc

}  // namespace dragon::cli
