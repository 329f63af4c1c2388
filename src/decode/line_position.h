// Internal: a partial script line as the decoder reads it, word by word, into the
// instruction kind's slots (the codec's schema, script_schema.h), and the instruction a
// line or a prefix of it stands for. Pure reading: what may follow is line_oracle.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/schedule/check.h"
#include "dragon/schedule/instruction.h"
#include "dragon/script/script_schema.h"
#include "replay_state.h"

namespace dragon::decode {

using script::DecisionShape;
using script::DefaultKind;
using script::KindSchema;
using script::SlotSchema;
using script::SlotShape;
using script::SlotSource;
using script::ValueType;

// A partial line after its committed words. (copy_for_extension copies every field: a
// new field must be added there too.)
struct Position {
  const KindSchema* kind = nullptr;     // null: the mnemonic comes next
  size_t slot = 0;                      // the slot being filled, or the next one
  std::vector<schedule::Arg> values;    // the values of slots < slot (lists as Arg::List)
  std::vector<schedule::Arg> elems;     // elements of slot `slot` (a list or rest) so far
  bool list_open = false;               // inside '[' of slot `slot`
  bool decision = false;                // after " ="
  std::vector<int64_t> decision_values;
  std::string text;                     // the committed text: the cache key
};

// Stands for "whatever the lookup returns" in a completion's count slot; never written.
inline constexpr int64_t kAnyCount = -1;

// A copy of `pos` with room for one more value and element and `extra_text` more bytes
// of text: reading extends a position by that much at most, and a plain copy (capacity
// equal to size) would reallocate each of them again.
Position copy_for_extension(const Position& pos, size_t extra_text);
// The position after `word` is committed at `pos` ("[", "]", "=" included); nullopt when
// the word cannot be read there (a lexical or type mismatch). Says nothing about whether
// the line can still be valid.
std::optional<Position> read_word(const ReplayState& state, const Position& pos, std::string_view word);
// Closes the rest slot in progress, if any.
void finish_rest(const KindSchema& kind, Position& pos);

bool has_default(const SlotSchema& slot);
// Whether every slot from `first` on has a default.
bool defaulted_from(const KindSchema& kind, size_t first);
// The default of slot `index` given the values before it.
schedule::Arg default_of(const KindSchema& kind, size_t index, const std::vector<schedule::Arg>& values);
// Whether a line that stops after `values` is canonical: the encoder omits trailing
// defaults, so the last slot written (empty rests write nothing) must not hold its default.
bool canonical_stop(const KindSchema& kind, const std::vector<schedule::Arg>& values);
size_t list_size(const schedule::Arg& list);

// The instruction a line (or the prefix of one) stands for: its operands from the slots'
// values, those of the slots not given unknown (`known`), and the count a GetLoops-style
// line writes.
struct Draft {
  schedule::Instruction inst;
  schedule::KnownOperands known;
  std::optional<int64_t> count;
};
// `values` fills the first slots; with `complete`, the others take their defaults, else
// they are unknown, and so are the slots before `first_known`. Filled into `out`, whose
// vectors keep their capacity: a judge fills one per line it judges, and allocating it
// anew each time would cost more than filling it.
void fill_draft(Draft& out, const KindSchema& kind, const std::vector<schedule::Arg>& values, bool complete,
                size_t first_known = 0);

}  // namespace dragon::decode
