// Benchmark suites as data (bench/suites/): KernelBench level 1 (`kernelbench-l1`, the
// 100 problems of parts/kb_*.tsv) and DLRM-Bench (`dlrm`, R1-R12 with their variants).
// Each problem is an id, KernelBench's or the paper's name, an op spec at the problem's
// full shape and its output shape; a problem we cannot express yet says why. Reading and
// selecting only: running them is the harness's and `dragon bench`'s job.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dragon::suites {

struct Problem {
  std::string id;      // "23" in kernelbench-l1, "R2a" in dlrm
  std::string name;    // "23_Softmax", "embedding_bag_mean_variable_l"
  std::string spec;    // an op spec, or empty when unsupported
  std::string output;  // the output shape ("4096x393216", "scalar"), or why unsupported
  std::string where;   // "parts/kb_activation.tsv:5", for messages
  bool supported() const { return !spec.empty(); }
};

struct Suite {
  std::string name;
  std::vector<Problem> problems;  // in id order
};

// "kernelbench-l1", "dlrm".
const std::vector<std::string>& suite_names();

// $DRAGON_SUITES_DIR, else the source tree's bench/suites.
std::string default_suites_dir();

// Reads a suite; throws UserError for an unknown name (listing the known ones) or a
// malformed row ("parts/kb_norm.tsv:4: expected 4 tab-separated fields, got 3").
Suite load_suite(std::string_view name, const std::string& suites_dir = default_suites_dir());

// The problems named by `ids`: comma-separated ids or numeric ranges ("1-5,23", "R1,R2a",
// "R9" for all of R9a-R9h); empty selects all. Throws UserError naming an id that matches
// nothing.
std::vector<Problem> select_problems(const Suite& suite, std::string_view ids);

}  // namespace dragon::suites
