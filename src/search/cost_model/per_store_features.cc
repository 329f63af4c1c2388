// The per-store feature extractor (program_features.h): one walk over the prepared IR
// keeps the loop nest, allocations and conditions around each store; at a store it counts
// arithmetic, relaxes the loops from the innermost out to get each buffer's footprint per
// level, and derives strides, cache lines, reuse, the intensity curve and the loop and
// allocation columns, in MetaSchedule's definitions unless program_features.def says
// otherwise.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/search/program_features.h"
#include "feature_columns.h"
#include "feature_passes.h"
#include "index_analysis.h"

namespace dragon::search {
namespace {

using namespace features;

struct ArithCounts {
  double float_mad = 0, float_add_sub = 0, float_mul = 0, float_div_mod = 0, float_cmp = 0, float_math = 0;
  double int_mad = 0, int_add_sub = 0, int_mul = 0, int_div_mod = 0, int_cmp = 0, int_math = 0;
  double bool_op = 0, select_op = 0, cast_op = 0;
  double float_ops() const { return float_mad + float_add_sub + float_mul + float_div_mod + float_cmp + float_math; }
};

enum class AccessKind { kRead, kWrite, kReadWrite };

struct BufferUse {
  const ir::BufferNode* buffer = nullptr;
  AccessKind kind = AccessKind::kRead;
  std::vector<const std::vector<ir::Expr>*> indices;  // distinct index lists (by node)
};

// Counts one store's operations (value and every index, loads' included) and collects
// the buffers it touches.
class StoreScanner : public ir::ExprVisitor {
 public:
  ArithCounts counts;
  std::vector<BufferUse> uses;

  void scan(const ir::BufferStoreNode* store) {
    add_use(store->buffer.get(), AccessKind::kWrite, &store->indices);
    for (const ir::Expr& index : store->indices) visit(index);
    visit(store->value);
  }

 protected:
  void add_use(const ir::BufferNode* buffer, AccessKind kind, const std::vector<ir::Expr>* indices) {
    for (BufferUse& use : uses) {
      if (use.buffer != buffer) continue;
      if (use.kind != kind) use.kind = AccessKind::kReadWrite;
      bool seen = false;
      for (const auto* known : use.indices) seen |= same_indices(*known, *indices);
      if (!seen) use.indices.push_back(indices);
      return;
    }
    uses.push_back({buffer, kind, {indices}});
  }
  static bool same_indices(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].same_as(b[i])) return false;
    }
    return true;
  }
  static bool is_float(const ir::Expr& e) { return e.dtype().is_float(); }

  void visit_(const ir::AddNode* op) override {
    const ir::MulNode* mul = op->a.as<ir::MulNode>();
    const ir::Expr* other = &op->b;
    if (mul == nullptr) {
      mul = op->b.as<ir::MulNode>();
      other = &op->a;
    }
    if (mul != nullptr) {  // a * b + c: one multiply-add
      (is_float(op->a) ? counts.float_mad : counts.int_mad) += 1;
      visit(mul->a);
      visit(mul->b);
      visit(*other);
      return;
    }
    (is_float(op->a) ? counts.float_add_sub : counts.int_add_sub) += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::SubNode* op) override {
    (is_float(op->a) ? counts.float_add_sub : counts.int_add_sub) += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::MulNode* op) override {
    (is_float(op->a) ? counts.float_mul : counts.int_mul) += 1;
    ExprVisitor::visit_(op);
  }
#define DRAGON_COUNT_BINARY(Node, float_counter, int_counter)             \
  void visit_(const ir::Node* op) override {                              \
    (is_float(op->a) ? counts.float_counter : counts.int_counter) += 1;   \
    ExprVisitor::visit_(op);                                              \
  }
  DRAGON_COUNT_BINARY(DivNode, float_div_mod, int_div_mod)
  DRAGON_COUNT_BINARY(ModNode, float_div_mod, int_div_mod)
  DRAGON_COUNT_BINARY(FloorDivNode, float_div_mod, int_div_mod)
  DRAGON_COUNT_BINARY(FloorModNode, float_div_mod, int_div_mod)
  DRAGON_COUNT_BINARY(MinNode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(MaxNode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(EQNode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(NENode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(LTNode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(LENode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(GTNode, float_cmp, int_cmp)
  DRAGON_COUNT_BINARY(GENode, float_cmp, int_cmp)
#undef DRAGON_COUNT_BINARY
  void visit_(const ir::AndNode* op) override {
    counts.bool_op += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::OrNode* op) override {
    counts.bool_op += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::NotNode* op) override {
    counts.bool_op += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::SelectNode* op) override {
    counts.select_op += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::CastNode* op) override {
    counts.cast_op += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::CallNode* op) override {
    if (!op->args.empty()) (is_float(op->args[0]) ? counts.float_math : counts.int_math) += 1;
    ExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    add_use(op->buffer.get(), AccessKind::kRead, &op->indices);
    ExprVisitor::visit_(op);
  }
};

struct LoopFrame {
  const ir::ForNode* loop = nullptr;
  double min = 0, extent = 1;
  int64_t auto_unroll = 0;  // the kept pragma_auto_unroll_max_step, 0 when none
  bool counted = true;      // false for a plain serial unit loop (MetaSchedule drops them)
  bool tensor_core = false;
};

struct AllocInfo {
  double elements = 0, bytes = 0, outer_prod = 1;
};

// Per buffer of a store: the footprint at each loop level and what follows from it.
struct BufferFeatures {
  const BufferUse* use = nullptr;
  std::vector<double> footprint;  // elements touched with loops [level, n) relaxed
  std::vector<double> access_shape;  // per dimension, all loops relaxed
  double bytes = 0, unique_bytes = 0, lines = 0, unique_lines = 0;
  double innermost_stride = 0, thread_x_stride = 0;
  enum class Reuse { kLoop, kSerial, kNone } reuse = Reuse::kNone;
  double reuse_iters = 0, reuse_bytes = 0, reuse_count = 0;
};

// Row-major strides of a buffer's dimensions, in elements.
std::vector<double> strides_of(const ir::BufferNode* buffer) {
  std::vector<double> strides(buffer->shape.size(), 1);
  for (size_t d = buffer->shape.size(); d-- > 1;) strides[d - 1] = strides[d] * static_cast<double>(buffer->shape[d]);
  return strides;
}

// Elements between the accesses of two consecutive values of `var`: the coefficient in
// the innermost dimension that uses it, times that dimension's stride; the smallest over
// the buffer's index lists (MetaSchedule's GetVarStride).
double var_stride(const BufferUse& use, const std::vector<double>& strides, const ir::VarNode* var) {
  std::optional<double> best;
  for (const auto* indices : use.indices) {
    for (size_t d = indices->size(); d-- > 0;) {
      double c = coefficient((*indices)[d], var);
      if (c != 0) {
        double s = std::abs(c) * strides[d];
        best = best ? std::min(*best, s) : s;
        break;
      }
    }
  }
  return best.value_or(0);
}

class Collector : public ir::StmtVisitor {
 public:
  Collector(const lower::Target& target, const FeatureOptions& options) : target_(target), options_(options) {}

  ProgramFeatures result;

  void collect(const ir::PrimFunc& func) {
    for (const ir::Param& p : func->params) {
      const double elements = static_cast<double>(p.buffer->num_elements());
      allocs_[p.buffer.get()] = {elements, elements * p.buffer->dtype.bytes(), 1};
    }
    visit(func->body);
  }

 protected:
  void visit_(const ir::ForNode* op) override {
    LoopFrame frame;
    frame.loop = op;
    Interval min = bound(op->min, ranges_), extent = bound(op->extent, ranges_);
    frame.min = min.known ? min.lo : 0;
    frame.extent = extent.known ? std::max(0.0, extent.hi) : 1;
    if (auto it = op->annotations.find(kKeptAutoUnrollKey); it != op->annotations.end()) {
      if (const auto* step = std::get_if<int64_t>(&it->second)) frame.auto_unroll = *step;
    }
    frame.tensor_core = op->annotations.count(kTensorIntrinKey) > 0;
    frame.counted = !(op->for_kind == ir::ForKind::kSerial && frame.extent == 1 && op->annotations.empty());
    frames_.push_back(frame);
    ranges_.push(op->loop_var.get(), frame.min, frame.min + std::max(0.0, frame.extent - 1));
    const double outer_prod = loop_prod_;
    if (frame.counted) loop_prod_ *= frame.extent;
    ir::StmtVisitor::visit_(op);
    loop_prod_ = outer_prod;
    ranges_.pop();
    frames_.pop_back();
  }

  void visit_(const ir::IfThenElseNode* op) override {
    ++guard_depth_;
    ir::StmtVisitor::visit_(op);
    --guard_depth_;
  }

  void visit_(const ir::AllocateNode* op) override {
    const double elements = static_cast<double>(op->buffer->num_elements());
    allocs_[op->buffer.get()] = {elements, elements * op->buffer->dtype.bytes(), loop_prod_};
    ir::StmtVisitor::visit_(op);
  }

  void visit_(const ir::BufferStoreNode* op) override {
    if (op->value.as<ir::IntImmNode>() != nullptr || op->value.as<ir::FloatImmNode>() != nullptr) return;
    add_row(op);
  }

 private:
  void add_row(const ir::BufferStoreNode* store);

  const lower::Target& target_;
  const FeatureOptions& options_;
  std::vector<LoopFrame> frames_;  // outermost first; ranges_ holds their variables in the same order
  VarRanges ranges_;
  double loop_prod_ = 1;
  int guard_depth_ = 0;
  std::unordered_map<const ir::BufferNode*, AllocInfo> allocs_;
  // Elements each earlier store touched, per loop and buffer (serial reuse, reuse bytes).
  std::unordered_map<const ir::ForNode*, std::vector<std::pair<const ir::BufferNode*, std::vector<double>>>> touched_;
};

void Collector::add_row(const ir::BufferStoreNode* store) {
  StoreScanner scanner;
  scanner.scan(store);
  const ArithCounts& c = scanner.counts;

  // The loops that count, outermost first (indices into frames_ and ranges_).
  std::vector<size_t> nest;
  for (size_t i = 0; i < frames_.size(); ++i) {
    if (frames_[i].counted) nest.push_back(i);
  }
  const size_t n = nest.size();
  const double prod = loop_prod_;

  const size_t start = result.values.size();
  result.values.resize(start + static_cast<size_t>(kColumns), 0.0f);
  RowWriter row(std::span<float>(result.values).subspan(start, static_cast<size_t>(kColumns)));

  // ---- Computation.
  row.set(column(StoreColumn::float_mad), c.float_mad * prod);
  row.set(column(StoreColumn::float_add_sub), c.float_add_sub * prod);
  row.set(column(StoreColumn::float_mul), c.float_mul * prod);
  row.set(column(StoreColumn::float_div_mod), c.float_div_mod * prod);
  row.set(column(StoreColumn::float_cmp), c.float_cmp * prod);
  row.set(column(StoreColumn::float_math_func), c.float_math * prod);
  row.set(column(StoreColumn::int_mad), c.int_mad * prod);
  row.set(column(StoreColumn::int_add_sub), c.int_add_sub * prod);
  row.set(column(StoreColumn::int_mul), c.int_mul * prod);
  row.set(column(StoreColumn::int_div_mod), c.int_div_mod * prod);
  row.set(column(StoreColumn::int_cmp), c.int_cmp * prod);
  row.set(column(StoreColumn::int_math_func), c.int_math * prod);
  row.set(column(StoreColumn::bool_op), c.bool_op * prod);
  row.set(column(StoreColumn::select_op), c.select_op * prod);
  row.set(column(StoreColumn::cast_op), c.cast_op * prod);
  row.set(column(StoreColumn::guard_depth), guard_depth_);
  row.set(column(StoreColumn::store_dtype_bytes), store->buffer->dtype.bytes());

  // ---- Loop kinds and thread bindings.
  auto kind_columns = [&](ir::ForKind kind, StoreColumn num, StoreColumn prod_col, StoreColumn len, StoreColumn at_end,
                          bool innermost_end) {
    double count = 0, product = 1, innermost_len = 0;
    for (size_t i : nest) {
      if (frames_[i].loop->for_kind != kind) continue;
      count += 1;
      product *= frames_[i].extent;
      innermost_len = frames_[i].extent;
    }
    row.set(column(num), count);
    row.set(column(prod_col), count > 0 ? product : 0);
    row.set(column(len), innermost_len);
    const size_t end = innermost_end ? nest.back() : nest.front();
    row.set_raw(column(at_end), n > 0 && frames_[end].loop->for_kind == kind ? 1 : 0);
  };
  kind_columns(ir::ForKind::kVectorized, StoreColumn::vectorize_num, StoreColumn::vectorize_prod,
               StoreColumn::vectorize_len, StoreColumn::vectorize_innermost, true);
  kind_columns(ir::ForKind::kUnrolled, StoreColumn::unroll_num, StoreColumn::unroll_prod, StoreColumn::unroll_len,
               StoreColumn::unroll_innermost, true);
  kind_columns(ir::ForKind::kParallel, StoreColumn::parallel_num, StoreColumn::parallel_prod,
               StoreColumn::parallel_len, StoreColumn::parallel_outermost, false);

  const ir::VarNode* thread_x = nullptr;  // the innermost threadIdx.x loop's variable
  if (target_.is_gpu()) {
    row.set_raw(column(StoreColumn::is_gpu), 1);
    auto first_extent = [&](std::string_view tag) {
      for (size_t i : nest) {
        if (frames_[i].loop->for_kind == ir::ForKind::kThreadBinding && frames_[i].loop->thread_tag == tag) {
          return frames_[i].extent;
        }
      }
      return 1.0;
    };
    const double tx = first_extent("threadIdx.x"), ty = first_extent("threadIdx.y"), tz = first_extent("threadIdx.z");
    row.set(column(StoreColumn::blockIdx_x_len), first_extent("blockIdx.x"));
    row.set(column(StoreColumn::blockIdx_y_len), first_extent("blockIdx.y"));
    row.set(column(StoreColumn::blockIdx_z_len), first_extent("blockIdx.z"));
    row.set(column(StoreColumn::threadIdx_x_len), tx);
    row.set(column(StoreColumn::threadIdx_y_len), ty);
    row.set(column(StoreColumn::threadIdx_z_len), tz);
    row.set(column(StoreColumn::threads_per_block), tx * ty * tz);
    double vthreads = 1;
    for (const LoopFrame& f : frames_) {
      if (f.loop->for_kind == ir::ForKind::kThreadBinding && f.loop->thread_tag.rfind("vthread", 0) == 0) {
        vthreads *= f.extent;
      }
      if (f.loop->for_kind == ir::ForKind::kThreadBinding && f.loop->thread_tag == "threadIdx.x") {
        thread_x = f.loop->loop_var.get();
      }
    }
    row.set(column(StoreColumn::vthread_len), vthreads);
  }
  bool tensor_core = false;
  for (const LoopFrame& f : frames_) tensor_core |= f.tensor_core;
  row.set_raw(column(StoreColumn::tensor_core), tensor_core ? 1 : 0);

  // ---- Footprints: every loop at its first value, then relaxed from the innermost out.
  std::vector<BufferFeatures> buffers(scanner.uses.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    buffers[b].use = &scanner.uses[b];
    buffers[b].footprint.assign(n, 1);
  }
  for (size_t i = 0; i < frames_.size(); ++i) ranges_.set(i, frames_[i].min, frames_[i].min);
  std::vector<double> touched_bytes(n, 0);  // all buffers, loops [level, n) relaxed
  for (size_t level = n; level-- > 0;) {
    const LoopFrame& f = frames_[nest[level]];
    ranges_.set(nest[level], f.min, f.min + std::max(0.0, f.extent - 1));
    for (BufferFeatures& bf : buffers) {
      const ir::BufferNode* buffer = bf.use->buffer;
      double elements = 1;
      bf.access_shape.assign(buffer->shape.size(), 1);
      for (size_t d = 0; d < buffer->shape.size(); ++d) {
        const double dim = static_cast<double>(buffer->shape[d]);
        double lo = dim, hi = -1;
        for (const auto* indices : bf.use->indices) {
          Interval r = bound((*indices)[d], ranges_);
          if (!r.known) r = {0, dim - 1, true};
          lo = std::min(lo, std::max(0.0, r.lo));
          hi = std::max(hi, std::min(dim - 1, r.hi));
        }
        bf.access_shape[d] = std::max(0.0, hi - lo + 1);
        elements *= bf.access_shape[d];
      }
      bf.footprint[level] = elements;
      touched_bytes[level] += elements * buffer->dtype.bytes();
      auto& under = touched_[f.loop];
      auto it = std::find_if(under.begin(), under.end(), [&](const auto& e) { return e.first == buffer; });
      if (it == under.end()) {
        under.push_back({buffer, {elements}});
      } else {
        it->second.push_back(elements);
      }
    }
  }
  for (size_t i = 0; i < frames_.size(); ++i) {
    ranges_.set(i, frames_[i].min, frames_[i].min + std::max(0.0, frames_[i].extent - 1));
  }

  // ---- Strides, lines, reuse per buffer.
  double one_iteration_bytes = 0;
  for (const BufferFeatures& bf : buffers) one_iteration_bytes += bf.use->buffer->dtype.bytes();
  const double line = static_cast<double>(options_.cache_line_bytes);
  for (BufferFeatures& bf : buffers) {
    const ir::BufferNode* buffer = bf.use->buffer;
    const double elem_bytes = buffer->dtype.bytes();
    const std::vector<double> strides = strides_of(buffer);
    // The innermost loop that moves the access, its stride, and the loops inside it.
    double min_stride = 0, non_strided_prod = 1;
    size_t moving = n;
    for (size_t level = n; level-- > 0;) {
      min_stride = var_stride(*bf.use, strides, frames_[nest[level]].loop->loop_var.get());
      if (min_stride != 0) {
        moving = level;
        break;
      }
      non_strided_prod *= frames_[nest[level]].extent;
    }
    if (moving == n) non_strided_prod = 1;
    bf.innermost_stride = (n > 0 && moving == n - 1) ? min_stride : 0;
    if (thread_x != nullptr) bf.thread_x_stride = var_stride(*bf.use, strides, thread_x);
    // Contiguous bytes of the footprint: the innermost dimension's run, extended outwards
    // while inner dimensions are covered whole.
    double contiguous = elem_bytes;
    for (size_t d = buffer->shape.size(); d-- > 0;) {
      const double covered = n > 0 ? bf.access_shape[d] : 1;
      contiguous *= covered;
      if (covered != static_cast<double>(buffer->shape[d])) break;
    }
    bf.bytes = elem_bytes * prod;
    if (n == 0) {
      bf.unique_bytes = elem_bytes;
      bf.lines = bf.unique_lines = 1;
    } else {
      bf.unique_bytes = bf.footprint[0] * elem_bytes;
      bf.lines = std::max(1.0, prod / non_strided_prod * std::min(1.0, min_stride * elem_bytes / line));
      bf.unique_lines = std::max(1.0, bf.unique_bytes / std::min(line, contiguous));
    }
    // Reuse: the innermost loop that does not move the access repeats it (loop reuse);
    // before that, a loop under which earlier stores touched the buffer too (serial).
    for (size_t level = n; level-- > 0;) {
      const ir::ForNode* loop = frames_[nest[level]].loop;
      bool used = false;
      for (const auto* indices : bf.use->indices) {
        for (const ir::Expr& index : *indices) used = used || uses_var(index, loop->loop_var.get());
      }
      if (!used) {
        bf.reuse = BufferFeatures::Reuse::kLoop;
        bf.reuse_count = frames_[nest[level]].extent;
        bf.reuse_iters = 1;
        for (size_t inner = level + 1; inner < n; ++inner) bf.reuse_iters *= frames_[nest[inner]].extent;
        if (level == n - 1) {
          bf.reuse_bytes = one_iteration_bytes;
        } else {
          bf.reuse_bytes = 0;
          for (const auto& [other, counts] : touched_[frames_[nest[level + 1]].loop]) {
            double sum = 0;
            for (double e : counts) sum += e;
            bf.reuse_bytes += sum * other->dtype.bytes();
          }
        }
        break;
      }
      const auto& under = touched_[loop];
      auto it = std::find_if(under.begin(), under.end(), [&](const auto& e) { return e.first == buffer; });
      if (it != under.end() && it->second.size() >= 2) {
        const double extent = std::max(1.0, frames_[nest[level]].extent);
        bf.reuse = BufferFeatures::Reuse::kSerial;
        bf.reuse_count = static_cast<double>(it->second.size() - 1);
        bf.reuse_iters = *std::min_element(it->second.begin(), it->second.end()) / extent;
        double bytes = 0;
        for (const auto& [other, counts] : under) {
          double sum = 0;
          for (double e : counts) sum += e;
          bytes += sum * other->dtype.bytes();
        }
        bf.reuse_bytes = bytes / extent;
        break;
      }
    }
  }
  std::sort(buffers.begin(), buffers.end(), [](const BufferFeatures& a, const BufferFeatures& b) {
    if (a.lines != b.lines) return a.lines > b.lines;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.use->buffer->name < b.use->buffer->name;
  });
  for (size_t slot = 0; slot < buffers.size() && slot < static_cast<size_t>(kFeatureBufferSlots); ++slot) {
    const BufferFeatures& bf = buffers[slot];
    const int s = static_cast<int>(slot);
    const AccessKind kind = bf.use->kind;
    row.set_raw(column(s, BufferColumn::is_read), kind == AccessKind::kRead ? 1 : 0);
    row.set_raw(column(s, BufferColumn::is_write), kind == AccessKind::kWrite ? 1 : 0);
    row.set_raw(column(s, BufferColumn::is_read_write), kind == AccessKind::kReadWrite ? 1 : 0);
    const std::string& scope = bf.use->buffer->scope;
    const bool shared = scope.rfind("shared", 0) == 0;
    const bool global = scope == "global";
    row.set_raw(column(s, BufferColumn::scope_global), global ? 1 : 0);
    row.set_raw(column(s, BufferColumn::scope_shared), shared ? 1 : 0);
    row.set_raw(column(s, BufferColumn::scope_local), !global && !shared ? 1 : 0);
    row.set(column(s, BufferColumn::bytes), bf.bytes);
    row.set(column(s, BufferColumn::unique_bytes), bf.unique_bytes);
    row.set(column(s, BufferColumn::lines), bf.lines);
    row.set(column(s, BufferColumn::unique_lines), bf.unique_lines);
    row.set_raw(column(s, BufferColumn::reuse_loop), bf.reuse == BufferFeatures::Reuse::kLoop ? 1 : 0);
    row.set_raw(column(s, BufferColumn::reuse_serial), bf.reuse == BufferFeatures::Reuse::kSerial ? 1 : 0);
    row.set_raw(column(s, BufferColumn::reuse_none), bf.reuse == BufferFeatures::Reuse::kNone ? 1 : 0);
    row.set(column(s, BufferColumn::reuse_distance_iters), bf.reuse_iters);
    row.set(column(s, BufferColumn::reuse_distance_bytes), bf.reuse_bytes);
    row.set(column(s, BufferColumn::reuse_count), bf.reuse_count);
    const double per = bf.reuse_count > 0 ? bf.reuse_count : 0.5;
    row.set(column(s, BufferColumn::bytes_per_reuse), bf.bytes / per);
    row.set(column(s, BufferColumn::unique_bytes_per_reuse), bf.unique_bytes / per);
    row.set(column(s, BufferColumn::lines_per_reuse), bf.lines / per);
    row.set(column(s, BufferColumn::unique_lines_per_reuse), bf.unique_lines / per);
    row.set(column(s, BufferColumn::innermost_stride), bf.innermost_stride);
    row.set(column(s, BufferColumn::thread_x_stride), bf.thread_x_stride);
  }

  // ---- Arithmetic intensity: float ops over bytes touched, from the innermost loop out,
  // sampled at evenly spaced fractions of the store's float ops (linear in between).
  const double ops_per_iteration = prod > 0 ? c.float_ops() : 0;
  if (n > 0 && ops_per_iteration > 0) {
    std::vector<double> ops(n), intensity(n);  // index 0 = innermost level
    double cumulative = ops_per_iteration;
    for (size_t k = 0; k < n; ++k) {
      const size_t level = n - 1 - k;
      cumulative *= frames_[nest[level]].extent;
      ops[k] = cumulative;
      intensity[k] = touched_bytes[level] > 0 ? cumulative / touched_bytes[level] : 0;
    }
    const double total = ops.back();
    size_t p = 0;
    for (int sample = 0; sample < kIntensityCurveSamples; ++sample) {
      const double target = total * (sample + 1) / kIntensityCurveSamples;
      while (p + 1 < n && ops[p] < target - 1e-4) ++p;
      double value = intensity[p];
      if (p > 0 && ops[p] != ops[p - 1]) {
        value = intensity[p - 1] + (intensity[p] - intensity[p - 1]) * (target - ops[p - 1]) / (ops[p] - ops[p - 1]);
      }
      row.set(curve_column(sample), value);
    }
  }

  // ---- Allocation of the stored buffer, outer loops.
  if (auto it = allocs_.find(store->buffer.get()); it != allocs_.end()) {
    const AllocInfo& a = it->second;
    row.set(column(LoopColumn::alloc_size), a.bytes);
    row.set(column(LoopColumn::alloc_prod), a.elements * a.outer_prod);
    row.set(column(LoopColumn::alloc_outer_prod), a.outer_prod);
    row.set(column(LoopColumn::alloc_inner_prod), a.outer_prod > 0 ? prod / a.outer_prod : 0);
  }
  row.set(column(LoopColumn::outer_prod), prod);
  row.set(column(LoopColumn::num_loops), static_cast<double>(n));
  int64_t auto_unroll = 0;
  for (const LoopFrame& f : frames_) {
    if (f.auto_unroll > 0) auto_unroll = f.auto_unroll;
  }
  row.set(column(LoopColumn::auto_unroll_max_step), static_cast<double>(auto_unroll));
}

}  // namespace

ProgramFeatures extract_prepared_features(const ir::PrimFunc& prepared, const lower::Target& target,
                                          const FeatureOptions& options) {
  Collector collector(target, options);
  collector.collect(prepared);
  return std::move(collector.result);
}

ProgramFeatures extract_program_features(const ir::PrimFunc& scheduled, const lower::Target& target,
                                         const FeatureOptions& options) {
  return extract_prepared_features(prepare_for_features(scheduled, target), target, options);
}

}  // namespace dragon::search
