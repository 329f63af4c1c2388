// Schedule: the unscheduled and current PrimFunc, the random variables' symbol table,
// the random engine and the recorded trace; one method per primitive (the transformations
// live in src/schedule/primitive/<name>.cc). Not a search strategy nor a script codec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/instruction.h"
#include "dragon/schedule/random_engine.h"
#include "dragon/schedule/random_var.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace.h"

namespace dragon::schedule {

using BlockOrLoop = std::variant<BlockRV, LoopRV>;
// A split factor: a constant, a sampled value, or None (inferred; at most one).
using SplitFactor = std::variant<None, int64_t, ExprRV>;
// An annotation value: a constant or a sampled value (stored as its integer).
using AnnotationInput = std::variant<int64_t, double, std::string, ExprRV>;

// Each primitive checks its numbered preconditions ("Requires:"), throws ScheduleError
// (kind, precondition number) on the first that fails and then leaves the schedule
// unchanged: the IR is immutable, so state is committed only at the end.
class Schedule {
 public:
  // A schedule of `func` (which must be well formed), seeded deterministically.
  explicit Schedule(ir::PrimFunc func, int64_t seed = 1);

  // An independent copy: same function, symbol table, trace and random state. Cheap:
  // the IR is shared (immutable). Seed the copy with fork_seed() to make it diverge.
  Schedule copy() const { return *this; }
  int64_t fork_seed() { return rng_.fork_seed(); }
  void seed(int64_t seed) { rng_.seed(seed); }
  RandomEngine& rng() { return rng_; }

  const ir::PrimFunc& func() const { return func_; }
  const ir::PrimFunc& original() const { return original_; }
  const Trace& trace() const { return trace_; }

  // ---- Random variables --------------------------------------------------------------
  // The IR a random variable stands for now; throws ScheduleError (precondition 0) when
  // it was invalidated ("loop l3 was replaced by Split") or is unknown.
  const ir::BlockNode* get(BlockRV rv) const;
  const ir::ForNode* get(LoopRV rv) const;
  int64_t get(ExprRV rv) const;
  // Whether `rv` was made by this schedule and still resolves.
  bool is_valid(RandomVar rv) const;

  // ---- Lookup (pure) -----------------------------------------------------------------
  // The block named `name`.
  // Requires:
  //   1) a block of that name exists (BlockNotFound).
  BlockRV get_block(std::string_view name);
  // The loops above `block`, outermost first, up to the enclosing block.
  std::vector<LoopRV> get_loops(BlockRV block);
  // The blocks directly under `parent` (not nested in another block), in program order.
  std::vector<BlockRV> get_child_blocks(BlockOrLoop parent);
  // Blocks of the same scope that run before `block` and write a buffer it reads.
  std::vector<BlockRV> get_producers(BlockRV block);
  // Blocks of the same scope that run after `block` and read a buffer it writes.
  std::vector<BlockRV> get_consumers(BlockRV block);

  // ---- Sampling (pure) ---------------------------------------------------------------
  // n factors whose product is the loop's extent, the innermost at most
  // max_innermost_factor (-1: unbounded). A given decision is repaired to a perfect
  // tiling of the current extent (repair_perfect_tile).
  // Requires:
  //   1) n >= 1 (InvalidTileCount)
  //   2) the loop has a constant extent >= 1 (NonConstantExtent)
  //   3) max_innermost_factor is -1 or >= 1 (InvalidMaxInnermost)
  //   4) a decision, if given, has n entries (WrongDecisionLength).
  std::vector<ExprRV> sample_perfect_tile(LoopRV loop, int n, int max_innermost_factor,
                                          std::optional<std::vector<int64_t>> decision = std::nullopt);
  // One of `candidates`, drawn with probabilities `probs`.
  // Requires:
  //   1) candidates are not empty and have as many probs, each >= 0, summing to > 0
  //      (InvalidDistribution)
  //   2) a decision, if given, is an index into candidates (InvalidDecision).
  ExprRV sample_categorical(std::vector<int64_t> candidates, std::vector<double> probs,
                            std::optional<int64_t> decision = std::nullopt);

  // ---- Loops -------------------------------------------------------------------------
  // Splits `loop` into len(factors) nested loops, outermost first; the old variable
  // becomes ((l0 * f1 + l1) * f2 + l2)...; a product larger than the extent guards the
  // blocks below with the predicate `that expression < extent`. With
  // preserve_unit_iters false, unit loops do not appear in bindings.
  // Requires:
  //   1) the loop starts at 0 (LoopNotStartAtZero)
  //   2) it is serial with no annotation and no thread binding (HasAnnotationOrBinding)
  //   3) at most one factor is None (NotSingleInferFactor)
  //   4) every factor is positive and fits the loop's index type (NonPositiveFactor)
  //   5) the product covers the extent when none is inferred, and fits the loop's index
  //      type (WrongFactorProduct)
  //   6) the extent is a constant (NonConstantExtent).
  std::vector<LoopRV> split(LoopRV loop, const std::vector<SplitFactor>& factors, bool preserve_unit_iters = true);
  // Fuses consecutive loops, outermost first, into one; each old variable becomes a
  // floordiv/floormod of the fused one (i64 when the product does not fit i32).
  // Requires:
  //   1) at least one loop, none twice (DuplicateLoop)
  //   2) each loop is the only child of the previous one (NotConsecutive)
  //   3) every loop starts at 0 and has a constant extent (LoopNotStartAtZero)
  //   4) every loop is serial, with no annotation and no binding (HasAnnotationOrBinding).
  LoopRV fuse(const std::vector<LoopRV>& loops, bool preserve_unit_iters = true);
  // Puts `loops` in the given order, in the positions they occupy now; other loops of
  // the chain keep their places.
  // Requires:
  //   1) no loop is given twice (DuplicateLoop)
  //   2) the loops lie on one chain in which each loop from the outermost to the
  //      innermost given has exactly one child, the next loop (NotSingleBranchChain)
  //   3) no loop's bounds use a loop that would be inside it (DependentLoopDomain)
  //   4) loops whose order a block below depends on keep their relative order: those
  //      feeding an ordered or opaque iteration variable, and those feeding a reduce
  //      variable when one of the two also feeds a spatial one (a fused
  //      spatial-and-reduce loop, where a reorder could run an update before its init)
  //      (IterationOrderChanged).
  void reorder(const std::vector<LoopRV>& loops);
  // Adds a loop of extent 1 directly above the block or loop.
  // Requires:
  //   1) the block is not the root block (RootBlock).
  LoopRV add_unit_loop(BlockOrLoop target);
  // Runs the loop in parallel (CPU threads) or as vector lanes.
  // Requires:
  //   1) every block below binds the loop only into spatial iteration variables
  //      (NotDataParallel).
  void parallel(LoopRV loop);
  void vectorize(LoopRV loop);
  // Unrolls the loop. No precondition.
  void unroll(LoopRV loop);
  // Binds the loop to a GPU thread axis.
  // Requires:
  //   1) the tag is one of blockIdx.x/y/z, threadIdx.x/y/z, vthread.x/y/z
  //      (InvalidThreadTag)
  //   2) every block below binds the loop only into spatial iteration variables, or
  //      also reduce ones for threadIdx.* (a cross-thread reduction) (NotDataParallel).
  void bind(LoopRV loop, std::string thread_axis);

  // ---- Annotations -------------------------------------------------------------------
  // Sets annotation `key` of a block or loop (an ExprRV is stored as its integer).
  void annotate(BlockOrLoop target, std::string key, AnnotationInput value);
  // Removes annotation `key`.
  // Requires:
  //   1) the block or loop has it (AnnotationNotFound).
  void unannotate(BlockOrLoop target, std::string key);

  // Marks the start of postprocessing in the trace; changes no IR.
  void enter_postproc();

 private:
  struct SymbolEntry {
    RVType type = RVType::kBlock;
    std::string block_name;  // kBlock
    ir::Var loop_var;        // kLoop
    int64_t value = 0;       // kExpr
    // Set when the IR it named disappeared: "Split", "ComputeInline", ...
    std::string invalidated_by;
  };

  RandomVar new_rv(SymbolEntry entry);
  BlockRV new_block_rv(std::string name);
  LoopRV new_loop_rv(ir::Var var);
  ExprRV new_expr_rv(int64_t value);
  const SymbolEntry& entry(RandomVar rv, InstructionKind kind, std::string_view role) const;
  const ir::BlockNode* resolve(BlockRV rv, InstructionKind kind, std::string_view role) const;
  const ir::ForNode* resolve(LoopRV rv, InstructionKind kind, std::string_view role) const;
  int64_t resolve(ExprRV rv, InstructionKind kind, std::string_view role) const;
  // Records an instruction that changes no IR.
  void record(Instruction inst, std::optional<Arg> decision = std::nullopt);
  // Verifies `func` (when IR checks are on), makes it current, invalidates random
  // variables whose loops or blocks disappeared, and records `inst`.
  void commit(ir::PrimFunc func, Instruction inst);
  // The ScheduleError of precondition `k` of `kind` on the current function.
  ScheduleError error(InstructionKind kind, int k, std::string error_name, std::string operand, std::string reason,
                      ErrorLocus locus = {}) const;

  ir::PrimFunc original_;
  ir::PrimFunc func_;
  std::vector<SymbolEntry> symbols_;  // indexed by RV id
  RandomEngine rng_;
  Trace trace_;
};

// The repair rule for perfect-tile decisions replayed on another extent: from the
// innermost factor out, a factor that does not divide what is left becomes what is left;
// the outermost takes the rest. Any list of n >= 1 integers becomes a perfect tiling.
std::vector<int64_t> repair_perfect_tile(std::vector<int64_t> factors, int64_t extent);

// Replays `trace` on a fresh schedule of `func` and returns it.
Schedule replay(const Trace& trace, const ir::PrimFunc& func, int64_t seed = 1);

}  // namespace dragon::schedule
