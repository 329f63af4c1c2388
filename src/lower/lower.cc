// lower(): the lowering pipeline, read top to bottom. Each pass is one call; between them
// the runner verifies the IR (when IR checks are on), times the pass on request and
// tells LowerOptions::after_pass what came out. The passes live one per file (passes.h).
#include "dragon/lower/lower.h"

#include <string_view>

#include "dragon/ir/verify.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"

namespace dragon::lower {
namespace {

using Pass = ir::PrimFunc (*)(const ir::PrimFunc&);

class PassRunner {
 public:
  PassRunner(ir::PrimFunc func, const LowerOptions& options) : func_(std::move(func)), options_(options) {
    if (ir::ir_checks_enabled()) ir::check_well_formed(func_, "given to lower()");
  }

  template <typename PassFn>
  void run(std::string_view name, PassFn&& pass) {
    auto start = std::chrono::steady_clock::now();
    ir::PrimFunc after = pass(func_);
    auto elapsed = std::chrono::steady_clock::now() - start;
    bool changed = !after.same_as(func_);
    if (ir::ir_checks_enabled()) ir::check_well_formed(after, "after lowering pass " + std::string(name));
    if (options_.time_passes) {
      timings_.push_back({std::string(name), std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed), changed});
    }
    if (options_.after_pass) options_.after_pass(std::string(name), after, changed);
    func_ = std::move(after);
  }

  // A pass that only checks (and throws UserError on what the target cannot run).
  template <typename CheckFn>
  void check(std::string_view name, CheckFn&& check_fn) {
    run(name, [&](const ir::PrimFunc& f) {
      check_fn(f);
      return f;
    });
  }

  Lowered finish() {
    if (ir::ir_checks_enabled()) {
      std::vector<std::string> problems = find_flat_form_problems(func_);
      DRAGON_CHECK(problems.empty(), "lowered function '{}' is not in the flat form: {}", func_->name,
                   problems.front());
    }
    return Lowered{std::move(func_), std::move(timings_)};
  }

 private:
  ir::PrimFunc func_;
  const LowerOptions& options_;
  std::vector<PassTiming> timings_;
};

}  // namespace

Lowered lower(const ir::PrimFunc& func, const Target& target, const LowerOptions& options) {
  PassRunner p(func, options);
  // On block IR.
  if (target.is_gpu()) {
    p.run("lower_cross_thread_reduction", [&](const ir::PrimFunc& f) { return lower_cross_thread_reduction(f, target); });
  }
  p.run("lower_reduction_init", lower_reduction_init);
  p.run("plan_buffer_allocation", plan_buffer_allocation);
  p.run("lower_blocks", lower_blocks);
  // Block-free from here on.
  p.run("simplify_func", simplify_func);  // bindings substituted: tidy the indices compaction bounds
  // Before compaction: a scan's read of its previous element would widen a staged output's
  // compacted region (carry_loop_values.cc); after flattening again, for what only then is linear.
  p.run("carry_loop_values", carry_loop_values);
  p.run("compact_buffers", compact_buffers);
  if (!target.is_gpu()) p.run("serialize_thread_loops", serialize_thread_loops);
  p.run("unroll_loops", unroll_loops);
  p.run("flatten_buffers", flatten_buffers);
  p.run("simplify_func", simplify_func);
  p.run("carry_loop_values", carry_loop_values);
  if (target.is_gpu()) {
    p.run("inject_virtual_threads", inject_virtual_threads);
    p.run("unify_thread_bindings", [&](const ir::PrimFunc& f) { return unify_thread_bindings(f, target); });
    p.run("inject_software_pipeline", inject_software_pipeline);
    p.run("plan_gpu_allocations", plan_gpu_allocations);
    p.run("share_shared_memory", share_shared_memory);
    p.run("insert_thread_syncs", insert_thread_syncs);
    p.run("hoist_invariant_guards", hoist_invariant_guards);  // after the barriers, so none lands under a guard
    p.run("simplify_func", simplify_func);
    p.check("verify_gpu_code", [&](const ir::PrimFunc& f) { verify_gpu_code(f, target); });
  }
  if (!target.is_gpu()) p.run("hoist_invariant_guards", hoist_invariant_guards);
  p.check("verify_index_widths", verify_index_widths);
  return p.finish();
}

}  // namespace dragon::lower
