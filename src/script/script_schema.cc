// The per-kind schema table of the compact script, derived from instruction_kinds.def
// (mnemonics) and each kind's declaration (instruction_signature.h), and the short-name
// tables: the script's own part. The codec never hard-codes a kind.
#include "dragon/script/script_schema.h"

#include <array>
#include <map>

#include "dragon/support/error.h"

namespace dragon::script {

using schedule::Arg;
using schedule::InstructionKind;
using schedule::RVType;

namespace {

constexpr std::array<ShortName, 9> kThreadAxes = {{
    {"bx", "blockIdx.x"},
    {"by", "blockIdx.y"},
    {"bz", "blockIdx.z"},
    {"tx", "threadIdx.x"},
    {"ty", "threadIdx.y"},
    {"tz", "threadIdx.z"},
    {"vx", "vthread.x"},
    {"vy", "vthread.y"},
    {"vz", "vthread.z"},
}};

constexpr std::array<ShortName, 8> kStorageScopes = {{
    {"global", "global"},
    {"shared", "shared"},
    {"shdyn", "shared.dyn"},
    {"local", "local"},
    {"warp", "warp"},
    {"wmmaa", "wmma.matrix_a"},
    {"wmmab", "wmma.matrix_b"},
    {"wmmacc", "wmma.accumulator"},
}};

// MetaSchedule's annotation keys (REFERENCE-metaschedule.md section 2) and the lowering
// pragmas: they are most of an annotation line's length in any other spelling.
constexpr std::array<ShortName, 19> kAnnotationKeys = {{
    {"tiling", "meta_schedule.tiling_structure"},
    {"tlow", "meta_schedule.thread_extent_low_inclusive"},
    {"thigh", "meta_schedule.thread_extent_high_inclusive"},
    {"coop", "meta_schedule.cooperative_fetch"},
    {"unrollx", "meta_schedule.unroll_explicit"},
    {"unrolli", "meta_schedule.unroll_implicit"},
    {"mspar", "meta_schedule.parallel"},
    {"msvec", "meta_schedule.vectorize"},
    {"autotc", "meta_schedule.auto_tensorize"},
    {"autotcinit", "meta_schedule.auto_tensorize_init"},
    {"wcl", "meta_schedule.write_cache_level"},
    {"inlinerule", "meta_schedule.inline_rule"},
    {"srule", "schedule_rule"},
    {"autounroll", "pragma_auto_unroll_max_step"},
    {"punroll", "pragma_unroll_explicit"},
    {"swstage", "software_pipeline_stage"},
    {"sworder", "software_pipeline_order"},
    {"swasync", "software_pipeline_async_stages"},
    {"lrpre", "meta_schedule.layout_rewrite_preproc"},
}};

std::span<const ShortName> names_of(schedule::Vocabulary vocabulary) {
  switch (vocabulary) {
    case schedule::Vocabulary::kNone: return {};
    case schedule::Vocabulary::kThreadAxis: return kThreadAxes;
    case schedule::Vocabulary::kStorageScope: return kStorageScopes;
    case schedule::Vocabulary::kAnnotationKey: return kAnnotationKeys;
  }
  DRAGON_UNREACHABLE("vocabulary {} has no short names", static_cast<int>(vocabulary));
}

KindSchema make_row(InstructionKind kind, std::string_view mnemonic) {
  const schedule::InstructionSignature& signature = schedule::instruction_signature(kind);
  const std::string problem = schedule::signature_problem(kind);
  DRAGON_CHECK(problem.empty(), "the declaration of {} is inconsistent: {}", schedule::instruction_kind_name(kind),
               problem);
  KindSchema row{kind, mnemonic, signature.python_name, {}, signature.outputs, signature.decision,
                 signature.decision_length_slot};
  for (const schedule::SlotSignature& slot : signature.slots) {
    const schedule::Arg default_value =
        slot.default_kind == DefaultKind::kValue ? schedule::default_arg(slot) : schedule::Arg();
    row.slots.push_back(SlotSchema{slot, default_value, names_of(slot.vocabulary)});
  }
  return row;
}

// Lexical class of a slot's values, for the rule that a rest is followed only by slots
// whose values cannot be its elements.
bool may_be_rv(ValueType t) {
  return t == ValueType::kBlock || t == ValueType::kLoop || t == ValueType::kExpr || t == ValueType::kBlockOrLoop ||
         t == ValueType::kSplitFactor || t == ValueType::kAnnValue;
}
bool may_be_number(ValueType t) {
  return t == ValueType::kInt || t == ValueType::kFloat || t == ValueType::kSplitFactor || t == ValueType::kOptionalNumber ||
         t == ValueType::kAnnValue || t == ValueType::kCount;
}
bool may_be_bool(ValueType t) { return t == ValueType::kBool || t == ValueType::kAnnValue; }
bool may_be_string(ValueType t) {
  return t == ValueType::kString || t == ValueType::kEnum || t == ValueType::kAnnValue;
}
bool disjoint(ValueType a, ValueType b) {
  return !(may_be_rv(a) && may_be_rv(b)) && !(may_be_number(a) && may_be_number(b)) &&
         !(may_be_bool(a) && may_be_bool(b)) && !(may_be_string(a) && may_be_string(b)) &&
         !((a == ValueType::kSplitFactor || a == ValueType::kOptionalNumber) &&
           (b == ValueType::kSplitFactor || b == ValueType::kOptionalNumber));
}

// Checks the script's own invariants, once (the declarations check theirs,
// schedule::signature_problem): unique letter-only mnemonics, and rests followed only by
// slots of a disjoint lexical class, so a line reads one way.
void validate(const std::vector<KindSchema>& table) {
  std::map<std::string_view, InstructionKind> mnemonics;
  for (size_t k = 0; k < table.size(); ++k) {
    const KindSchema& s = table[k];
    DRAGON_CHECK(static_cast<size_t>(s.kind) == k, "schema row {} is out of order", s.mnemonic);
    DRAGON_CHECK(!s.mnemonic.empty() && mnemonics.emplace(s.mnemonic, s.kind).second, "mnemonic {} repeats",
                 s.mnemonic);
    for (char c : s.mnemonic) DRAGON_CHECK(c >= 'a' && c <= 'z', "mnemonic {} is not lower-case letters", s.mnemonic);
    for (size_t i = 0; i < s.slots.size(); ++i) {
      if (s.slots[i].shape != SlotShape::kRest) continue;
      for (size_t j = i + 1; j < s.slots.size(); ++j) {
        DRAGON_CHECK(disjoint(s.slots[i].type, s.slots[j].type),
                     "{}: rest slot {} is followed by {}, which it could swallow", s.mnemonic, s.slots[i].name,
                     s.slots[j].name);
      }
    }
  }
}

const std::vector<KindSchema>& table() {
  static const std::vector<KindSchema> rows = [] {
    std::vector<KindSchema> out;
#define DRAGON_INSTRUCTION_KIND(Name, mnemonic) out.push_back(make_row(InstructionKind::Name, mnemonic));
#include "dragon/schedule/instruction_kinds.def"
    validate(out);
    return out;
  }();
  return rows;
}

}  // namespace

const KindSchema& kind_schema(InstructionKind kind) { return table().at(static_cast<size_t>(kind)); }

const KindSchema* find_mnemonic(std::string_view mnemonic) {
  for (const KindSchema& s : table()) {
    if (s.mnemonic == mnemonic) return &s;
  }
  return nullptr;
}

std::span<const KindSchema> all_kind_schemas() { return table(); }

std::span<const ShortName> thread_axis_names() { return kThreadAxes; }
std::span<const ShortName> storage_scope_names() { return kStorageScopes; }
std::span<const ShortName> annotation_key_names() { return kAnnotationKeys; }

std::optional<std::pair<RVType, int64_t>> parse_rv_name(std::string_view s) {
  if (s.size() < 2 || s.size() > 19) return std::nullopt;
  RVType type;
  switch (s[0]) {
    case 'b': type = RVType::kBlock; break;
    case 'l': type = RVType::kLoop; break;
    case 'v': type = RVType::kExpr; break;
    default: return std::nullopt;
  }
  if (s[1] == '0' && s.size() > 2) return std::nullopt;
  int64_t id = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    id = id * 10 + (s[i] - '0');
  }
  return std::pair{type, id};
}

bool is_bare_word(std::string_view s) {
  if (s.empty()) return false;
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!letter(s[0])) return false;
  for (char c : s) {
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  }
  if (s == "true" || s == "false" || s == "None") return false;
  // An RV-shaped word with a leading zero ("b01") is still reserved: it reads as an error.
  if (s.size() >= 2 && (s[0] == 'b' || s[0] == 'l' || s[0] == 'v')) {
    bool digits = true;
    for (size_t i = 1; i < s.size(); ++i) digits &= s[i] >= '0' && s[i] <= '9';
    if (digits) return false;
  }
  return true;
}

}  // namespace dragon::script
