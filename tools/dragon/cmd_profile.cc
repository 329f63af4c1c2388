// dragon profile: run a CUDA program under the CUPTI injection library and report what
// share of its GPU wall window each kind of kernel takes (or re-analyse a trace folder).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"
#include "dragon/profile/cuda_presence.h"
#include "dragon/profile/report_format.h"
#include "dragon/profile/trace_format.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "dragon/support/subprocess.h"

namespace dragon::cli {
namespace {

struct ProfileOptions {
  std::string out = "dragon-profile";
  std::string from;
  std::string nvtx_range;
  std::string rules;
  std::string injection;
  std::string activities;
  std::vector<std::string> speedups;
  int top = 15;
  std::vector<std::string> command;
};

std::string executable_dir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

std::string quoted(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

bool holds_traces(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return false;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("trace-", 0) == 0) return true;
  }
  return false;
}

// Runs the command under the injection library; returns its exit status.
int record(const ProfileOptions& o) {
  if (o.command.empty()) throw UserError("give the command to profile after --, e.g. dragon profile -- python3 train.py");
  profile::ActivitySelection activities;
  if (!o.activities.empty()) activities = profile::parse_activity_selection(o.activities);
  if (!find_executable(o.command[0])) throw UserError("command not found: " + o.command[0]);
  if (auto why = profile::why_no_cuda_gpu()) throw UserError("dragon profile needs a CUDA GPU: " + *why);
  std::string injection = o.injection.empty() ? executable_dir() + "/libdragon_profile.so" : o.injection;
  if (access(injection.c_str(), R_OK) != 0) {
    throw UserError("injection library " + injection +
                    " not found: it is built only where the CUDA toolkit with CUPTI is found at configure time");
  }
  if (holds_traces(o.out)) {
    throw UserError(o.out + " already holds traces of another run: choose another --out or move them away");
  }
  std::filesystem::create_directories(o.out);
  std::string out_dir = std::filesystem::absolute(o.out).string();
  std::vector<std::pair<std::string, std::string>> environment = {
      {"CUDA_INJECTION64_PATH", std::filesystem::absolute(injection).string()}, {"DRAGON_PROFILE_DIR", out_dir}};
  if (!o.activities.empty()) environment.emplace_back("DRAGON_PROFILE_ACTIVITIES", o.activities);
  // Our own NVTX injection (the same library) from the first NVTX call on, also before
  // CUDA starts; a program's own NVTX tool, if it names one, keeps priority.
  if (activities.nvtx && std::getenv("NVTX_INJECTION64_PATH") == nullptr) {
    environment.emplace_back("NVTX_INJECTION64_PATH", std::filesystem::absolute(injection).string());
  }
  ProcessResult run = run_process(o.command, environment);
  if (!run.started) throw UserError(run.start_error);
  std::fprintf(stderr, "dragon profile: %s ran %.3f s, %s\n", o.command[0].c_str(), run.wall_seconds,
               run.signal ? ("killed by signal " + std::to_string(run.signal)).c_str()
                          : ("exit status " + std::to_string(run.exit_code)).c_str());
  return run.signal ? 128 + run.signal : run.exit_code;
}

int run_profile(const ProfileOptions& o) {
  if (!o.from.empty() && !o.command.empty()) throw UserError("give either --from DIR or a command, not both");
  int command_status = 0;
  std::string dir = o.from;
  if (dir.empty()) {
    command_status = record(o);
    dir = o.out;
  }
  std::vector<profile::ProcessTrace> traces = profile::read_trace_dir(dir);
  profile::KernelClassifier classifier =
      o.rules.empty() ? profile::KernelClassifier::builtin() : profile::KernelClassifier::from_file(o.rules);
  profile::ProfileReport report = profile::analyze(traces, classifier, {o.nvtx_range, o.top});
  std::optional<profile::ProjectionInput> projection;
  if (!o.speedups.empty()) {
    profile::ProjectionInput p;
    for (const std::string& s : o.speedups) p.speedups.push_back(profile::parse_category_speedup(s));
    p.result = profile::project(report, p.speedups);
    projection = p;
  }
  std::string label = o.command.empty() ? "traces in " + dir : quoted(o.command);
  std::fputs(profile::format_report_text(report, projection).c_str(), stdout);
  write_text_file(dir + "/report.json", profile::format_report_json(report, projection, label));
  write_text_file(dir + "/report.html", profile::format_report_html(report, projection, label));
  std::printf("wrote %s/report.json and %s/report.html\n", dir.c_str(), dir.c_str());
  if (command_status != 0) throw UserError("the profiled command failed with status " + std::to_string(command_status));
  return 0;
}

}  // namespace

Command add_profile_command(CLI::App& app) {
  auto o = std::make_shared<ProfileOptions>();
  CLI::App* sub = app.add_subcommand(
      "profile", "Run a CUDA program under CUPTI and report the share of GPU time by kernel category");
  sub->add_option("--out", o->out, "Folder for traces and reports")->capture_default_str();
  sub->add_option("--from", o->from, "Analyse the traces already in this folder instead of running a command");
  sub->add_option("--nvtx-range", o->nvtx_range, "Analyse only inside NVTX ranges with this name");
  sub->add_option("--rules", o->rules, "Kernel category rules (default data/profile/kernel_categories.tsv)");
  sub->add_option("--injection", o->injection, "Path of libdragon_profile.so (default: next to dragon)");
  sub->add_option("--activities", o->activities,
                  "What to record, a comma list of kernel, memcpy, memset, nvtx (default: all)");
  sub->add_option("--speedup", o->speedups,
                  "CATEGORY=SPEEDUP[@WIN_FRACTION], repeatable: project the end-to-end effect (Amdahl)");
  sub->add_option("--top", o->top, "Number of top kernels to list")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("command", o->command, "The command to profile, after --");
  return [o] { return run_profile(*o); };
}

}  // namespace dragon::cli
