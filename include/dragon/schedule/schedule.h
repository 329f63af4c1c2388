// Schedule: the unscheduled and current PrimFunc, the random variables' symbol table,
// the random engine and the recorded trace; one method per primitive (the transformations
// live in src/schedule/primitive/<name>.cc). Not a search strategy nor a script codec.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "dragon/ir/block_tree.h"
#include "dragon/ir/function.h"
#include "dragon/schedule/check.h"
#include "dragon/schedule/instruction.h"
#include "dragon/schedule/random_engine.h"
#include "dragon/schedule/random_var.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace.h"

namespace dragon::schedule {

namespace detail {
template <typename T>
class Planned;
class CheckedOperands;
class PlanMemo;
// A string, or the string a function returns (an error's text, built only when wanted).
template <typename T>
std::string text_of(const T& text) {
  if constexpr (std::is_invocable_v<const T&>) {
    return text();
  } else {
    return std::string(text);
  }
}
// What each primitive's construction needs, found by its plan (primitive/<name>.cc).
struct SamplePerfectTilePlan;
struct LocationCandidates;
struct SplitPlan;
struct FusePlan;
struct ReorderPlan;
struct AnnotatePlan;
struct CachePlan;
struct StorageAlignPlan;
struct ComputeAtPlan;
struct ComputeInlinePlan;
struct ReverseComputeInlinePlan;
struct RFactorPlan;
struct DecomposeReductionPlan;
struct BlockizePlan;
struct TensorizePlan;
struct TransformLayoutPlan;
}  // namespace detail

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
  // How func()'s blocks and loops nest (built once per function, shared by copies).
  const ir::BlockTree& tree() const { return *tree_; }

  // ---- Checking an instruction ---------------------------------------------------------
  // Whether replaying `inst` (its inputs naming this schedule's random variables) with
  // `decision` would apply, and what it would return, without applying it: the verdict
  // of the primitive's own preconditions, the plan its method runs first (one per
  // primitive in primitive/<name>.cc), so it cannot drift from the primitive. Operands
  // `known` leaves out are unknown: then kFails means every value they could take fails,
  // kApplies that every value applies. Malformed operands fail, as replay rejects them.
  // Cheap enough to ask per token of a generated script (the constrained decoder); the
  // one costly question is SampleComputeLocation with a decision (a check of compute_at
  // per candidate loop).
  // `explain` false leaves CheckResult::error without its text (cheaper: the constrained
  // decoder asks for verdicts only).
  CheckResult check(const Instruction& inst, const std::optional<Arg>& decision = std::nullopt,
                    KnownOperands known = {}, bool explain = true) const;

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
  // Where to compute `block`, drawn uniformly (TVM's SampleComputeLocation) among: the
  // inline mark (-2, when compute_inline would succeed), the root mark (-1: stay where it
  // is), and the loops of its first consumer (at their position i in get_loops of that
  // consumer) down to the innermost loop holding every consumer, where compute_at would
  // succeed, skipping unit loops and stopping at a data-parallel loop below a reduce one
  // or at a reduce loop below the last data-parallel one. The decision is that index; a
  // given one that is no longer a candidate becomes the nearest candidate below it (root
  // when none). compute_at and reverse_compute_at take the marks (root: no change,
  // inline: compute_inline / reverse_compute_inline); other primitives refuse them
  // (precondition 0). No precondition beyond the block resolving.
  LoopRV sample_compute_location(BlockRV block, std::optional<int64_t> decision = std::nullopt);

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

  // ---- Compute location --------------------------------------------------------------
  // Moves the producer `block` under `loop` of its consumers, at position `index` of the
  // loop's body (-1: the last possible, right before the first child reading its output;
  // -2: the first). Its loops are regenerated (ax0, ax1, ...), one per iteration variable,
  // spatial ones covering the region of its output that the blocks under `loop` read in
  // one iteration (indices relaxed over the loops below `loop`), reduce ones their whole
  // domain; a predicate keeps it inside that region and its domain when the covered extent
  // is only bounded. A shared (warp) copy also covers what the other threads (lanes) of the
  // block read: threadIdx and vthread (threadIdx.x) loops above `loop` are relaxed too.
  // Unit loops are dropped unless preserve_unit_loops.
  // Requires:
  //   1) the block is not the root and `loop` is in its scope (NotInSameScope)
  //   2) the loop is not an ancestor of the block (LoopIsAncestor)
  //   3) the block is complete or a reduction with init: spatial and reduce iteration
  //      variables, one output written at distinct spatial ones, no self-read, no
  //      predicate, its loop nest an element of a sequence (NotCompleteOrReduction)
  //   4) it does not write a function parameter (OutputBlock)
  //   5) every other block reading its output is a block of the scope under `loop` that
  //      runs after it, and no other block writes it (NotAllConsumersUnderLoop)
  //   6) the blocks writing what it reads run before it and not under `loop`
  //      (ProducerNotBefore)
  //   7) index is -1, -2 or a position no later than the first child reading its output
  //      (InvalidIndex)
  //   8) the consumers' read indices are affine (with floordiv/floormod by constants) in
  //      the loops below `loop`, with bounded extents (NonAffineRegion).
  void compute_at(BlockRV block, LoopRV loop, bool preserve_unit_loops = true, int64_t index = -1);
  // compute_at's outcome without building the new IR: throws the ScheduleError compute_at
  // would throw (same preconditions, same order), returns when it would apply. For a
  // search that only needs to know whether compute_at applies (the script decoder).
  // preserve_unit_loops only shapes the new loops, so it is not an operand here.
  void check_compute_at(BlockRV block, LoopRV loop, int64_t index = -1) const;
  // Moves the consumer `block` under `loop` of its producers, at position `index` of the
  // loop's body (-1: the last; -2: the first possible, right after the last child writing
  // what it reads). Its loops are regenerated as compute_at's, its iteration variables
  // covering the region of the buffer that the blocks under `loop` write in one iteration.
  // Requires:
  //   1) the block is not the root and `loop` is in its scope (NotInSameScope)
  //   2) the loop is not an ancestor of the block (LoopIsAncestor)
  //   3) the block is complete: spatial iteration variables, one output, no init, no
  //      self-read, no predicate, its loop nest an element of a sequence (NotCompleteBlock)
  //   4) of the buffers it reads, exactly one is written under `loop`, only there, before
  //      the block, and read at distinct spatial iteration variables; the others' writers
  //      run before `loop` (NotAllProducersUnderLoop)
  //   5) the readers of its output run after it, not under `loop`; no other block writes
  //      it (ConsumerNotAfter)
  //   6) index is -1, -2 or a position after the last child writing what it reads
  //      (InvalidIndex)
  //   7) neither `loop` nor a loop above it feeds a reduce iteration variable of a block
  //      writing that buffer under `loop` (LoopFeedsReduction)
  //   8) the producers' write indices are affine in the loops below `loop`, with bounded
  //      extents (NonAffineRegion).
  void reverse_compute_at(BlockRV block, LoopRV loop, bool preserve_unit_loops = true, int64_t index = -1);
  // reverse_compute_at's outcome without building the new IR: throws the ScheduleError
  // reverse_compute_at would throw (same preconditions, same order), returns when it
  // would apply. For a search that only needs to know whether it applies (the script
  // decoder); preserve_unit_loops only shapes the new loops, so it is not an operand here.
  void check_reverse_compute_at(BlockRV block, LoopRV loop, int64_t index = -1) const;

  // ---- Inlining and caching ----------------------------------------------------------
  // Inlines the block into every block that reads its buffer: each load B[idx] becomes
  // the stored value with the store's index variables replaced by idx. The block, its
  // loops left empty and the buffer's allocation disappear; readers' regions are redone.
  // Requires:
  //   1) the block writes exactly one buffer (NotSingleWriteBlock)
  //   2) that buffer is allocated in a block, not a parameter (OutputBlock)
  //   3) the block is complete: spatial iteration variables only, no init, the only
  //      writer of the buffer, not a reader of it (NotCompleteBlock)
  //   4) the body is one store B[v0, v1, ...] = f(...) indexed by distinct iteration
  //      variables, and f uses no other iteration variable (BodyAnalysisError)
  //   5) the block is not the only leaf of its scope (OnlyLeafError)
  //   6) every reader of the buffer is a leaf block after the block that sees every
  //      buffer f reads (UnsupportedConsumer)
  //   7) no block writes a buffer f reads between the block and its readers (loops
  //      shared with them included) (ValueOverwritten).
  void compute_inline(BlockRV block);
  // Inlines the consumer `block`, C[f(v)] = g(B[v], ...), into the single producer of B,
  // B[u] = h(u), which becomes C[f(u)] = g(h(u), ...) (keeping its name); the block, its
  // loops left empty and B's allocation disappear.
  // Requires:
  //   1) the block writes exactly one buffer (NotSingleWriteBlock)
  //   2) the block is complete (NotCompleteBlock)
  //   3) the body is one store and the realization has no predicate (BodyAnalysisError)
  //   4) it reads exactly one buffer that another block writes, and that producer is
  //      complete, writes only it, with a body B[u0, u1, ...] = h indexed by distinct
  //      iteration variables (NonSingleProducer)
  //   5) every load of B is at the same distinct iteration variables, which are the only
  //      ones the body uses, ranging over the producer's domains (BodyAnalysisError)
  //   6) B is allocated, written before the block, read by no other block
  //      (ProducerHasOtherConsumers)
  //   7) the producer sees what the block reads and writes and does not read C, and no
  //      block between them (loops shared with them included) accesses C or writes what
  //      the block reads (UnsafeToMove)
  //   8) the block is not the only leaf of its scope (OnlyLeafError).
  void reverse_compute_inline(BlockRV block);
  // Reads buffer `reads[read_buffer_index]` of the block through a copy in
  // `storage_scope`: a new block (named <buffer>_<scope>, made unique) with its own loop
  // nest over the whole buffer, placed first in the scope block or right after the
  // statement of the buffer's writer there, copies it into a new buffer of that name
  // allocated in the scope block; the consumers (default: the block) read the copy.
  // Returns the new block.
  // Requires:
  //   1) the index is one of the block's reads (IndexOutOfRange)
  //   2) the scope is a storage scope: global, shared, shared.dyn, local, warp,
  //      wmma.matrix_a/b, wmma.accumulator (InvalidScope)
  //   3) every consumer is a leaf block of the block's scope that reads the buffer and
  //      does not write it (NotAConsumer)
  //   4) at most one block of the scope writes the buffer, in a statement of the scope
  //      before those of the consumers (NotSingleWriter).
  BlockRV cache_read(BlockRV block, int64_t read_buffer_index, std::string storage_scope,
                     std::vector<BlockRV> consumer_blocks = {});
  // Makes the block write buffer `writes[write_buffer_index]` into a new buffer of
  // `storage_scope` (named <buffer>_<scope>, made unique, allocated in the scope block;
  // its init and its own loads follow), and adds a block of that name, with its own
  // loop nest right after the block's statement in the scope, copying the region written
  // back into the buffer. Returns the new block.
  // Requires:
  //   1) the index is one of the block's writes (IndexOutOfRange)
  //   2) the scope is a storage scope (InvalidScope)
  //   3) the block is a leaf, the only block writing the buffer, and does not read it
  //      when it is an inout parameter (NotSingleWriteBlock)
  //   4) each dimension of the region written is one iteration variable or a constant
  //      range (UnsupportedWriteRegion)
  //   5) no other block in the block's statement of the scope accesses the buffer
  //      (SharedLoopNest).
  BlockRV cache_write(BlockRV block, int64_t write_buffer_index, std::string storage_scope);
  // Moves buffer `writes[buffer_index]` of the block to `storage_scope` everywhere.
  // Requires:
  //   1) the index is one of the block's writes (IndexOutOfRange)
  //   2) the scope is a storage scope (InvalidScope)
  //   3) the buffer is allocated in a block, not a parameter (ParameterBuffer).
  void set_scope(BlockRV block, int64_t buffer_index, std::string storage_scope);

  // ---- Annotations -------------------------------------------------------------------
  // Sets annotation `key` of a block or loop (an ExprRV is stored as its integer).
  void annotate(BlockOrLoop target, std::string key, AnnotationInput value);
  // Removes annotation `key`.
  // Requires:
  //   1) the block or loop has it (AnnotationNotFound).
  void unannotate(BlockOrLoop target, std::string key);

  // ---- Reductions --------------------------------------------------------------------
  // Splits a reduction block into an init block (named <block>_init, fresh; spatial
  // iteration variables only) placed right before `loop`, under copies of the loops from
  // `loop` down that feed those variables, and the update: the same block (same name)
  // without init. Returns the init block.
  // Requires:
  //   1) the loop is an ancestor of the block in the block's scope (LoopNotAncestor)
  //   2) the block has an init, its iteration variables are spatial or reduce and the
  //      init does not use a reduce one (NotReductionBlock)
  //   3) no loop above `loop` feeds a reduce iteration variable (LoopBelowReduceLoop)
  //   4) each conjunct of the block's predicate over loops the init does not copy holds
  //      where those loops start, so the init runs for the same elements as before
  //      (UnsupportedPredicate).
  BlockRV decompose_reduction(BlockRV block, LoopRV loop);
  // Factors the reduction over `loop` out: the rfactor block (named <block>_rf, fresh)
  // accumulates partial results, one per iteration of `loop`, into a new buffer of the
  // same name with an extra dimension at factor_axis (negative counts from the end, as
  // in Python); the write-back block (the old block's name, same init) combines them
  // into the old buffer under copies of the loops feeding it. The update must read
  // `C = C + x`, `C * x`, `max(C, x)` or `min(C, x)`. When no other loop feeds a reduce
  // variable, each partial is one value and the rfactor block a plain store without init.
  // Returns the rfactor block.
  // Requires:
  //   1) the loop is serial, starts at 0 and has a constant extent (UnsupportedLoop)
  //   2) exactly one block lies under the loop; it has an init and spatial or reduce
  //      iteration variables only (NotReductionBlock)
  //   3) its update is one store C[I] = C[I] op x, op one of +, *, max, min, x not
  //      reading C, and its init one store to C[I] (UnrecognizedReducer)
  //   4) the loop feeds exactly one iteration variable, a reduce one, and every loop
  //      feeding a reduce variable feeds no spatial one and has bounds free of other
  //      loops; the block's predicate holds where the other reduce loops start, so every
  //      partial is initialized (InvalidRFactorLoop)
  //   5) the outermost loop above the block in its scope holds no other block
  //      (NotSingleBlockNest)
  //   6) factor_axis is in [-(rank + 1), rank] for the reduced buffer's rank
  //      (InvalidFactorAxis).
  BlockRV rfactor(LoopRV loop, int64_t factor_axis = 0);

  // ---- Layout ------------------------------------------------------------------------
  // Asks lowering to pad buffer `writes[buffer_index]` of the block so that the stride of
  // dimension `axis` (negative counts from the end) satisfies stride % factor == offset
  // (shared-memory bank conflicts). Shapes do not change: the block gets the annotation
  // "buffer_dim_align" (ir/buffer_dim_align.h), a string of entries
  // "<buffer>:<axis>:<factor>:<offset>" joined by ";", sorted by buffer name then axis,
  // axis normalized to [0, rank); a later storage_align of the same (buffer, axis) on the
  // block replaces its entry. flatten_buffers honours the entries of every block for the
  // buffer of that name, computing strides with ir::aligned_strides; entries are read
  // against the buffer's shape at lowering (a later transform_layout changes the axes).
  // Requires:
  //   1) the index is one of the block's writes (IndexOutOfRange)
  //   2) axis is in [-rank, rank) (AxisOutOfRange)
  //   3) factor > 0 (InvalidFactor)
  //   4) 0 <= offset < factor (InvalidOffset)
  //   5) the buffer is allocated in a block, not a parameter (ParameterBuffer).
  void storage_align(BlockRV block, int64_t buffer_index, int64_t axis, int64_t factor, int64_t offset);
  // Which list of a block's accesses buffer_index refers to (TVM's values).
  enum class BufferIndexType : uint8_t { kRead = 0, kWrite = 1 };
  // Replaces buffer `reads[buffer_index]` or `writes[buffer_index]` of the block by a
  // buffer of the same name, dtype and scope whose shape is the image of the old shape
  // under `index_map` (schedule/index_map.h: each new extent is the largest image + 1):
  // every access B[idx] of the function (loads, stores, access regions, the allocation)
  // becomes B[index_map(idx)], simplified. Recorded as TVM v0.18 does:
  // TransformLayout(block, "lambda ..." | buffer_index, 0 read / 1 write, None, false).
  // Requires:
  //   1) the index is one of the block's reads or writes (IndexOutOfRange)
  //   2) the buffer is allocated in a block, not a parameter (ParameterBuffer)
  //   3) the map has one parameter per dimension of the buffer (MapArityMismatch)
  //   4) the buffer has at most 2^20 elements, the limit of the checks below
  //      (DomainTooLarge)
  //   5) no index of the buffer maps to a negative index (NegativeIndex)
  //   6) no two indices of the buffer map to the same index (NotInjective).
  void transform_layout(BlockRV block, int64_t buffer_index, BufferIndexType buffer_index_type,
                        const class IndexMap& index_map);

  // ---- Blocks ------------------------------------------------------------------------
  // Wraps the loops under `loop` (included) and the block they hold into an outer block
  // (named <block>_o, fresh) whose iteration variables count tiles: each binding of the
  // inner block, outer_index * extent + offset, becomes vo * extent + offset with vo (same
  // kind) bound outside to outer_index. The inner block keeps its body and init; conjuncts
  // of its predicate over the loops above move to the outer block. With
  // preserve_unit_iters false, outer variables of extent 1 are left out. Returns the
  // outer block.
  // Requires:
  //   1) every statement from `loop` down is a loop holding only the next one, down to
  //      one block (NotSingleBlockChain)
  //   2) those loops have constant bounds (NonConstantExtent)
  //   3) each binding of the block is quasi-affine in the loops (+, -, constant
  //      multiples, floordiv/floormod by constants) and splits as outer * e + inner,
  //      outer using only loops above `loop`, inner only loops from `loop` down with
  //      values in [0, e), and the
  //      iteration variable's domain starts at 0 with a constant extent (NotAffineBinding)
  //   4) no conjunct of the block's predicate uses loops both above and from `loop` down
  //      (UnsupportedPredicate).
  BlockRV blockize(LoopRV loop, bool preserve_unit_iters = true);
  // Marks a tile as computed by the tensor intrinsic `intrin_name` (tensor_intrin.h):
  // a loop is blockized first (as blockize(loop, preserve_unit_iters)); a block must be an
  // outer block already. Its single inner block must compute what the intrinsic's
  // description computes, in tile coordinates (each binding and index = an offset from the
  // outer variables + the description's position in the tile). The outer block gets the
  // annotation tensor_intrin = <name>; no statement changes, so the interpreter still runs
  // the tile as written. Records one Tensorize instruction and returns nothing (as TVM).
  // Requires:
  //   1) the intrinsic is registered (UnknownIntrinsic)
  //   2-5) for a loop, blockize's preconditions 1-4, under blockize's error names
  //   6) the block is not the root, has no init, and holds a chain of loops with constant
  //      bounds and no thread binding down to one block (NotOuterBlock)
  //   7) it has no tensor_intrin annotation yet (AlreadyTensorized)
  //   8) the inner block has no predicate; each binding is an offset from outer variables
  //      plus a mixed-radix number of inner loops, each loop of extent > 1 feeding one
  //      binding; the variables moving in the tile have the intrinsic's kinds and extents,
  //      in order (TileMismatch)
  //   9) its loads and stores, in order, pair one to one with the intrinsic's buffers
  //      (BufferMismatch)
  //   10) each paired buffer has the intrinsic operand's dtype (DtypeMismatch)
  //   11) and one of the operand's scopes (ScopeMismatch)
  //   12) init and body have the intrinsic's statements, operators, casts and constants
  //      (PatternMismatch)
  //   13) each access, minus its offset, is the intrinsic's index in tile coordinates
  //      (unit stride, same layout; dimensions fixed in the tile are left out), and all
  //      accesses to one buffer share one offset (LayoutMismatch).
  void tensorize(BlockOrLoop target, std::string intrin_name, bool preserve_unit_iters = true);

  // Marks the start of postprocessing in the trace; changes no IR.
  void enter_postproc();

  // ---- check() per kind (primitive/<name>.cc): the operands read as replay reads them,
  // then the plan. Reached through the kind's declaration (InstructionSignature::check);
  // CheckedOperands is internal, so only check() can call these. -------------------------
  CheckResult check_get_block(const detail::CheckedOperands& ops) const;
  CheckResult check_get_loops(const detail::CheckedOperands& ops) const;
  CheckResult check_get_child_blocks(const detail::CheckedOperands& ops) const;
  CheckResult check_get_producers(const detail::CheckedOperands& ops) const;
  CheckResult check_get_consumers(const detail::CheckedOperands& ops) const;
  CheckResult check_sample_perfect_tile(const detail::CheckedOperands& ops, const std::optional<Arg>& decision) const;
  CheckResult check_sample_categorical(const detail::CheckedOperands& ops, const std::optional<Arg>& decision) const;
  CheckResult check_sample_compute_location(const detail::CheckedOperands& ops,
                                            const std::optional<Arg>& decision) const;
  CheckResult check_split(const detail::CheckedOperands& ops) const;
  CheckResult check_fuse(const detail::CheckedOperands& ops) const;
  CheckResult check_reorder(const detail::CheckedOperands& ops) const;
  CheckResult check_add_unit_loop(const detail::CheckedOperands& ops) const;
  CheckResult check_loop_kind(const detail::CheckedOperands& ops) const;
  CheckResult check_annotate(const detail::CheckedOperands& ops) const;
  CheckResult check_unannotate(const detail::CheckedOperands& ops) const;
  CheckResult check_cache_read(const detail::CheckedOperands& ops) const;
  CheckResult check_cache_write(const detail::CheckedOperands& ops) const;
  CheckResult check_set_scope(const detail::CheckedOperands& ops) const;
  CheckResult check_storage_align(const detail::CheckedOperands& ops) const;
  CheckResult check_transform_layout(const detail::CheckedOperands& ops) const;
  CheckResult check_placement(const detail::CheckedOperands& ops) const;  // (reverse_)compute_at
  CheckResult check_compute_inline(const detail::CheckedOperands& ops) const;
  CheckResult check_reverse_compute_inline(const detail::CheckedOperands& ops) const;
  CheckResult check_rfactor(const detail::CheckedOperands& ops) const;
  CheckResult check_decompose_reduction(const detail::CheckedOperands& ops) const;
  CheckResult check_blockize(const detail::CheckedOperands& ops) const;
  CheckResult check_tensorize(const detail::CheckedOperands& ops) const;
  CheckResult check_enter_postproc(const detail::CheckedOperands& ops) const;

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
  // What a random variable stands for, or the ScheduleError of precondition 0 (unknown,
  // invalidated, or its block or loop gone); resolve() throws that error.
  detail::Planned<const SymbolEntry*> entry(RandomVar rv, InstructionKind kind, std::string_view role) const;
  detail::Planned<const ir::BlockNode*> find(BlockRV rv, InstructionKind kind, std::string_view role) const;
  detail::Planned<const ir::ForNode*> find(LoopRV rv, InstructionKind kind, std::string_view role) const;
  detail::Planned<int64_t> find(ExprRV rv, InstructionKind kind, std::string_view role) const;
  const ir::BlockNode* resolve(BlockRV rv, InstructionKind kind, std::string_view role) const;
  const ir::ForNode* resolve(LoopRV rv, InstructionKind kind, std::string_view role) const;
  int64_t resolve(ExprRV rv, InstructionKind kind, std::string_view role) const;
  // SampleComputeLocation's root (-1) or inline (-2) mark when `loop` is one, else nullopt.
  std::optional<int64_t> location_mark(LoopRV loop) const;
  // Whether some loop variable of this schedule is one of those marks.
  bool has_location_marks() const;
  // Records an instruction that changes no IR.
  void record(Instruction inst, std::optional<Arg> decision = std::nullopt);
  // When `loop` is one of SampleComputeLocation's marks, applies it for ComputeAt or
  // ReverseComputeAt (`inst`): root records `inst` and changes nothing, inline runs
  // (reverse_)compute_inline with its preconditions and records `inst`. False otherwise.
  bool apply_location_mark(BlockRV block, LoopRV loop, Instruction& inst);

  // ---- Plans: each primitive's preconditions (primitive/<name>.cc) -----------------------
  // A plan checks the primitive's numbered preconditions in order, building no new IR,
  // and returns what the construction needs or the error of the first that fails. The
  // primitive runs it first; check() runs it alone. An operand passed as nullopt is
  // unknown: the preconditions that read it are skipped (what is returned then is only
  // good for its verdict).
  detail::Planned<const ir::BlockNode*> plan_get_block(std::string_view name) const;
  detail::Planned<std::vector<const ir::ForNode*>> plan_get_loops(BlockRV block) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_child_blocks(const BlockOrLoop& parent) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_producers(BlockRV block) const;
  detail::Planned<std::vector<const ir::BlockNode*>> plan_get_consumers(BlockRV block) const;
  detail::Planned<detail::SamplePerfectTilePlan> plan_sample_perfect_tile(LoopRV loop, std::optional<int64_t> n,
                                                                          std::optional<int64_t> max_innermost_factor,
                                                                          const std::vector<int64_t>* decision) const;
  detail::Planned<int64_t> plan_sample_categorical(std::span<const int64_t> candidates, std::span<const double> probs,
                                                   std::optional<int64_t> decision) const;
  detail::Planned<detail::LocationCandidates> plan_sample_compute_location(BlockRV block) const;
  detail::Planned<detail::SplitPlan> plan_split(LoopRV loop, const std::vector<SplitFactor>* factors) const;
  detail::Planned<detail::FusePlan> plan_fuse(std::span<const LoopRV> loops) const;
  detail::Planned<detail::ReorderPlan> plan_reorder(std::span<const LoopRV> loops) const;
  detail::Planned<const ir::StmtNode*> plan_add_unit_loop(const BlockOrLoop& target) const;
  // parallel, vectorize, unroll and bind (`kind`; bind's `thread_axis`).
  detail::Planned<const ir::ForNode*> plan_loop_kind(InstructionKind kind, LoopRV loop,
                                                     std::optional<std::string_view> thread_axis) const;
  detail::Planned<detail::AnnotatePlan> plan_annotate(const BlockOrLoop& target, const AnnotationInput* value) const;
  detail::Planned<const ir::StmtNode*> plan_unannotate(const BlockOrLoop& target,
                                                       std::optional<std::string_view> key) const;
  detail::Planned<detail::CachePlan> plan_cache_read(BlockRV block, std::optional<int64_t> read_buffer_index,
                                                     std::optional<std::string_view> storage_scope,
                                                     const std::vector<BlockRV>* consumer_blocks) const;
  detail::Planned<detail::CachePlan> plan_cache_write(BlockRV block, std::optional<int64_t> write_buffer_index,
                                                      std::optional<std::string_view> storage_scope) const;
  detail::Planned<detail::CachePlan> plan_set_scope(BlockRV block, std::optional<int64_t> buffer_index,
                                                    std::optional<std::string_view> storage_scope) const;
  detail::Planned<detail::StorageAlignPlan> plan_storage_align(BlockRV block, std::optional<int64_t> buffer_index,
                                                               std::optional<int64_t> axis,
                                                               std::optional<int64_t> factor,
                                                               std::optional<int64_t> offset) const;
  detail::Planned<detail::TransformLayoutPlan> plan_transform_layout(BlockRV block, std::optional<int64_t> buffer_index,
                                                                     std::optional<BufferIndexType> buffer_index_type,
                                                                     const class IndexMap* index_map) const;
  // compute_at's preconditions for a loop that is not a location mark (nullopt: unknown).
  detail::Planned<detail::ComputeAtPlan> plan_compute_at(BlockRV block, std::optional<LoopRV> loop,
                                                         std::optional<int64_t> index) const;
  detail::Planned<detail::ComputeAtPlan> plan_reverse_compute_at(BlockRV block, std::optional<LoopRV> loop,
                                                                 std::optional<int64_t> index) const;
  // Whether compute_at of `block` at `loop` (with index -1) would apply.
  bool compute_at_applies(const ir::BlockNode* block, const ir::ForNode* loop) const;
  detail::Planned<detail::ComputeInlinePlan> plan_compute_inline(BlockRV block) const;
  detail::Planned<detail::ReverseComputeInlinePlan> plan_reverse_compute_inline(BlockRV block) const;
  detail::Planned<detail::RFactorPlan> plan_rfactor(LoopRV loop, std::optional<int64_t> factor_axis) const;
  detail::Planned<detail::DecomposeReductionPlan> plan_decompose_reduction(BlockRV block,
                                                                           std::optional<LoopRV> loop) const;
  detail::Planned<detail::BlockizePlan> plan_blockize(LoopRV loop) const;
  detail::Planned<detail::TensorizePlan> plan_tensorize(const BlockOrLoop& target,
                                                        std::optional<std::string_view> intrin_name,
                                                        bool preserve_unit_iters) const;

  // The verdict of compute_inline (kind ComputeInline) or reverse_compute_inline of `block`
  // (compute_inline.cc); also for compute_at's inline location mark.
  CheckResult check_inline(InstructionKind kind, BlockRV block) const;
  // Verifies `func` (when IR checks are on), makes it current, invalidates random
  // variables whose loops or blocks disappeared, and records `inst`.
  void commit(ir::PrimFunc func, Instruction inst);
  // The ScheduleError of precondition `k` of `kind` on the current function. `operand`
  // and `reason` are strings or functions returning one, called only when the error's
  // text is wanted: a check asked for no explanation builds none (plans fail often).
  template <typename Operand, typename Reason>
  ScheduleError error(InstructionKind kind, int k, std::string error_name, const Operand& operand, const Reason& reason,
                      ErrorLocus locus = {}) const {
    if (!explain_) return ScheduleError(kind, k, std::move(error_name));
    return ScheduleError(kind, k, std::move(error_name), detail::text_of(operand), detail::text_of(reason), func_,
                         std::move(locus));
  }

  ir::PrimFunc original_;
  ir::PrimFunc func_;
  std::shared_ptr<const ir::BlockTree> tree_;  // of func_
  // Results of plan analyses by the IR nodes they read, shared with copies (plan_memo.h).
  std::shared_ptr<detail::PlanMemo> memo_;
  std::vector<SymbolEntry> symbols_;  // indexed by RV id
  RandomEngine rng_;
  Trace trace_;
  // Whether plans build their errors' text (off while check() runs without explanation).
  mutable bool explain_ = true;
};

// The repair rule for perfect-tile decisions replayed on another extent: from the
// innermost factor out, a factor that does not divide what is left becomes what is left;
// the outermost takes the rest. Any list of n >= 1 integers becomes a perfect tiling.
std::vector<int64_t> repair_perfect_tile(std::vector<int64_t> factors, int64_t extent);

// Whether a primitive reads a block's annotation `key` (storage_align its alignments,
// tensorize its mark; unannotate reads whichever key it is given): annotating a block
// under any other key changes no other primitive's outcome.
bool block_annotation_is_read(std::string_view key);

// Replays `trace` on a fresh schedule of `func` and returns it.
Schedule replay(const Trace& trace, const ir::PrimFunc& func, int64_t seed = 1);

}  // namespace dragon::schedule
