// The per-kind schema table of the compact script, one row per kind of
// instruction_kinds.def, and the short-name tables. Layouts follow what each primitive
// records (src/schedule/primitive/*.cc); the codec never hard-codes a kind elsewhere.
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

// Slot builders: the table below reads like the docs' table.
SlotSchema make_slot(std::string_view name, ValueType type, SlotShape shape, SlotSource source, int index) {
  SlotSchema slot;
  slot.name = name;
  slot.type = type;
  slot.shape = shape;
  slot.source = source;
  slot.index = index;
  return slot;
}
SlotSchema input(std::string_view name, ValueType type, int index) {
  return make_slot(name, type, SlotShape::kSingle, SlotSource::kInput, index);
}
SlotSchema attr(std::string_view name, ValueType type, int index) {
  return make_slot(name, type, SlotShape::kSingle, SlotSource::kAttr, index);
}
SlotSchema with_default(SlotSchema slot, Arg value) {
  slot.default_kind = DefaultKind::kValue;
  slot.default_value = std::move(value);
  return slot;
}
SlotSchema with_names(SlotSchema slot, std::span<const ShortName> names) {
  slot.names = names;
  return slot;
}
SlotSchema rest_of_inputs(std::string_view name, ValueType type, int from) {
  SlotSchema slot = make_slot(name, type, SlotShape::kRest, SlotSource::kInputsFrom, from);
  slot.default_kind = DefaultKind::kEmpty;
  return slot;
}
// A rest written bare but stored as one nested list input (CacheRead's consumers).
SlotSchema rest_in_list_input(std::string_view name, ValueType type, int index) {
  SlotSchema slot = make_slot(name, type, SlotShape::kRest, SlotSource::kInput, index);
  slot.default_kind = DefaultKind::kEmpty;
  return slot;
}
SlotSchema list_attr(std::string_view name, ValueType type, int index) {
  return make_slot(name, type, SlotShape::kList, SlotSource::kAttr, index);
}
SlotSchema count_slot() { return make_slot("count", ValueType::kCount, SlotShape::kSingle, SlotSource::kOutputCount, 0); }

OutputSchema none() { return OutputSchema{OutputRule::kFixed, 0, -1, RVType::kBlock}; }
OutputSchema one(RVType type) { return OutputSchema{OutputRule::kFixed, 1, -1, type}; }
OutputSchema written(int slot, RVType type) { return OutputSchema{OutputRule::kWritten, 0, slot, type}; }

KindSchema row(InstructionKind kind, std::string_view mnemonic, std::string_view python_name,
               std::vector<SlotSchema> slots, OutputSchema outputs) {
  return KindSchema{kind, mnemonic, python_name, std::move(slots), outputs};
}

// The row of each kind; a kind of instruction_kinds.def without a case here is a
// -Wswitch warning and an internal error when the table is first built.
KindSchema make_row(InstructionKind kind) {
  using K = InstructionKind;
  using T = ValueType;
  const Arg kTrue(true), kFalse(false);
  switch (kind) {
    case K::GetBlock:
      return row(kind, "gb", "get_block",
                 {attr("name", T::kString, 0), with_default(attr("func_name", T::kString, 1), Arg("main"))},
                 one(RVType::kBlock));
    case K::GetLoops:
      return row(kind, "gl", "get_loops", {input("block", T::kBlock, 0), count_slot()}, written(1, RVType::kLoop));
    case K::GetChildBlocks:
      return row(kind, "gcb", "get_child_blocks", {input("block_or_loop", T::kBlockOrLoop, 0), count_slot()},
                 written(1, RVType::kBlock));
    case K::GetProducers:
      return row(kind, "gp", "get_producers", {input("block", T::kBlock, 0), count_slot()},
                 written(1, RVType::kBlock));
    case K::GetConsumers:
      return row(kind, "gc", "get_consumers", {input("block", T::kBlock, 0), count_slot()},
                 written(1, RVType::kBlock));
    case K::SamplePerfectTile: {
      KindSchema k = row(kind, "spt", "sample_perfect_tile",
                         {input("loop", T::kLoop, 0), attr("n", T::kInt, 0), attr("max_innermost_factor", T::kInt, 1)},
                         OutputSchema{OutputRule::kFromSlot, 0, 1, RVType::kExpr});
      k.decision = DecisionShape::kIntList;
      k.decision_length_slot = 1;
      return k;
    }
    case K::SampleCategorical: {
      SlotSchema probs = list_attr("probs", T::kFloat, 1);
      probs.default_kind = DefaultKind::kUniformProbs;
      KindSchema k = row(kind, "sc", "sample_categorical", {list_attr("candidates", T::kInt, 0), probs},
                         one(RVType::kExpr));
      k.decision = DecisionShape::kInt;
      return k;
    }
    case K::SampleComputeLocation: {
      KindSchema k = row(kind, "scl", "sample_compute_location", {input("block", T::kBlock, 0)}, one(RVType::kLoop));
      k.decision = DecisionShape::kInt;
      return k;
    }
    case K::Split:
      return row(kind, "sp", "split",
                 {input("loop", T::kLoop, 0), rest_of_inputs("factors", T::kSplitFactor, 1),
                  with_default(attr("preserve_unit_iters", T::kBool, 0), kTrue),
                  with_default(attr("disable_predication", T::kBool, 1), kFalse)},
                 OutputSchema{OutputRule::kListLength, 0, 1, RVType::kLoop});
    case K::Fuse:
      return row(kind, "fu", "fuse",
                 {rest_of_inputs("loops", T::kLoop, 0), with_default(attr("preserve_unit_iters", T::kBool, 0), kTrue)},
                 one(RVType::kLoop));
    case K::Reorder:
      return row(kind, "ro", "reorder", {rest_of_inputs("ordered_loops", T::kLoop, 0)}, none());
    case K::AddUnitLoop:
      return row(kind, "aul", "add_unit_loop", {input("block_or_loop", T::kBlockOrLoop, 0)}, one(RVType::kLoop));
    case K::Parallel:
      return row(kind, "par", "parallel", {input("loop", T::kLoop, 0)}, none());
    case K::Vectorize:
      return row(kind, "vec", "vectorize", {input("loop", T::kLoop, 0)}, none());
    case K::Unroll:
      return row(kind, "unr", "unroll", {input("loop", T::kLoop, 0)}, none());
    case K::Bind:
      return row(kind, "bind", "bind",
                 {input("loop", T::kLoop, 0), with_names(attr("thread_axis", T::kEnum, 0), kThreadAxes)}, none());
    case K::Annotate:
      return row(kind, "ann", "annotate",
                 {input("block_or_loop", T::kBlockOrLoop, 0), with_names(attr("ann_key", T::kString, 0), kAnnotationKeys),
                  input("ann_val", T::kAnnValue, 1)},
                 none());
    case K::Unannotate:
      return row(kind, "unann", "unannotate",
                 {input("block_or_loop", T::kBlockOrLoop, 0), with_names(attr("ann_key", T::kString, 0), kAnnotationKeys)},
                 none());
    case K::CacheRead:
      return row(kind, "cr", "cache_read",
                 {input("block", T::kBlock, 0), attr("read_buffer_index", T::kInt, 0),
                  with_names(attr("storage_scope", T::kEnum, 1), kStorageScopes),
                  rest_in_list_input("consumer_blocks", T::kBlock, 1)},
                 one(RVType::kBlock));
    case K::CacheWrite:
      return row(kind, "cw", "cache_write",
                 {input("block", T::kBlock, 0), attr("write_buffer_index", T::kInt, 0),
                  with_names(attr("storage_scope", T::kEnum, 1), kStorageScopes),
                  rest_in_list_input("consumer_blocks", T::kBlock, 1)},
                 one(RVType::kBlock));
    case K::SetScope:
      return row(kind, "ss", "set_scope",
                 {input("block", T::kBlock, 0), attr("buffer_index", T::kInt, 0),
                  with_names(attr("storage_scope", T::kEnum, 1), kStorageScopes)},
                 none());
    case K::StorageAlign:
      return row(kind, "sa", "storage_align",
                 {input("block", T::kBlock, 0), attr("buffer_index", T::kInt, 0), attr("axis", T::kInt, 1),
                  attr("factor", T::kInt, 2), attr("offset", T::kInt, 3)},
                 none());
    case K::TransformLayout:
      // TVM v0.18's layout; the map is its lambda text ("lambda i, j: (j, i)").
      return row(kind, "tl", "transform_layout",
                 {input("block", T::kBlock, 0), attr("buffer_index", T::kInt, 0), attr("buffer_index_type", T::kInt, 1),
                  input("index_map", T::kString, 1), with_default(attr("pad_value", T::kOptionalNumber, 2), Arg(schedule::None{})),
                  with_default(attr("assume_injective_transform", T::kBool, 3), kFalse)},
                 none());
    case K::ComputeAt:
    case K::ReverseComputeAt:
      return row(kind, kind == K::ComputeAt ? "ca" : "rca", kind == K::ComputeAt ? "compute_at" : "reverse_compute_at",
                 {input("block", T::kBlock, 0), input("loop", T::kLoop, 1),
                  with_default(attr("preserve_unit_loops", T::kBool, 0), kTrue),
                  with_default(attr("index", T::kInt, 1), Arg(-1))},
                 none());
    case K::ComputeInline:
      return row(kind, "ci", "compute_inline", {input("block", T::kBlock, 0)}, none());
    case K::ReverseComputeInline:
      return row(kind, "rci", "reverse_compute_inline", {input("block", T::kBlock, 0)}, none());
    case K::RFactor:
      return row(kind, "rf", "rfactor", {input("loop", T::kLoop, 0), with_default(attr("factor_axis", T::kInt, 0), Arg(0))},
                 one(RVType::kBlock));
    case K::DecomposeReduction:
      return row(kind, "dr", "decompose_reduction", {input("block", T::kBlock, 0), input("loop", T::kLoop, 1)},
                 one(RVType::kBlock));
    case K::Blockize:
      return row(kind, "bz", "blockize",
                 {input("target", T::kLoop, 0), with_default(attr("preserve_unit_iters", T::kBool, 0), kTrue)},
                 one(RVType::kBlock));
    case K::Tensorize:
      return row(kind, "tz", "tensorize",
                 {input("block_or_loop", T::kBlockOrLoop, 0), attr("tensor_intrin", T::kString, 0),
                  with_default(attr("preserve_unit_iters", T::kBool, 1), kTrue)},
                 none());
    case K::EnterPostproc:
      return row(kind, "post", "enter_postproc", {}, none());
  }
  DRAGON_UNREACHABLE("instruction kind {} has no script schema", static_cast<int>(kind));
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

// Checks the invariants the codec relies on, once: unique letter-only mnemonics,
// defaults only on trailing slots (rests aside), rests followed only by disjoint slots,
// output rules pointing at the right slots.
void validate(const std::vector<KindSchema>& table) {
  std::map<std::string_view, InstructionKind> mnemonics;
  for (size_t k = 0; k < table.size(); ++k) {
    const KindSchema& s = table[k];
    DRAGON_CHECK(static_cast<size_t>(s.kind) == k, "schema row {} is out of order", s.mnemonic);
    DRAGON_CHECK(!s.mnemonic.empty() && mnemonics.emplace(s.mnemonic, s.kind).second, "mnemonic {} repeats",
                 s.mnemonic);
    for (char c : s.mnemonic) DRAGON_CHECK(c >= 'a' && c <= 'z', "mnemonic {} is not lower-case letters", s.mnemonic);
    bool seen_default = false;
    for (size_t i = 0; i < s.slots.size(); ++i) {
      const SlotSchema& slot = s.slots[i];
      if (slot.shape == SlotShape::kRest) {
        for (size_t j = i + 1; j < s.slots.size(); ++j) {
          DRAGON_CHECK(disjoint(slot.type, s.slots[j].type), "{}: rest slot {} is followed by {}, which it could swallow",
                       s.mnemonic, slot.name, s.slots[j].name);
        }
        continue;
      }
      bool has_default = slot.default_kind != DefaultKind::kRequired;
      DRAGON_CHECK(!seen_default || has_default, "{}: required slot {} follows a defaulted one", s.mnemonic, slot.name);
      seen_default |= has_default;
    }
    // Every input and attr index is some slot's, so a decoded instruction has no holes.
    int inputs = 0, attrs = 0;
    bool inputs_open = false;
    for (const SlotSchema& slot : s.slots) {
      if (slot.source == SlotSource::kAttr) {
        DRAGON_CHECK(slot.index == attrs++, "{}: attr slots out of order", s.mnemonic);
      } else if (slot.source != SlotSource::kOutputCount) {
        DRAGON_CHECK(!inputs_open && slot.index == inputs++, "{}: input slots out of order", s.mnemonic);
        inputs_open = slot.source == SlotSource::kInputsFrom;
      }
    }
    if (s.outputs.rule != OutputRule::kFixed) {
      DRAGON_CHECK(s.outputs.slot >= 0 && s.outputs.slot < static_cast<int>(s.slots.size()), "{}: bad output slot",
                   s.mnemonic);
    }
    if (s.outputs.rule == OutputRule::kWritten) {
      DRAGON_CHECK(s.slots[s.outputs.slot].type == ValueType::kCount, "{}: the written count is not a count slot",
                   s.mnemonic);
    }
  }
}

const std::vector<KindSchema>& table() {
  static const std::vector<KindSchema> rows = [] {
    std::vector<KindSchema> out;
#define DRAGON_INSTRUCTION_KIND(Name, is_pure, apply) out.push_back(make_row(InstructionKind::Name));
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
