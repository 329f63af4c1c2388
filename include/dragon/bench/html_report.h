// The HTML report of a suite run: one self-contained page (no network: inline CSS, SVG and
// a few lines of script) with the run's provenance, a summary, a sortable table of every
// problem and two plots: speedup over the eager baseline per problem, and each kernel's
// position under the roofline of the measured peaks.
#pragma once

#include <string>

#include "dragon/bench/suite_run.h"

namespace dragon::bench {

std::string render_html_report(const SuiteRun& run);

// Geometric mean of baseline / ours over the problems where both are correct and timed;
// nullopt when there are none. `baseline_prefix` picks the baseline by name ("torch", "cublas").
std::optional<double> geomean_speedup(const SuiteRun& run, const std::string& baseline_prefix, int* count = nullptr);

// The baseline of `problem` whose name starts with `prefix`, or null.
const Contender* find_baseline(const ProblemResult& problem, const std::string& prefix);

}  // namespace dragon::bench
