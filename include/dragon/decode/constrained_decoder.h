// Constrained decoding of scripts: for a workload and a script prefix, the next tokens
// that can still lead to a valid script. Incremental (one replayed Schedule per complete
// line, cached) and meant to be called once per generated token (the cost per call is in
// bench/results/2026-12-02-tokenizer-and-constrained-decoding.md). Not a sampler and not
// the codec (script.h); it reads the codec's schema (script_schema.h) and asks the
// schedule whether instructions apply (Schedule::check).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/script/tokenizer.h"

namespace dragon::decode {

using script::TokenId;
using script::Tokenizer;

// What "valid" means here (docs/script-format.md and the approximations listed in
// src/decode/README.md):
//   a valid script is canonical (encode(decode(s)) == s: single spaces, no comments, no
//   blank lines, every line ending in '\n'), replays on the workload without error, and
//   every sampling instruction carries a decision that replay keeps as written (a perfect
//   tile, a categorical index in range, a compute location among the legal ones), so the
//   script alone determines the program. A prefix is viable when some continuation makes
//   it a valid script; EOS is allowed exactly when the prefix itself is valid.
struct ConstrainedDecoderSettings {
  // Exact shortcuts that replace trial applications (src/decode/README.md, "What keeps a
  // call cheap"): the schedule's checks of instructions first. Off only to check that
  // they change no answer.
  bool shortcuts = true;
};

class ConstrainedDecoder {
 public:
  ConstrainedDecoder(const Tokenizer& tokenizer, ir::PrimFunc workload, ConstrainedDecoderSettings settings = {});
  ~ConstrainedDecoder();
  ConstrainedDecoder(const ConstrainedDecoder&) = delete;
  ConstrainedDecoder& operator=(const ConstrainedDecoder&) = delete;

  // The tokens (sorted ids, EOS included when allowed) that may follow `script_prefix`,
  // the script tokens generated so far (after <|script|>). Empty when the prefix itself is
  // not viable. Calls whose prefixes extend earlier ones reuse the replayed lines.
  std::vector<TokenId> allowed_tokens(std::span<const TokenId> script_prefix);
  // The same for a prefix given as text (the tokens' concatenation).
  std::vector<TokenId> allowed_tokens_after(std::string_view script_text);

  // Whether some continuation of `script_text` is a valid script.
  bool is_viable(std::string_view script_text);
  // Whether `script_text` is itself a valid script (EOS allowed).
  bool is_complete(std::string_view script_text);
  // The workload as the valid script `script_text` schedules it (what replaying it
  // gives); nullopt when the text is not a complete valid script.
  std::optional<ir::PrimFunc> scheduled_function(std::string_view script_text);

  // Lines replayed, per-position option sets computed and instructions applied to a
  // scratch schedule to judge them so far (for tests and benchmarks of the caching).
  struct Stats {
    int64_t lines_applied = 0;
    int64_t positions_analysed = 0;
    int64_t trial_applications = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dragon::decode
