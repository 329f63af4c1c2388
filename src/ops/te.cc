// The TE-like builder: each stage becomes a loop nest around one block in the root block.
#include "dragon/ops/te.h"

#include <algorithm>

#include "dragon/ir/block_access.h"
#include "dragon/ir/verify.h"
#include "dragon/support/error.h"

namespace dragon::ops {

using ir::BlockNode;
using ir::BlockRealizeNode;
using ir::BufferStoreNode;
using ir::ForKind;
using ir::ForNode;
using ir::IterKind;
using ir::IterVar;
using ir::Range;
using ir::Stmt;

Expr Tensor::operator()(std::vector<Expr> indices) const {
  DRAGON_CHECK(static_cast<int>(indices.size()) == ndim(), "{} has rank {}, indexed with {} indices", name(), ndim(),
               indices.size());
  return ir::BufferLoadNode::make(buffer_, std::move(indices));
}

int64_t Tensor::dim(int axis) const {
  if (axis < 0) axis += ndim();
  DRAGON_CHECK(axis >= 0 && axis < ndim(), "axis {} of {} with rank {}", axis, name(), ndim());
  return shape()[axis];
}

Reducer Reducer::sum() {
  return {[](Expr acc, Expr x) { return acc + x; }, [](DataType t) { return ir::make_zero(t); }};
}
Reducer Reducer::product() {
  return {[](Expr acc, Expr x) { return acc * x; }, [](DataType t) { return ir::make_one(t); }};
}
Reducer Reducer::maximum() {
  return {[](Expr acc, Expr x) { return ir::max(acc, x); }, [](DataType t) { return ir::min_value(t); }};
}
Reducer Reducer::minimum() {
  return {[](Expr acc, Expr x) { return ir::min(acc, x); }, [](DataType t) { return ir::max_value(t); }};
}

FunctionBuilder::FunctionBuilder(std::string name) : name_(std::move(name)) {}

DataType FunctionBuilder::index_type(int64_t extent) {
  return extent > ir::int_max_value(DataType::i32()) ? DataType::i64() : DataType::i32();
}

IndexVars FunctionBuilder::make_vars(const std::string& prefix, const std::vector<int64_t>& extents) const {
  IndexVars vars;
  for (size_t i = 0; i < extents.size(); ++i) {
    vars.emplace_back("v" + prefix + std::to_string(i), index_type(extents[i]));
  }
  return vars;
}

std::string FunctionBuilder::unique_name(const std::string& base) {
  std::string name = base;
  for (int suffix = 1; std::find(used_names_.begin(), used_names_.end(), name) != used_names_.end(); ++suffix) {
    name = base + "_" + std::to_string(suffix);
  }
  used_names_.push_back(name);
  return name;
}

Tensor FunctionBuilder::input(std::string name, DataType dtype, std::vector<int64_t> shape, ir::ValueDomain domain) {
  Buffer buffer = Buffer::make(unique_name(name), dtype, std::move(shape));
  inputs_.push_back(ir::Param{buffer, ir::ParamRole::kInput, domain});
  return Tensor(buffer);
}

void FunctionBuilder::add_stage(const std::string& name, const IndexVars& block_vars,
                                const std::vector<int64_t>& extents, const std::vector<IterKind>& kinds, Stmt body,
                                Stmt init, std::vector<Buffer> written, const BindingFn& bind) {
  std::vector<IterVar> iter_vars;
  IndexVars loop_vars;
  for (size_t i = 0; i < block_vars.size(); ++i) {
    DataType type = block_vars[i].dtype();
    iter_vars.push_back(IterVar{block_vars[i], Range::from_extent(ir::make_const(type, static_cast<double>(extents[i]))),
                                kinds[i]});
    // Loop i0 binds block variable vi0.
    loop_vars.emplace_back(block_vars[i].name().substr(1), type);
  }
  ir::BlockAccessRegions regions = ir::detect_block_access_regions(body, init);
  ir::Block block = BlockNode::make(name, std::move(iter_vars), std::move(regions.reads), std::move(regions.writes),
                                    std::move(body), std::move(init));
  std::vector<Expr> bindings = bind ? bind(loop_vars) : std::vector<Expr>(loop_vars.begin(), loop_vars.end());
  Stmt nest = BlockRealizeNode::make(std::move(bindings), ir::make_bool(true), std::move(block));
  for (size_t i = loop_vars.size(); i-- > 0;) {
    DataType type = loop_vars[i].dtype();
    nest = ForNode::make(loop_vars[i], ir::make_zero(type), ir::make_const(type, static_cast<double>(extents[i])),
                         ForKind::kSerial, std::move(nest));
  }
  stages_.push_back(Stage{std::move(nest), std::move(written)});
}

Tensor FunctionBuilder::compute(std::string name, std::vector<int64_t> shape,
                                const std::function<Expr(const IndexVars&)>& body) {
  name = unique_name(name);
  IndexVars vars = make_vars("i", shape);
  Expr value = body(vars);
  Buffer out = Buffer::make(name, value.dtype().element_of(), shape);
  Stmt store = BufferStoreNode::make(out, value, std::vector<Expr>(vars.begin(), vars.end()));
  add_stage(name, vars, shape, std::vector<IterKind>(shape.size(), IterKind::kSpatial), store, Stmt(), {out});
  return Tensor(out);
}

Tensor FunctionBuilder::reduce(std::string name, std::vector<int64_t> shape, std::vector<int64_t> reduce_shape,
                               DataType dtype, const Reducer& reducer,
                               const std::function<Expr(const IndexVars&, const IndexVars&)>& body) {
  name = unique_name(name);
  IndexVars spatial = make_vars("i", shape);
  IndexVars reduction = make_vars("r", reduce_shape);
  Expr value = ir::cast(dtype, body(spatial, reduction));
  Buffer out = Buffer::make(name, dtype, shape);
  std::vector<Expr> out_index(spatial.begin(), spatial.end());
  Stmt init = BufferStoreNode::make(out, reducer.identity(dtype), out_index);
  Expr acc = ir::BufferLoadNode::make(out, out_index);
  Stmt update = BufferStoreNode::make(out, reducer.combine(acc, value), out_index);

  IndexVars all = spatial;
  all.insert(all.end(), reduction.begin(), reduction.end());
  std::vector<int64_t> extents = shape;
  extents.insert(extents.end(), reduce_shape.begin(), reduce_shape.end());
  std::vector<IterKind> kinds(shape.size(), IterKind::kSpatial);
  kinds.insert(kinds.end(), reduce_shape.size(), IterKind::kReduce);
  add_stage(name, all, extents, kinds, update, init, {out});
  return Tensor(out);
}

Tensor FunctionBuilder::arg_reduce(std::string name, std::vector<int64_t> shape, std::vector<int64_t> reduce_shape,
                                   bool find_max, const std::function<Expr(const IndexVars&, const IndexVars&)>& body,
                                   const std::function<Expr(const IndexVars&)>& reduce_index) {
  name = unique_name(name);
  IndexVars spatial = make_vars("i", shape);
  IndexVars reduction = make_vars("r", reduce_shape);
  Expr value = body(spatial, reduction);
  Expr index = ir::cast(DataType::i64(), reduce_index(reduction));
  Buffer best = Buffer::make(unique_name(name + "_value"), value.dtype(), shape);
  Buffer out = Buffer::make(name, DataType::i64(), shape);
  std::vector<Expr> at(spatial.begin(), spatial.end());

  Expr current = ir::BufferLoadNode::make(best, at);
  // Strict comparison keeps the first extreme; the index store reads the old best, so
  // it goes first.
  Expr better = find_max ? value > current : value < current;
  Stmt init = ir::SeqStmtNode::make({
      BufferStoreNode::make(best, find_max ? ir::min_value(value.dtype()) : ir::max_value(value.dtype()), at),
      BufferStoreNode::make(out, ir::make_zero(DataType::i64()), at),
  });
  Stmt update = ir::SeqStmtNode::make({
      BufferStoreNode::make(out, ir::select(better, index, ir::BufferLoadNode::make(out, at)), at),
      BufferStoreNode::make(best, ir::select(better, value, current), at),
  });
  IndexVars all = spatial;
  all.insert(all.end(), reduction.begin(), reduction.end());
  std::vector<int64_t> extents = shape;
  extents.insert(extents.end(), reduce_shape.begin(), reduce_shape.end());
  std::vector<IterKind> kinds(shape.size(), IterKind::kSpatial);
  kinds.insert(kinds.end(), reduce_shape.size(), IterKind::kReduce);
  add_stage(name, all, extents, kinds, update, init, {best, out});
  return Tensor(out);
}

Tensor FunctionBuilder::scan(std::string name, std::vector<int64_t> shape, int axis, bool reverse,
                             const std::function<Expr(const IndexVars&)>& first,
                             const std::function<Expr(const IndexVars&, Expr)>& combine) {
  name = unique_name(name);
  if (axis < 0) axis += static_cast<int>(shape.size());
  DRAGON_CHECK(axis >= 0 && axis < static_cast<int>(shape.size()), "scan {} over axis {} of rank {}", name, axis,
               shape.size());
  IndexVars vars = make_vars("i", shape);
  Expr position = vars[axis];
  Expr start = ir::make_const(position.dtype(), reverse ? static_cast<double>(shape[axis] - 1) : 0.0);
  Expr first_value = first(vars);
  Buffer out = Buffer::make(name, first_value.dtype().element_of(), shape);

  std::vector<Expr> at(vars.begin(), vars.end());
  std::vector<Expr> prev = at;
  prev[axis] = reverse ? position + 1 : position - 1;
  Expr previous = ir::BufferLoadNode::make(out, prev);
  // select() evaluates only its chosen operand, so the load before the start never runs.
  Expr value = ir::select(ir::eq(position, start), first_value, combine(vars, previous));
  Stmt store = BufferStoreNode::make(out, value, at);

  std::vector<IterKind> kinds(shape.size(), IterKind::kSpatial);
  kinds[axis] = IterKind::kOrdered;
  BindingFn bind;
  if (reverse) {
    // The loop runs forward; the block variable walks the axis backwards.
    bind = [&](const IndexVars& loops) {
      std::vector<Expr> values(loops.begin(), loops.end());
      values[axis] = ir::make_const(position.dtype(), static_cast<double>(shape[axis] - 1)) - loops[axis];
      return values;
    };
  }
  add_stage(name, vars, shape, kinds, store, Stmt(), {out}, bind);
  return Tensor(out);
}

Tensor FunctionBuilder::declare(std::string name, DataType dtype, std::vector<int64_t> shape) {
  return Tensor(Buffer::make(unique_name(name), dtype, std::move(shape)));
}

void FunctionBuilder::custom(std::string name, std::vector<int64_t> extents, std::vector<IterKind> kinds,
                             const std::function<Stmt(const IndexVars&)>& body) {
  name = unique_name(name);
  DRAGON_CHECK(extents.size() == kinds.size(), "custom stage {}: {} extents, {} kinds", name, extents.size(),
               kinds.size());
  IndexVars vars = make_vars("i", extents);
  Stmt stmt = body(vars);
  ir::BlockAccessRegions regions = ir::detect_block_access_regions(stmt, Stmt());
  std::vector<Buffer> written;
  for (const ir::BufferRegion& r : regions.writes) written.push_back(r.buffer);
  add_stage(name, vars, extents, kinds, stmt, Stmt(), written);
}

ir::PrimFunc FunctionBuilder::build(const std::vector<Tensor>& outputs, ir::Annotations attrs) {
  std::vector<ir::Param> params = inputs_;
  for (const Tensor& out : outputs) {
    bool is_input = std::any_of(inputs_.begin(), inputs_.end(),
                                [&](const ir::Param& p) { return p.buffer.same_as(out.buffer()); });
    DRAGON_CHECK(!is_input, "function {}: output {} is an input", name_, out.name());
    bool is_written = std::any_of(stages_.begin(), stages_.end(), [&](const Stage& s) {
      return std::any_of(s.written.begin(), s.written.end(), [&](const Buffer& b) { return b.same_as(out.buffer()); });
    });
    DRAGON_CHECK(is_written, "function {}: output {} is written by no stage", name_, out.name());
    params.push_back(ir::Param{out.buffer(), ir::ParamRole::kOutput, ir::ValueDomain::real()});
  }
  std::vector<Buffer> intermediates;
  std::vector<Stmt> nests;
  for (const Stage& stage : stages_) {
    nests.push_back(stage.loop_nest);
    for (const Buffer& b : stage.written) {
      bool is_param =
          std::any_of(params.begin(), params.end(), [&](const ir::Param& p) { return p.buffer.same_as(b); });
      bool seen = std::any_of(intermediates.begin(), intermediates.end(), [&](const Buffer& x) { return x.same_as(b); });
      if (!is_param && !seen) intermediates.push_back(b);
    }
  }
  DRAGON_CHECK(!nests.empty(), "function {} has no stages", name_);
  ir::Block root = BlockNode::make("root", {}, {}, {}, ir::SeqStmtNode::make(std::move(nests)), Stmt(),
                                   std::move(intermediates));
  Stmt body = BlockRealizeNode::make({}, ir::make_bool(true), std::move(root));
  ir::PrimFunc func = ir::PrimFunc::make(name_, std::move(params), std::move(body), std::move(attrs));
  if (ir::ir_checks_enabled()) ir::check_well_formed(func, "built by op " + name_);
  return func;
}

}  // namespace dragon::ops
