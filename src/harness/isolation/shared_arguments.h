// The argument region of one run: a sealed memfd (its size fixed, so the child cannot
// shrink it under the parent's mapping) holding tensors at a layout's offsets, mapped in
// the parent to copy them in before the run and out after it. A run's region holds its
// arguments (layout_arguments), each in a red zone the parent fills and checks; a timing
// job's holds its input sets and call slots.
#pragma once

#include <string>
#include <vector>

#include "dragon/harness/kernel_runner_protocol.h"
#include "dragon/support/expected.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness::isolation {

class SharedArguments {
 public:
  // A region holding a copy of `args`, each in a red zone of the given kind, filled.
  static Expected<SharedArguments> create(const std::vector<tensor::HostTensor>& args,
                                                   RedZones red_zones = RedZones::kNone);
  // A zero-filled region of `layout` (pages untouched by either side cost no memory), its
  // red zones filled.
  static Expected<SharedArguments> create(kernel_runner::ArgumentLayout layout);
  SharedArguments(SharedArguments&& other) noexcept;
  SharedArguments& operator=(SharedArguments&&) = delete;
  SharedArguments(const SharedArguments&) = delete;
  ~SharedArguments();

  int fd() const { return fd_; }
  // The parent's mapping (a timing job carried out in this process runs on it).
  unsigned char* data() { return data_; }
  const kernel_runner::ArgumentLayout& layout() const { return layout_; }
  // Copies every tensor back from the region (outputs, and inputs a kernel may have changed).
  void copy_out(std::vector<tensor::HostTensor>& args) const;
  // Slice `slice` from `tensor`, or into it; the sizes must agree (RuntimeError otherwise).
  void write(size_t slice, const tensor::HostTensor& tensor);
  void read(size_t slice, tensor::HostTensor& tensor) const;
  // red_zone_violations (red_zones.h) of this region's zones after a run.
  std::string red_zone_violations(const std::vector<std::string>& names) const;

 private:
  SharedArguments(int fd, unsigned char* data, kernel_runner::ArgumentLayout layout)
      : fd_(fd), data_(data), layout_(std::move(layout)) {}
  const kernel_runner::ArgumentSlice& checked_slice(size_t slice, const tensor::HostTensor& tensor) const;
  int fd_ = -1;
  unsigned char* data_ = nullptr;
  kernel_runner::ArgumentLayout layout_;
};

}  // namespace dragon::harness::isolation
