// Reading split rules and choosing validation by hash (split_rules.h).
#include "split_rules.h"

#include <charconv>

#include <fmt/format.h>

#include "corpus_rows.h"
#include "dragon/support/error.h"

namespace dragon::data {

SplitRules SplitRules::read(const std::string& path, const std::string& label) {
  SplitRules rules;
  bool have_validation = false;
  for (const CorpusRow& row : read_corpus_rows(path, label)) {
    const std::string where = row_where(label, row);
    if (row.kind == "held_out") {
      for (const HeldOutFamily& h : rules.held_out_) {
        if (h.family == row.name) throw UserError(fmt::format("{}: family '{}' held out twice", where, row.name));
      }
      rules.held_out_.push_back(HeldOutFamily{row.name, row.value});
    } else if (row.kind == "validation") {
      double fraction = -1;
      auto [ptr, ec] = std::from_chars(row.name.data(), row.name.data() + row.name.size(), fraction);
      if (ec != std::errc() || ptr != row.name.data() + row.name.size() || fraction < 0 || fraction >= 1) {
        throw UserError(fmt::format("{}: validation fraction '{}' is not a number in [0, 1)", where, row.name));
      }
      if (have_validation) throw UserError(fmt::format("{}: a second validation row", where));
      have_validation = true;
      rules.validation_fraction_ = fraction;
    } else {
      throw UserError(fmt::format("{}: unknown row kind '{}' (held_out, validation)", where, row.kind));
    }
  }
  if (!have_validation) throw UserError(fmt::format("{}: no 'validation FRACTION WHY' row", label));
  return rules;
}

bool SplitRules::is_held_out(std::string_view family) const {
  for (const HeldOutFamily& h : held_out_) {
    if (h.family == family) return true;
  }
  return false;
}

bool SplitRules::in_validation(uint64_t hash) const {
  // splitmix64's finalizer over the hash and a salt: uniform bits unrelated to hash % n.
  uint64_t z = hash ^ 0x5f0c0a1d2e3b4c5dULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 < validation_fraction_;
}

}  // namespace dragon::data
