// The op sweep of the corpus (data/corpus/op_sweep.tsv): every op kind of the registry at
// parameters sampled from a fixed-seed generator, within each parameter's declared type,
// minimum and choices, and within the ranges the file gives by parameter name. A sample a
// builder refuses is the caller's to count, not an error. Not a model configuration:
// model_file.h holds the shapes of real models.
//
//   setting  samples_per_kind  900          attempts per op kind
//   setting  seed              20261205
//   int      axis              -3,2         uniform integer (an int parameter)
//   log      conv2d.batch      1,64         log-uniform integer, half of them powers of two (for a
//                                           shape parameter: each entry)
//   each     kernel            1,7          each entry of a shape parameter, uniform
//   total    shape             16,4194304   a shape parameter's element count, log-uniform
//   rank     shape             1,4          a shape parameter's rank (default: its default's)
//   float    negative_slope    0.01,0.2     one of these values (default: the declared default)
// A NAME is "param" or "op.param"; the op-qualified row wins.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"

namespace dragon::data {

class OpSweep {
 public:
  // Reads and checks `path`; errors name `label` and the line.
  static OpSweep read(const std::string& path, const std::string& label);

  int64_t samples_per_kind() const { return samples_per_kind_; }

  // Calls visit(spec, origin) samples_per_kind times for each kind of `registry`, in
  // registry order; the same on every machine (own generator, no std distributions).
  using Visit = std::function<void(const std::string& spec, const std::string& origin)>;
  void expand(const ops::OpRegistry& registry, const Visit& visit) const;

 private:
  struct Range {
    std::string kind;        // int, log, each, total, rank, float
    double lo = 0, hi = 0;   // int, log, each, total, rank
    std::vector<std::string> values;  // float
  };
  const Range* find(const std::string& kind_group, const std::string& op, const std::string& param) const;

  int64_t samples_per_kind_ = 0;
  uint64_t seed_ = 0;
  // "op.param" or "param" -> ranges by row kind.
  std::map<std::string, std::vector<Range>> ranges_;
};

}  // namespace dragon::data
