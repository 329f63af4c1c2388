// The structural hash: FNV-1a over a walk in the same order as structural_equal.cc.
// Defined variables and buffers hash by their definition's ordinal, never by name or
// address, so renamed copies hash alike and the value is the same on every machine.
#include "dragon/ir/structural_hash.h"

#include <cmath>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "dragon/ir/functor.h"

namespace dragon::ir {
namespace {

class Hasher : public ExprFunctor<void>, public StmtFunctor<void> {
 public:
  using ExprFunctor<void>::visit;
  using StmtFunctor<void>::visit;

  uint64_t value() const { return hash_; }

  void function(const PrimFunc& f) {
    mix_string(f->name);
    annotations(f->attrs);
    mix(f->params.size());
    for (const Param& p : f->params) {
      mix(static_cast<uint64_t>(p.role));
      mix(static_cast<uint64_t>(p.domain.kind));
      mix(static_cast<uint64_t>(p.domain.lo));
      mix(static_cast<uint64_t>(p.domain.hi));
      mix(static_cast<uint64_t>(p.domain.total));
      mix(static_cast<uint64_t>(p.domain.max_len));
      define_buffer(p.buffer);
    }
    stmt(f->body);
  }

  void expr(const Expr& e) {
    if (!e.defined()) return mix(0xE0);
    mix(static_cast<uint64_t>(e.kind()) + 1);
    mix_dtype(e.dtype());
    visit(e);
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return mix(0x50);
    mix(static_cast<uint64_t>(s.kind()) + 1);
    visit(s);
  }

 private:
  // FNV-1a, one byte at a time.
  void mix(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash_ ^= (v >> (8 * i)) & 0xff;
      hash_ *= 0x100000001b3ULL;
    }
  }
  void mix_string(std::string_view s) {
    mix(s.size());
    for (char c : s) {
      hash_ ^= static_cast<unsigned char>(c);
      hash_ *= 0x100000001b3ULL;
    }
  }
  void mix_double(double d) {
    if (std::isnan(d)) return mix(0x7ff8000000000000ULL);  // every NaN alike, as in equality
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    mix(bits);
  }
  void mix_dtype(DataType t) {
    mix((static_cast<uint64_t>(t.code()) << 32) | (static_cast<uint64_t>(t.bits()) << 16) |
        static_cast<uint64_t>(t.lanes()));
  }
  void mix_buffer_type(const Buffer& b) {
    mix_dtype(b->dtype);
    mix(b->shape.size());
    for (int64_t extent : b->shape) mix(static_cast<uint64_t>(extent));
    mix_string(b->scope);
  }

  void annotations(const Annotations& a) {
    mix(a.size());
    for (const auto& [key, value] : a) {
      mix_string(key);
      mix(value.index());
      if (const auto* i = std::get_if<int64_t>(&value)) {
        mix(static_cast<uint64_t>(*i));
      } else if (const auto* d = std::get_if<double>(&value)) {
        mix_double(*d);
      } else {
        mix_string(std::get<std::string>(value));
      }
    }
  }

  void define_var(const Var& v) {
    if (!v.defined()) return mix(0xD0);
    mix_dtype(v.dtype());
    var_ids_[v.get()] = next_var_++;
  }
  void define_buffer(const Buffer& b) {
    if (!b.defined()) return mix(0xD1);
    mix_buffer_type(b);
    buffer_ids_[b.get()] = next_buffer_++;
  }
  // Free variables and buffers (not defined in the walk) hash by name and type.
  void buffer_use(const Buffer& b) {
    if (!b.defined()) return mix(0xB0);
    if (auto it = buffer_ids_.find(b.get()); it != buffer_ids_.end()) {
      mix(0xB1);
      mix(it->second);
    } else {
      mix(0xB2);
      mix_string(b->name);
      mix_buffer_type(b);
    }
  }

  void exprs(const std::vector<Expr>& v) {
    mix(v.size());
    for (const Expr& e : v) expr(e);
  }
  void regions(const std::vector<BufferRegion>& regions) {
    mix(regions.size());
    for (const BufferRegion& r : regions) {
      buffer_use(r.buffer);
      mix(r.region.size());
      for (const Range& range : r.region) {
        expr(range.min);
        expr(range.extent);
      }
    }
  }

  // Expressions: kind and type are mixed by expr().
  void visit_(const IntImmNode* op) override { mix(static_cast<uint64_t>(op->value)); }
  void visit_(const FloatImmNode* op) override { mix_double(op->value); }
  void visit_(const VarNode* op) override {
    if (auto it = var_ids_.find(op); it != var_ids_.end()) {
      mix(0xA1);
      mix(it->second);
    } else {
      mix(0xA2);
      mix_string(op->name);
    }
  }
#define DRAGON_BINARY_NODE(Name)               \
  void visit_(const Name##Node* op) override { \
    expr(op->a);                               \
    expr(op->b);                               \
  }
#include "dragon/ir/nodes.def"
  void visit_(const NotNode* op) override { expr(op->a); }
  void visit_(const SelectNode* op) override {
    expr(op->condition);
    expr(op->true_value);
    expr(op->false_value);
  }
  void visit_(const CastNode* op) override { expr(op->value); }
  void visit_(const CallNode* op) override {
    mix(static_cast<uint64_t>(op->op));
    exprs(op->args);
  }
  void visit_(const BufferLoadNode* op) override {
    buffer_use(op->buffer);
    exprs(op->indices);
  }

  // Statements: kind is mixed by stmt().
  void visit_(const ForNode* op) override {
    mix(static_cast<uint64_t>(op->for_kind));
    mix_string(op->thread_tag);
    annotations(op->annotations);
    expr(op->min);
    expr(op->extent);
    define_var(op->loop_var);
    stmt(op->body);
  }
  void visit_(const BlockNode* op) override {
    mix_string(op->name);
    annotations(op->annotations);
    mix(op->iter_vars.size());
    mix(op->alloc_buffers.size());
    for (const IterVar& iv : op->iter_vars) {
      mix(static_cast<uint64_t>(iv.kind));
      expr(iv.dom.min);
      expr(iv.dom.extent);
    }
    for (const IterVar& iv : op->iter_vars) define_var(iv.var);
    regions(op->reads);
    regions(op->writes);
    for (const Buffer& b : op->alloc_buffers) define_buffer(b);
    stmt(op->init);
    stmt(op->body);
  }
  void visit_(const BlockRealizeNode* op) override {
    exprs(op->iter_values);
    expr(op->predicate);
    stmt(op->block);
  }
  void visit_(const SeqStmtNode* op) override {
    mix(op->seq.size());
    for (const Stmt& s : op->seq) stmt(s);
  }
  void visit_(const IfThenElseNode* op) override {
    expr(op->condition);
    stmt(op->then_case);
    stmt(op->else_case);
  }
  void visit_(const BufferStoreNode* op) override {
    buffer_use(op->buffer);
    expr(op->value);
    exprs(op->indices);
  }
  void visit_(const AllocateNode* op) override {
    define_buffer(op->buffer);
    stmt(op->body);
  }
  void visit_(const EvaluateNode* op) override { expr(op->value); }

  uint64_t hash_ = 0xcbf29ce484222325ULL;
  std::unordered_map<const VarNode*, uint64_t> var_ids_;
  std::unordered_map<const BufferNode*, uint64_t> buffer_ids_;
  uint64_t next_var_ = 0;
  uint64_t next_buffer_ = 0;
};

}  // namespace

uint64_t structural_hash(const PrimFunc& func) {
  Hasher hasher;
  if (func.defined()) hasher.function(func);
  return hasher.value();
}

uint64_t structural_hash(const Stmt& stmt) {
  Hasher hasher;
  hasher.stmt(stmt);
  return hasher.value();
}

uint64_t structural_hash(const Expr& expr) {
  Hasher hasher;
  hasher.expr(expr);
  return hasher.value();
}

}  // namespace dragon::ir
