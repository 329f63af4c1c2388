// Postproc: one postprocessor of candidates (MetaSchedule's Postproc), applied after a
// sketch is replayed. The kinds are listed once in postproc_kinds.def, each in its own
// file (postproc/<kind>.cc). Not the driver (apply_postprocs.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/rule_set.h"
#include "param_reader.h"

namespace dragon::search {

class Postproc {
 public:
  virtual ~Postproc() = default;
  // Rewrites `sch` through its primitives (recorded in its trace). Returns nullopt when
  // the candidate may go on, or why it is rejected (a verifier). A primitive that refuses
  // throws ScheduleError; the driver makes it the candidate's failure.
  virtual std::optional<std::string> apply(schedule::Schedule& sch) const = 0;
};

// The register file of an sm_90 thread block (64K 32-bit registers), a thread's limit, and
// the registers a kernel needs beside its arrays (addresses, loop counters, descriptors): a
// lower bound, so only kernels that cannot fit are rejected (verify_gpu_code), and what the
// decision sampler keeps a tiled block's accumulator within.
inline constexpr int64_t kRegistersPerBlock = 65536;
inline constexpr int64_t kMaxRegistersPerThread = 255;
inline constexpr int64_t kRegisterOverhead = 32;

// A loop annotation a rule samples (an integer d): rewrite_software_pipeline turns it into a
// d-stage software pipeline of the loop's body (lower::kSoftwarePipelineStage).
inline constexpr std::string_view kSoftwarePipelineDepth = "meta_schedule.software_pipeline_depth";

// The block annotation by which a rule asks for tensorization: its value names the tensor
// intrinsic that rewrite_tensorize tensorizes the block with.
inline constexpr const char* kAutoTensorize = "meta_schedule.auto_tensorize";

// A block annotation a rule samples on an f32 GEMM update (1 or 3): rewrite_tensorize
// tensorizes the update with schedule::tf32_mma_intrin_name(passes, trans_b), tf32 or 3xtf32.
inline constexpr std::string_view kTf32Passes = "meta_schedule.tf32_passes";

// The auto_tensorize value a rule gives a wgmma update whose N is a sampled tile:
// "wgmma_m64nNk16_<dtype><dtype>f32_trans_b" with a literal N, which rewrite_tensorize
// replaces by the extent of the update's N loop (schedule::wgmma_intrin_name).
std::string wgmma_family_intrin_name(std::string_view dtype);

// The postprocessor of `spec.postproc` (UserError for an unknown kind or parameter).
std::unique_ptr<Postproc> make_postproc(const PostprocSpec& spec, const lower::Target& target);

// The known kinds, in postproc_kinds.def order.
const std::vector<std::string>& postproc_kind_names();

#define DRAGON_SEARCH_POSTPROC(name) \
  std::unique_ptr<Postproc> make_##name##_postproc(ParamReader& params, const lower::Target& target);
#include "postproc/postproc_kinds.def"

}  // namespace dragon::search
