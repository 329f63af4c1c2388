// The split rules of a corpus (data/corpus/splits.tsv): which model families are held out
// for evaluation, and the fraction of the rest that is validation. Not the assignment
// itself: corpus.cc applies these to the deduplicated entries.
//
//   held_out    whisper     why this family
//   validation  0.02        why this fraction
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::data {

struct HeldOutFamily {
  std::string family;
  std::string why;
};

class SplitRules {
 public:
  // Reads and checks `path`; errors name `label` and the line.
  static SplitRules read(const std::string& path, const std::string& label);

  bool is_held_out(std::string_view family) const;
  // Whether a non-held-out workload is validation: a hash mixed with a fixed salt, so
  // the choice is independent of shard_of's hash % count and stable as the corpus grows.
  bool in_validation(uint64_t hash) const;

  const std::vector<HeldOutFamily>& held_out() const { return held_out_; }
  double validation_fraction() const { return validation_fraction_; }

 private:
  std::vector<HeldOutFamily> held_out_;
  double validation_fraction_ = 0;
};

}  // namespace dragon::data
