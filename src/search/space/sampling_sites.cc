// sampling_sites (design_space.h): each sampling instruction's role, read from how the
// trace uses its outputs: a categorical annotated as a cooperative fetch's vector length
// or an unroll step or a pipeline depth, or used as the factor of a split whose loop is
// bound to threadIdx (a thread extent) or to no thread (a tile choice).
#include <map>

#include "dragon/search/design_space.h"
#include "postproc/postproc.h"

namespace dragon::search {

using schedule::Arg;
using schedule::Instruction;
using schedule::InstructionKind;
using schedule::RandomVar;
using schedule::RVType;

std::string_view sampling_role_name(SamplingRole role) {
  switch (role) {
    case SamplingRole::kTileSize: return "tile_size";
    case SamplingRole::kVectorLength: return "vector_length";
    case SamplingRole::kUnroll: return "unroll";
    case SamplingRole::kThreadExtent: return "thread_extent";
    case SamplingRole::kComputeLocation: return "compute_location";
    case SamplingRole::kTileChoice: return "tile_choice";
    case SamplingRole::kOther: return "other";
  }
  return "other";
}

std::vector<SamplingSite> sampling_sites(const schedule::Trace& trace) {
  const std::vector<Instruction>& insts = trace.instructions();
  size_t end = trace.postproc_start().value_or(insts.size());
  std::vector<SamplingSite> sites;
  std::map<int64_t, size_t> site_of_value;      // ExprRV id -> index into sites (categoricals)
  std::map<int64_t, size_t> site_of_split_loop;  // loop id made by a split by a sampled value -> site
  std::vector<size_t> split_factors;             // sites used as a split factor
  auto rv_of = [](const Arg& arg) -> const RandomVar* { return arg.as<RandomVar>(); };
  for (size_t i = 0; i < end; ++i) {
    const Instruction& inst = insts[i];
    switch (inst.kind) {
      case InstructionKind::SamplePerfectTile:
        sites.push_back({i, SamplingRole::kTileSize});
        break;
      case InstructionKind::SampleComputeLocation:
        sites.push_back({i, SamplingRole::kComputeLocation});
        break;
      case InstructionKind::SampleCategorical:
        sites.push_back({i, SamplingRole::kOther});
        if (!inst.outputs.empty()) site_of_value[inst.outputs[0].id] = sites.size() - 1;
        break;
      case InstructionKind::Annotate: {
        if (inst.inputs.size() < 2 || inst.attrs.empty()) break;
        const RandomVar* value = rv_of(inst.inputs[1]);
        const auto* key = inst.attrs[0].as<std::string>();
        if (value == nullptr || value->type != RVType::kExpr || key == nullptr) break;
        auto it = site_of_value.find(value->id);
        if (it == site_of_value.end()) break;
        sites[it->second].annotation = *key;
        if (*key == "meta_schedule.cooperative_fetch") sites[it->second].role = SamplingRole::kVectorLength;
        if (*key == "meta_schedule.unroll_explicit" || *key == "meta_schedule.unroll_implicit") {
          sites[it->second].role = SamplingRole::kUnroll;
        }
        if (*key == kSoftwarePipelineDepth || *key == kTf32Passes) sites[it->second].role = SamplingRole::kTileChoice;
        break;
      }
      case InstructionKind::Split:
        for (size_t f = 1; f < inst.inputs.size() && f - 1 < inst.outputs.size(); ++f) {
          const RandomVar* factor = rv_of(inst.inputs[f]);
          if (factor == nullptr || factor->type != RVType::kExpr) continue;
          auto it = site_of_value.find(factor->id);
          if (it == site_of_value.end()) continue;
          site_of_split_loop[inst.outputs[f - 1].id] = it->second;
          split_factors.push_back(it->second);
        }
        break;
      case InstructionKind::Bind: {
        if (inst.inputs.empty() || inst.attrs.empty()) break;
        const RandomVar* loop = rv_of(inst.inputs[0]);
        const auto* axis = inst.attrs[0].as<std::string>();
        if (loop == nullptr || axis == nullptr || axis->rfind("threadIdx.", 0) != 0) break;
        auto it = site_of_split_loop.find(loop->id);
        if (it != site_of_split_loop.end() && sites[it->second].role == SamplingRole::kOther) {
          sites[it->second].role = SamplingRole::kThreadExtent;
        }
        break;
      }
      default:
        break;
    }
  }
  // A split factor no thread binding claimed: a tile size drawn from a rule's set.
  for (size_t s : split_factors) {
    if (sites[s].role == SamplingRole::kOther) sites[s].role = SamplingRole::kTileChoice;
  }
  return sites;
}

}  // namespace dragon::search
