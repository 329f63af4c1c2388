// A TE-like builder: declare inputs, describe each stage as a compute, reduction or scan
// over an index space, and get a PrimFunc whose root block holds one loop nest and block
// per stage (the unscheduled form that schedules start from). Not a scheduler.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/ir/op.h"

namespace dragon::ops {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::Var;

// A buffer made by the builder; calling it loads an element.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Buffer buffer) : buffer_(std::move(buffer)) {}

  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Indices>
  Expr operator()(Indices... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }

  const Buffer& buffer() const { return buffer_; }
  const std::vector<int64_t>& shape() const { return buffer_->shape; }
  int64_t dim(int axis) const;  // negative axes count from the end
  int ndim() const { return buffer_.ndim(); }
  DataType dtype() const { return buffer_->dtype; }
  const std::string& name() const { return buffer_->name; }

 private:
  Buffer buffer_;
};

// How a reduction combines: acc = combine(acc, x), starting from identity.
struct Reducer {
  std::function<Expr(Expr acc, Expr x)> combine;
  std::function<Expr(DataType)> identity;

  static Reducer sum();
  static Reducer product();
  static Reducer maximum();
  static Reducer minimum();
};

using IndexVars = std::vector<Var>;

class FunctionBuilder {
 public:
  explicit FunctionBuilder(std::string name);

  // An input parameter, in declaration order.
  Tensor input(std::string name, DataType dtype, std::vector<int64_t> shape,
               ir::ValueDomain domain = ir::ValueDomain::real());

  // out[i...] = body(i...). The result type is the body's type.
  Tensor compute(std::string name, std::vector<int64_t> shape, const std::function<Expr(const IndexVars&)>& body);

  // out[i...] = reducer over r... of body(i..., r...): a block with spatial iteration
  // variables for `shape`, reduce ones for `reduce_shape`, and an init. `dtype` is the
  // accumulator and output type (the body is cast to it).
  Tensor reduce(std::string name, std::vector<int64_t> shape, std::vector<int64_t> reduce_shape, DataType dtype,
                const Reducer& reducer, const std::function<Expr(const IndexVars& i, const IndexVars& r)>& body);

  // Index of the first maximum (or minimum) of body over r... for each i..., as i64.
  // Ties keep the earliest index, like torch.argmax. `reduce_index(r)` turns the reduce
  // variables into the reported index (for one reduce axis: r[0]).
  Tensor arg_reduce(std::string name, std::vector<int64_t> shape, std::vector<int64_t> reduce_shape, bool find_max,
                    const std::function<Expr(const IndexVars& i, const IndexVars& r)>& body,
                    const std::function<Expr(const IndexVars& r)>& reduce_index);

  // An inclusive scan along `axis`: out[i] = first(i) at the first position along the
  // axis, else combine(i, previous) where previous is the output at the position before
  // (after, when `reverse`). The axis is an ordered iteration variable: a real scan, linear
  // work, not a reduction per element.
  Tensor scan(std::string name, std::vector<int64_t> shape, int axis, bool reverse,
              const std::function<Expr(const IndexVars& i)>& first,
              const std::function<Expr(const IndexVars& i, Expr previous)>& combine);

  // A buffer written by custom stages (scatters); declare, then fill it with custom().
  Tensor declare(std::string name, DataType dtype, std::vector<int64_t> shape);
  // A block over `extents` with iteration kinds `kinds` whose body is built by `body`
  // from the block's iteration variables (a store, or an if around stores).
  void custom(std::string name, std::vector<int64_t> extents, std::vector<ir::IterKind> kinds,
              const std::function<ir::Stmt(const IndexVars&)>& body);

  // The function: inputs in declaration order, then `outputs` in the given order; every
  // other stage's buffer is an intermediate allocated in the root block.
  ir::PrimFunc build(const std::vector<Tensor>& outputs, ir::Annotations attrs = {});

 private:
  struct Stage {
    ir::Stmt loop_nest;
    std::vector<Buffer> written;
  };

  // Index type of loops over `extent`: i32 unless the extent does not fit.
  static DataType index_type(int64_t extent);
  IndexVars make_vars(const std::string& prefix, const std::vector<int64_t>& extents) const;
  std::string unique_name(const std::string& base);
  // Maps the stage's loop variables to the block's bindings (identity when empty).
  using BindingFn = std::function<std::vector<Expr>(const IndexVars& loop_vars)>;
  // Wraps a block over `block_vars` (domains `extents`, kinds `kinds`) in one loop per
  // variable, bound by `bind`, and records it as a stage.
  void add_stage(const std::string& name, const IndexVars& block_vars, const std::vector<int64_t>& extents,
                 const std::vector<ir::IterKind>& kinds, ir::Stmt body, ir::Stmt init,
                 std::vector<Buffer> written, const BindingFn& bind = {});

  std::string name_;
  std::vector<ir::Param> inputs_;
  std::vector<Stage> stages_;
  std::vector<std::string> used_names_;
};

}  // namespace dragon::ops
