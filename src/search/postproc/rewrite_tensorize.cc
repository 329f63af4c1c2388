// RewriteTensorize (MetaSchedule's postprocessor): every block the tensor-core rule
// annotated "meta_schedule.auto_tensorize" = <intrinsic> is tensorized and the annotation
// removed. A block whose innermost loops already have the intrinsic's tile extents is
// tensorized at them (the mma update); a reduction's init, made by rewrite_reduction_block
// with the update's annotations, takes the accumulator fill; a copy (fragment load or
// store) is first cut into tiles of the intrinsic's two extents. A wgmma update annotated
// with the family name (wgmma_family_intrin_name: N sampled by the rule) takes the N of its
// loop; its init the warpgroup fill. An f32 update's sampled kTf32Passes picks the tf32 or
// 3xtf32 mma. Run it after rewrite_reduction_block.
#include <variant>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/support/error.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

constexpr const char* kFill = "mma_fill_m16n8_f32";
constexpr const char* kWgmmaFill = "wgmma_fill_m64n8_f32";
constexpr std::string_view kWgmmaFamilyN = "m64nNk16_";

bool is_wgmma_family(const std::string& name) {
  return name.rfind("wgmma_", 0) == 0 && name.find(kWgmmaFamilyN) != std::string::npos;
}

std::vector<int64_t> tile_extents(const schedule::TensorIntrin& intrin) {
  std::vector<int64_t> extents;
  for (const ir::IterVar& iv : intrin.desc_realize()->block->iter_vars) {
    extents.push_back(ir::as_const_int(iv.dom.extent).value_or(1));
  }
  return extents;
}

void tensorize_block(Schedule& sch, const std::string& name, std::string intrin_name) {
  BlockRV block = sch.get_block(name);
  const ir::BlockNode* b = sch.get(block);
  const bool init = !is_reduction(b) && is_spatial(b);
  // An f32 update: its sampled pass count picks tf32 or 3xtf32 (the init gets the fill).
  if (auto it = b->annotations.find(std::string(kTf32Passes)); it != b->annotations.end()) {
    const auto* passes = std::get_if<int64_t>(&it->second);
    if (passes == nullptr) throw UserError(fmt::format("block {}: {} is not an integer", name, kTf32Passes));
    std::optional<schedule::Tf32Mma> mma = schedule::parse_tf32_mma_intrin_name(intrin_name);
    if (!mma) throw UserError(fmt::format("block {}: {} on {}, which is not a tf32 mma", name, kTf32Passes, intrin_name));
    intrin_name = schedule::tf32_mma_intrin_name(static_cast<int>(*passes), mma->trans_b, mma->a, mma->b);
    sch.unannotate(block, std::string(kTf32Passes));
  }
  // The init of an mma update carries the update's annotation: it gets the fill.
  if (intrin_name.rfind("mma_m16n8k", 0) == 0 && init) intrin_name = kFill;
  std::vector<LoopRV> block_loops = sch.get_loops(block);
  if (is_wgmma_family(intrin_name)) {
    if (init) {
      intrin_name = kWgmmaFill;
    } else if (block_loops.size() >= 2) {
      // [.., 64, N, 16]: the N loop is the second innermost.
      int64_t n = ir::as_const_int(sch.get(block_loops[block_loops.size() - 2])->extent).value_or(0);
      intrin_name.replace(intrin_name.find(kWgmmaFamilyN), kWgmmaFamilyN.size(), fmt::format("m64n{}k16_", n));
    }
  }
  const schedule::TensorIntrin* intrin = schedule::find_tensor_intrin(intrin_name);
  std::vector<LoopRV> loops = block_loops;
  std::vector<int64_t> extents = intrin != nullptr ? tile_extents(*intrin) : std::vector<int64_t>{};
  size_t n = extents.size();
  bool at_tile = intrin != nullptr && loops.size() >= n;
  for (size_t d = 0; at_tile && d < n; ++d) {
    at_tile = ir::as_const_int(sch.get(loops[loops.size() - n + d])->extent) == extents[d];
  }
  sch.unannotate(block, kAutoTensorize);
  if (at_tile) {
    sch.tensorize(loops[loops.size() - n], intrin_name);
    return;
  }
  if (intrin == nullptr || n != 2 || loops.size() < 2) {
    // tensorize names the problem (unknown intrinsic, a tile that does not match).
    sch.tensorize(loops.empty() ? schedule::BlockOrLoop(block) : schedule::BlockOrLoop(loops.back()), intrin_name);
    return;
  }
  std::vector<LoopRV> rows = sch.split(loops[loops.size() - 2], {schedule::None{}, extents[0]});
  std::vector<LoopRV> cols = sch.split(loops[loops.size() - 1], {schedule::None{}, extents[1]});
  sch.reorder({rows[0], cols[0], rows[1], cols[1]});
  sch.tensorize(rows[1], intrin_name);
}

class RewriteTensorize : public Postproc {
 public:
  std::optional<std::string> apply(Schedule& sch) const override {
    for (const std::string& name : block_names(sch.func())) {
      std::optional<BlockSite> site = find_block(sch.func(), name);
      if (!site) continue;
      auto it = site->block->annotations.find(kAutoTensorize);
      if (it == site->block->annotations.end()) continue;
      const auto* intrin = std::get_if<std::string>(&it->second);
      if (intrin == nullptr) continue;
      tensorize_block(sch, name, *intrin);
    }
    return std::nullopt;
  }
};

}  // namespace

std::string wgmma_family_intrin_name(std::string_view dtype) {
  return fmt::format("wgmma_{}{}{}f32_trans_b", kWgmmaFamilyN, dtype, dtype);
}

std::unique_ptr<Postproc> make_rewrite_tensorize_postproc(ParamReader&, const lower::Target&) {
  return std::make_unique<RewriteTensorize>();
}

}  // namespace dragon::search
