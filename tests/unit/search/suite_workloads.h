// The problems of every benchmark suite (kernelbench-l1, dlrm, models) as op specs, at
// their full shapes and at reduced ones the interpreter runs in milliseconds: what the
// design-space and default-schedule tests cover "every op kind of every suite" with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dragon::search::testing {

struct SuiteWorkload {
  std::string label;         // "kernelbench-l1/23"
  std::string spec;          // the problem's full-shape spec
  std::string reduced_spec;  // every shape entry and integer parameter capped (see below)
};

// Every supported problem of every suite, in suite then id order.
const std::vector<SuiteWorkload>& suite_workloads();

// `spec` with each shape entry and integer parameter above a cap capped to it: the cap is
// `max_extent`, else half or a quarter of it when the op would run more than 2^16 block
// instances (heavy ops), else two to eight times it when the op refuses a smaller one (a
// constraint between parameters); then the op's defaults capped the same way, then up to
// 2^20 instances; the spec itself when nothing works.
std::string reduced_spec(const std::string& spec, int64_t max_extent);

// The distinct op kinds of every suite, each with its first problem.
std::vector<SuiteWorkload> one_problem_per_op_kind();

}  // namespace dragon::search::testing
