// Buffer construction and size.
#include "dragon/ir/buffer.h"

#include "dragon/support/error.h"

namespace dragon::ir {

int64_t BufferNode::num_elements() const {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

Buffer Buffer::make(std::string name, DataType dtype, std::vector<int64_t> shape, std::string scope) {
  DRAGON_CHECK(!name.empty(), "buffer without a name");
  for (int64_t extent : shape) DRAGON_CHECK(extent >= 0, "buffer {} with extent {}", name, extent);
  DRAGON_CHECK(!scope.empty(), "buffer {} without a scope", name);
  return Buffer(new BufferNode(std::move(name), dtype, std::move(shape), std::move(scope)));
}

}  // namespace dragon::ir
