// The lowering passes, one free function and one file each (src/lower/<name>.cc, GPU-only
// ones under src/lower/gpu/). lower.cc calls them in order; tests call them one by one.
// Each takes a well-formed function and returns one (the same node when nothing changed)
// that computes the same values: tests run both on the interpreter where it can.
#pragma once

#include <string_view>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"

namespace dragon::lower {

// ---- On block IR -----------------------------------------------------------------------
// GPU: a reduction whose reduce loop is bound to threadIdx.* becomes per-thread partial
// results in a shared or local buffer combined across threads (src/lower/gpu/): blocks
// <b>_partial_init / <b>_in_thread (each thread folds its share, the other reduce loops,
// also those left above the thread loop, into <b>_partial, local [1]), <b>_to_shared
// (publishes it in <b>_red, shared [outer thread extents..., T]), <b>_tree_<s> for
// s = T/2 rounded up to a power of two down to 1 (thread t < s folds in slot t + s) and
// the write-back block <b> (thread 0 stores init op slot 0). Plain shared memory, no
// warp shuffles; insert_thread_syncs adds the barriers. The update must be C = C op x
// (+, *, max, min) with a load-free init; anything else is a UserError.
ir::PrimFunc lower_cross_thread_reduction(const ir::PrimFunc& func, const Target& target);
// A block's init becomes a store guarded by "every reduce iteration variable is at its
// domain's min", placed before the update in the body.
ir::PrimFunc lower_reduction_init(const ir::PrimFunc& func);
// Moves each intermediate buffer's allocation from the root block down to the lowest
// statement that holds all its uses (so shared and local caches live per thread block).
ir::PrimFunc plan_buffer_allocation(const ir::PrimFunc& func);
// Removes blocks: iteration variables replaced by their bindings, predicates become
// IfThenElse, alloc_buffers become Allocate, annotations to keep ride on a unit loop.
// Runs after lower_reduction_init. storage_align's "buffer_dim_align" block annotations
// move, merged, to the function attribute of that name (for flatten_buffers).
ir::PrimFunc lower_blocks(const ir::PrimFunc& func);

// ---- On block-free IR ------------------------------------------------------------------
// Shrinks each Allocate'd buffer to the region its uses touch while the loops around the
// Allocate are fixed (a cache over a tile holds the tile, not the whole tensor),
// reindexing accesses. Block-free so every index is already in terms of loops.
ir::PrimFunc compact_buffers(const ir::PrimFunc& func);
// CPU: loops bound to threads (blockIdx, threadIdx, vthread) become serial loops.
ir::PrimFunc serialize_thread_loops(const ir::PrimFunc& func);
// Loops under a `pragma_auto_unroll_max_step` annotation whose total extent is within the
// step become unrolled; explicit unrolls stay. No nest past unroll_budget_fits's limits is
// unrolled either way (compilers stall on such bodies).
ir::PrimFunc unroll_loops(const ir::PrimFunc& func);
// What a nest runs once unrolled: its innermost statements and their expression
// operations (a tensorized loop, one instruction's call, counts as one statement; a math
// call or a float division as the operations it expands into: sinf 180, expf 7).
struct UnrolledSize {
  int64_t statements = 0;
  int64_t operations = 0;
};
UnrolledSize unrolled_size(const ir::Stmt& nest);
// Whether a nest of that size may be unrolled: at most 512 statements and 4096 operations
// (unroll_loops.cc says what NVRTC's time does past them). unroll_loops and the CUDA
// emitter's own unrolling of loops over a warp's lanes both keep to it.
bool unroll_budget_fits(const UnrolledSize& size);
// Every buffer becomes one-dimensional, row-major, strides padded as the function's
// "buffer_dim_align" attribute asks (consumed here); indices are flattened (simplify_func
// simplifies them).
ir::PrimFunc flatten_buffers(const ir::PrimFunc& func);
// A scan's running value in a register: a serial loop that stores one element a step and
// reads back the element the previous step stored keeps it in a one-element local buffer
// (carry_loop_values.cc says exactly when), instead of a memory round trip per step.
ir::PrimFunc carry_loop_values(const ir::PrimFunc& func);
// A loop whose body is one guard moves the guard's conjuncts the loop does not change
// outside it (hoist_invariant_guards.cc says exactly when): NVCC keeps an accumulator
// updated under a guard inside its loop in memory. Last, after barriers are placed.
ir::PrimFunc hoist_invariant_guards(const ir::PrimFunc& func);
// Simplifies every expression and drops statements that do nothing (empty loops,
// if(false), loops of extent 0), between passes.
ir::PrimFunc simplify_func(const ir::PrimFunc& func);
// Flat form: every access to a buffer of more than 2^31 - 1 elements indexes in i64, or an
// InternalError names the access (an i32 offset would wrap to a negative address).
void verify_index_widths(const ir::PrimFunc& func);

// ---- GPU (src/lower/gpu/) --------------------------------------------------------------
// The annotation inject_virtual_threads leaves on the loops a vthread.* loop became (its
// value is the tag), so verify_gpu_code still counts virtual threads after injection.
inline constexpr std::string_view kVirtualThreadAnnotation = "virtual_thread";
// vthread.* loops become unrolled loops pushed down to the statements that use them (through
// threadIdx/blockIdx, serial and unrolled loops, sequences, allocations and conditions
// that do not depend on them), so the virtual threads' instances interleave inside each
// thread; a statement that does not use the virtual thread and only copies (stores values
// not read from the buffer it writes) runs once. A buffer allocated under the vthread loop
// and written by a statement that depends on it gets one copy per virtual thread (its
// extent multiplied, index v * size + i). Block-free IR.
ir::PrimFunc inject_virtual_threads(const ir::PrimFunc& func);
// Merges all loops bound to the same tag into one launch variable per tag (the kernel
// form of lower.h), with guards where a loop's extent is below the launch extent. A
// kernel is each top-level statement holding blockIdx/threadIdx loops; a top-level nest
// without one is a UserError (bind it, e.g. with search::auto_bind). The launch loops are
// named after the tag (blockIdx_x, threadIdx_y), i32, blockIdx.z/y/x outermost then
// threadIdx.z/y/x; serial loops of extent 1 above the first launch loop move inside. A
// loop bound to a tag inside another bound to it (a cooperative copy under the compute's
// threadIdx.x) is the same hardware index; a UserError when the inner nest uses the outer
// variable. A global buffer allocated inside a kernel moves out of it with one copy per
// instance of the launch loops around it; a shared or local one around several kernels
// is a UserError, as is a per-thread buffer written under threadIdx loops and read
// outside them. Code outside every threadIdx loop that stores to shared or global memory
// runs on thread 0 only (guard threadIdx.* == 0): once per block, as sequentially.
ir::PrimFunc unify_thread_bindings(const ir::PrimFunc& func, const Target& target);
// Software pipelining, MetaSchedule's loop annotations. Each value lists integers, one per
// statement of the loop body, written as a string ("0 0 1"; brackets and commas allowed):
//   software_pipeline_stage         the stage of each statement (>= 0)
//   software_pipeline_order         its position within a time step (a permutation;
//                                   default: program order)
//   software_pipeline_async_stages  stages whose statements are cp.async copies (any
//                                   number of stages, not one per statement)
inline constexpr std::string_view kSoftwarePipelineStage = "software_pipeline_stage";
inline constexpr std::string_view kSoftwarePipelineOrder = "software_pipeline_order";
inline constexpr std::string_view kSoftwarePipelineAsyncStages = "software_pipeline_async_stages";
// On a loop whose stores copy global memory into shared memory: code generation issues
// them as cp.async (where size and alignment allow; plain stores otherwise) and the
// pipeline's async_wait_group makes them visible. inject_software_pipeline sets it.
inline constexpr std::string_view kAsyncCopyAnnotation = "async_copy";
// A loop annotated software_pipeline_stage (serial or unrolled, constant bounds, not under
// a thread-dependent condition) whose body is the allocations of its per-iteration buffers
// around n statements becomes, for D = the largest stage and time steps t in
// [0, extent + D): statement j runs iteration t - stage[j] at step t (when that iteration
// exists), the statements of a step in software_pipeline_order. The steps form a prologue
// [0, D), a steady state without guards and an epilogue [extent, extent + D) (guarded
// phases when extent < D). A buffer allocated in the body that a statement of stage s
// writes and one of stage s + k reads gets k + 1 slots (slot = iteration mod slots, each
// 16-byte aligned in shared memory). Statements of async stages must copy global memory
// into shared buffers of the body, read only by later stages; they are marked
// async_copy, every step commits one group (async_commit_group, after the last async
// statement of the order), and each step whose statements read async data starts with
// async_wait_group(L - 1) and a barrier (L: the smallest stage distance from an async
// writer to its readers), with one barrier before the prologue. Dependences the new order
// would break (a statement running before one whose data it needs, a buffer carried across
// iterations used by two stages) are UserErrors naming the loop. Kernel form, before
// plan_gpu_allocations. Sequential semantics are unchanged.
ir::PrimFunc inject_software_pipeline(const ir::PrimFunc& func);
// Hoists shared and local allocations to the top of their kernel (right under the
// innermost launch loop; shared first, then per-thread scopes, in order of appearance),
// renaming a buffer whose name another one of the kernel already uses (name_1, ...).
ir::PrimFunc plan_gpu_allocations(const ir::PrimFunc& func);
// Shared buffers of a kernel whose lifetimes do not overlap share memory: a buffer's
// lifetime is the range of the kernel body's top-level statements (below the launch loops
// and allocations) that use it, and buffers of one type and scope with disjoint ranges
// become one buffer of the largest size, named after its members in order of use
// (A_shared_then_C_shared), found by greedy interval colouring. Left alone: buffers a
// wgmma block reads (the emitter swizzles them from a 1024-byte aligned start), buffers
// referenced outside the top-level statements, and a buffer written by async copies after
// another (it may only be a slot's first member). After a member written by async copies,
// async_wait_group(0) and a barrier precede the next member's first statement; otherwise
// insert_thread_syncs, which runs next, sees one buffer and places the barrier between the
// last read of the old contents and the first write of the new. Kernel form, after
// plan_gpu_allocations; values computed are unchanged.
ir::PrimFunc share_shared_memory(const ir::PrimFunc& func);
// Inserts Evaluate(sync_threads()) where a shared (or global) buffer written by some
// threads is then read by others (and before it is overwritten while others may still
// read it, also across iterations of a loop); none elsewhere. Two accesses are one thread's own element
// only when their indices are the same expression of current loop values that mentions
// every threadIdx variable (of extent > 1); two writes alone need no barrier (as TVM).
// A barrier goes before the outermost statement that conflicts, only where control flow
// is uniform across the block (never under a condition or loop bound that depends on
// threadIdx or on loaded data). Runs on the kernel form.
ir::PrimFunc insert_thread_syncs(const ir::PrimFunc& func);
// MetaSchedule's VerifyGPUCode: threads per block, shared memory per block, virtual
// threads, vector width. Throws UserError naming the limit, the value and the kernel
// ("kernel <i> of function '<name>'", i counting kernels from 0 in program order).
void verify_gpu_code(const ir::PrimFunc& func, const Target& target);

}  // namespace dragon::lower
