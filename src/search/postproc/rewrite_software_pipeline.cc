// RewriteSoftwarePipeline: a loop a rule annotated with a sampled pipeline depth d
// (kSoftwarePipelineDepth, postproc.h) becomes a d-stage software pipeline in the
// MetaSchedule style: every statement of its body but the last in stage 0 (issued as
// asynchronous copies: software_pipeline_async_stages "0"), the last (the compute that
// reads them) in stage d - 1, which lowering (inject_software_pipeline) turns into d
// buffers of what the copies write and a prologue and epilogue; d = 1 leaves the loop
// serial. The depth annotation is removed either way. Run it after rewrite_reduction_block
// and rewrite_tensorize (which keep the loop's body statements as they are) and before
// verify_gpu_code (which counts the pipeline's buffers).
#include <fmt/format.h>

#include <variant>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/stmt.h"
#include "dragon/lower/passes.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"

namespace dragon::search {
namespace {

using schedule::LoopRV;
using schedule::Schedule;

// The first loop carrying the depth annotation, found through a block under it.
std::optional<LoopRV> next_annotated_loop(Schedule& sch) {
  for (const std::string& name : block_names(sch.func())) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
    for (LoopRV loop : loops) {
      if (sch.get(loop)->annotations.count(std::string(kSoftwarePipelineDepth)) != 0) return loop;
    }
  }
  return std::nullopt;
}

// Whether every statement of `body` but the last only writes shared memory (the copies a
// pipeline issues ahead, as cp.async). A body of one statement has none ahead.
bool copies_ahead_of_the_last(const ir::Stmt& body) {
  const auto* seq = body.as<ir::SeqStmtNode>();
  if (seq == nullptr) return true;
  struct SharedOnly : ir::StmtVisitor {
    bool ok = true;
    void visit_(const ir::BlockNode* op) override {
      for (const ir::BufferRegion& w : op->writes) ok = ok && w.buffer->scope.rfind("shared", 0) == 0;
      ir::StmtVisitor::visit_(op);
    }
  };
  for (size_t i = 0; i + 1 < seq->seq.size(); ++i) {
    SharedOnly check;
    check.visit(seq->seq[i]);
    if (!check.ok) return false;
  }
  return true;
}

class RewriteSoftwarePipeline : public Postproc {
 public:
  std::optional<std::string> apply(Schedule& sch) const override {
    while (std::optional<LoopRV> loop = next_annotated_loop(sch)) {
      const ir::ForNode* node = sch.get(*loop);
      const auto& value = node->annotations.at(std::string(kSoftwarePipelineDepth));
      const auto* depth = std::get_if<int64_t>(&value);
      if (depth == nullptr || *depth < 1) {
        return fmt::format("loop {}: {} is not a positive integer", node->loop_var.name(), kSoftwarePipelineDepth);
      }
      size_t statements = 1;
      if (const auto* seq = node->body.as<ir::SeqStmtNode>()) statements = seq->seq.size();
      int64_t d = *depth;
      const std::string loop_name = node->loop_var.name();
      const bool only_copies_ahead = copies_ahead_of_the_last(node->body);
      const bool steps = !ir::is_const_int(node->extent, 1);
      sch.unannotate(*loop, std::string(kSoftwarePipelineDepth));
      if (d == 1) continue;
      // Something other than a copy into shared memory ahead of the compute (a reduction's
      // init the decomposition put inside a k loop of one step), or a loop of one step:
      // nothing to overlap, the loop stays serial.
      if (statements >= 2 && (!only_copies_ahead || !steps)) continue;
      if (statements < 2) {
        return fmt::format("loop {}: a {}-stage pipeline needs copies before the compute in its body, which holds "
                           "one statement",
                           loop_name, d);
      }
      std::string stages;
      for (size_t s = 0; s + 1 < statements; ++s) stages += "0 ";
      stages += std::to_string(d - 1);
      sch.annotate(*loop, std::string(lower::kSoftwarePipelineStage), stages);
      sch.annotate(*loop, std::string(lower::kSoftwarePipelineAsyncStages), std::string("0"));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Postproc> make_rewrite_software_pipeline_postproc(ParamReader&, const lower::Target&) {
  return std::make_unique<RewriteSoftwarePipeline>();
}

}  // namespace dragon::search
