// The weak-problem audit under our check and KernelBench's.
#include "dragon/harness/problem_audit.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/harness/kernelbench_check.h"
#include "dragon/harness/reference.h"
#include "dragon/harness/seed_sequence.h"
#include "dragon/harness/trivial_outputs.h"
#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

struct Tally {
  bool ours = true, kernelbench = true, kernelbench_paper = true;
};

bool passes_kernelbench(const TrivialOutput& trivial, const std::vector<ReferenceOutput>& reference, bool paper) {
  for (size_t o = 0; o < reference.size(); ++o) {
    const tensor::HostTensor& native = reference[o].native;
    double tolerance = paper ? kKernelBenchPaperTolerance : kernelbench_head_tolerance(native.dtype());
    if (!kernelbench_allclose(native, trivial.outputs[o], tolerance, tolerance)) return false;
  }
  return true;
}

}  // namespace

bool ProblemAudit::weak() const {
  return std::any_of(trivial_outputs.begin(), trivial_outputs.end(),
                     [](const TrivialOutputAudit& t) { return t.passes_ours; });
}

bool ProblemAudit::weak_under_kernelbench() const {
  return std::any_of(trivial_outputs.begin(), trivial_outputs.end(),
                     [](const TrivialOutputAudit& t) { return t.passes_kernelbench; });
}

const TrivialOutputAudit* ProblemAudit::find(std::string_view name) const {
  for (const TrivialOutputAudit& t : trivial_outputs) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string ProblemAudit::to_text() const {
  std::string text = fmt::format("{}: {}\n{:<40} {:>6} {:>16} {:>22}", function,
                                 weak() ? "WEAK (a trivial output passes our check)" : "not weak", "trivial output",
                                 "ours", "KernelBench HEAD", "KernelBench paper 1e-2");
  auto mark = [](bool passes) { return passes ? "passes" : "fails"; };
  for (const TrivialOutputAudit& t : trivial_outputs) {
    text += fmt::format("\n{:<40} {:>6} {:>16} {:>22}", t.name, mark(t.passes_ours), mark(t.passes_kernelbench),
                        mark(t.passes_kernelbench_paper));
  }
  return text;
}

std::string ProblemAudit::to_json(int indent) const {
  nlohmann::json j;
  j["function"] = function;
  j["weak"] = weak();
  j["weak_under_kernelbench"] = weak_under_kernelbench();
  j["trivial_outputs"] = nlohmann::json::array();
  for (const TrivialOutputAudit& t : trivial_outputs) {
    j["trivial_outputs"].push_back({{"name", t.name},
                                    {"passes_ours", t.passes_ours},
                                    {"passes_kernelbench", t.passes_kernelbench},
                                    {"passes_kernelbench_paper", t.passes_kernelbench_paper}});
  }
  return j.dump(indent);
}

ProblemAudit audit_problem(const ir::PrimFunc& func, const AuditOptions& options) {
  if (options.distributions.empty() || options.kernelbench_trials < 1) {
    throw UserError("audit: needs at least one distribution and one KernelBench trial");
  }
  Reference reference(func, options.reference);
  SeedSequence seeds(options.seed);
  std::vector<std::string> order;  // trivial outputs in the order they were first made
  std::map<std::string, Tally> tallies;
  auto tally = [&](const std::string& name) -> Tally& {
    auto [it, inserted] = tallies.try_emplace(name);
    if (inserted) order.push_back(name);
    return it->second;
  };

  for (interp::Distribution d : options.distributions) {
    std::vector<ReferenceOutput> calibration = reference.compute_native(interp::make_arguments(func, seeds.next(), d));
    std::vector<tensor::HostTensor> args = interp::make_arguments(func, seeds.next(), d);
    std::vector<ReferenceOutput> outputs = reference.compute(args);
    for (const TrivialOutput& trivial : make_trivial_outputs(func, args, outputs, &calibration)) {
      Tally& t = tally(trivial.name);
      t.ours = t.ours && passes_our_check(trivial, outputs);
    }
  }

  // KernelBench: a public seed, torch.rand inputs, the same reference and candidate in
  // every trial; what a cheater learns offline comes from one more rand set.
  std::vector<ReferenceOutput> calibration =
      reference.compute_native(interp::make_arguments(func, seeds.next(), interp::Distribution::kRand));
  for (int trial = 0; trial < options.kernelbench_trials; ++trial) {
    std::vector<tensor::HostTensor> args = interp::make_arguments(func, seeds.next(), interp::Distribution::kRand);
    std::vector<ReferenceOutput> outputs = reference.compute_native(args);
    for (const TrivialOutput& trivial : make_trivial_outputs(func, args, outputs, &calibration)) {
      Tally& t = tally(trivial.name);
      t.kernelbench = t.kernelbench && passes_kernelbench(trivial, outputs, /*paper=*/false);
      t.kernelbench_paper = t.kernelbench_paper && passes_kernelbench(trivial, outputs, /*paper=*/true);
    }
  }

  ProblemAudit audit{func->name, {}};
  for (const std::string& name : order) {
    const Tally& t = tallies.at(name);
    audit.trivial_outputs.push_back({name, t.ours, t.kernelbench, t.kernelbench_paper});
  }
  return audit;
}

}  // namespace dragon::harness
