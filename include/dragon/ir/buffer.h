// Buffers: named, typed, statically shaped tensors in a memory scope (global, shared,
// local, tensor-core fragments). Identity is the node; the name is for printing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ir/dtype.h"
#include "dragon/support/intrusive_ptr.h"

namespace dragon::ir {

struct BufferNode : public RefCounted {
  BufferNode(std::string name, DataType dtype, std::vector<int64_t> shape, std::string scope)
      : name(std::move(name)), dtype(dtype), shape(std::move(shape)), scope(std::move(scope)) {}
  const std::string name;
  const DataType dtype;
  // Row-major, every extent >= 0. A rank-0 buffer holds one scalar.
  const std::vector<int64_t> shape;
  // "global", "shared", "shared.dyn", "local", "wmma.accumulator", ...
  const std::string scope;

  int64_t num_elements() const;
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(const BufferNode* node) : ptr_(const_cast<BufferNode*>(node)) {}
  static Buffer make(std::string name, DataType dtype, std::vector<int64_t> shape, std::string scope = "global");

  const BufferNode* get() const { return ptr_.get(); }
  const BufferNode* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_.defined(); }
  bool same_as(const Buffer& other) const { return ptr_.get() == other.ptr_.get(); }
  int ndim() const { return static_cast<int>(ptr_->shape.size()); }

 private:
  IntrusivePtr<BufferNode> ptr_;
};

}  // namespace dragon::ir
