// The full corpus stands in for the workloads nobody has shown us (held-out model
// families, other projects' kernels): its shapes are sampled, so they reach corners the
// suites do not (degenerate transposed convolutions, i64 gathers, extents near 2^31). A
// fixed sample of it, every 150th of its ~90,000 workloads (DRAGON_CORPUS_SAMPLE_EVERY=N:
// every Nth, 1 for all of them, about 25 minutes), goes through the default schedule and the
// design space for the H200 without running anything:
// - the default schedule lowers, every time (a workload the default cannot build is one
//   `dragon build` and `dragon optimize` cannot start from);
// - sampling candidates and lowering them never fails inside (an InternalError);
// - the candidates the postprocessors pass lower, but for a few: what the postprocessors
//   miss costs a build, and must stay rare (the count is printed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "dragon/data/corpus.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

TEST(CorpusSample, DefaultsLowerAndCandidatesLowerOrAreRefusedCleanly) {
  data::CorpusOptions options;
  options.corpus_dir = std::string(DRAGON_SOURCE_DIR) + "/data/corpus";
  const data::Corpus corpus = data::build_corpus("full", options);
  const lower::Target target = lower::Target::cuda_h200();
  const RuleSet& rules = RuleSet::for_target(target);
  const char* every_text = std::getenv("DRAGON_CORPUS_SAMPLE_EVERY");
  const size_t every = every_text != nullptr && std::atoi(every_text) > 0 ? static_cast<size_t>(std::atoi(every_text)) : 150;
  int workloads = 0, passed = 0, not_lowered = 0;
  std::map<std::string, int> refused;  // "kind in stage" of candidates the space refused
  for (size_t i = 0; i < corpus.entries.size(); i += every) {
    const std::string& spec = corpus.entries[i].spec;
    SCOPED_TRACE(spec);
    ++workloads;
    try {
      const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
      const schedule::Schedule defaults = default_schedule(func, target);
      try {
        lower::lower(defaults.func(), target);
      } catch (const UserError& e) {
        ADD_FAILURE() << "the default schedule does not lower: " << e.what() << "\n" << defaults.trace().to_string();
      }
      const std::vector<Sketch> sketches = generate_design_space(func, target, rules, 7);
      for (int k = 0; k < 2 && !sketches.empty(); ++k) {
        CandidateResult r = sample_candidate(sketches[static_cast<size_t>(k) % sketches.size()], func, target, rules, 100 + k);
        if (!r.ok()) {
          ++refused[std::string(failure_kind_name(r.failure().kind)) + " in " + r.failure().stage];
          continue;
        }
        ++passed;
        try {
          lower::lower(r.candidate().func, target);
        } catch (const UserError& e) {
          ++not_lowered;
          std::printf("passed the postprocessors, does not lower: %s: %s\n", spec.c_str(), e.what());
        }
      }
    } catch (const InternalError& e) {
      ADD_FAILURE() << "internal error: " << e.what();
    }
  }
  std::printf("%d workloads; %d candidates passed the postprocessors, %d of them do not lower", workloads, passed,
              not_lowered);
  for (const auto& [kind, n] : refused) std::printf("; %d %s", n, kind.c_str());
  std::printf("\n");
  EXPECT_GE(workloads, 50000 / static_cast<int>(every));
  EXPECT_GE(passed, workloads);
  EXPECT_LE(not_lowered * 100, passed);  // under 1%
}

}  // namespace
}  // namespace dragon::search
