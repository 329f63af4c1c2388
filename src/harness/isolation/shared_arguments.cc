// SharedArguments (shared_arguments.h): memfd_create, seal, mmap, memcpy.
#include "shared_arguments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace dragon::harness::isolation {
namespace {

RuntimeFailure failure(const char* api) {
  return RuntimeFailure{api, std::string("argument region: ") + std::strerror(errno), "",
                                 "shared_arguments.cc"};
}

}  // namespace

Expected<SharedArguments> SharedArguments::create(kernel_runner::ArgumentLayout layout) {
  int fd = ::memfd_create("dragon-kernel-args", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return failure("memfd_create");
  if (::ftruncate(fd, static_cast<off_t>(layout.total_bytes)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    RuntimeFailure f = failure("ftruncate");
    ::close(fd);
    return f;
  }
  unsigned char* data = nullptr;
  if (layout.total_bytes > 0) {
    void* p = ::mmap(nullptr, layout.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      RuntimeFailure f = failure("mmap");
      ::close(fd);
      return f;
    }
    data = static_cast<unsigned char*>(p);
    if (layout.red_zones != RedZones::kNone) fill_red_zones(data, layout.red_zone_list());
  }
  return SharedArguments(fd, data, std::move(layout));
}

Expected<SharedArguments> SharedArguments::create(const std::vector<tensor::HostTensor>& args,
                                                           RedZones red_zones) {
  Expected<SharedArguments> region = create(kernel_runner::layout_arguments(args, red_zones));
  if (!region) return region;
  for (size_t i = 0; i < args.size(); ++i) region.value().write(i, args[i]);
  return region;
}

SharedArguments::SharedArguments(SharedArguments&& other) noexcept
    : fd_(other.fd_), data_(other.data_), layout_(std::move(other.layout_)) {
  other.fd_ = -1;
  other.data_ = nullptr;
}

SharedArguments::~SharedArguments() {
  if (data_ != nullptr) ::munmap(data_, layout_.total_bytes);
  if (fd_ >= 0) ::close(fd_);
}

const kernel_runner::ArgumentSlice& SharedArguments::checked_slice(size_t slice,
                                                                   const tensor::HostTensor& tensor) const {
  if (slice >= layout_.slices.size() || layout_.slices[slice].bytes != static_cast<uint64_t>(tensor.size_bytes())) {
    throw RuntimeError(RuntimeFailure{
        "SharedArguments", "slice " + std::to_string(slice) + " does not hold a tensor of " +
                               std::to_string(tensor.size_bytes()) + " bytes", "", "shared_arguments.cc"});
  }
  return layout_.slices[slice];
}

void SharedArguments::write(size_t slice, const tensor::HostTensor& tensor) {
  const kernel_runner::ArgumentSlice& s = checked_slice(slice, tensor);
  if (s.bytes > 0) std::memcpy(data_ + s.offset, tensor.data(), s.bytes);
}

void SharedArguments::read(size_t slice, tensor::HostTensor& tensor) const {
  const kernel_runner::ArgumentSlice& s = checked_slice(slice, tensor);
  if (s.bytes > 0) std::memcpy(tensor.data(), data_ + s.offset, s.bytes);
}

void SharedArguments::copy_out(std::vector<tensor::HostTensor>& args) const {
  for (size_t i = 0; i < args.size() && i < layout_.slices.size(); ++i) {
    if (layout_.slices[i].bytes == 0) continue;
    std::memcpy(args[i].data(), data_ + layout_.slices[i].offset, layout_.slices[i].bytes);
  }
}

std::string SharedArguments::red_zone_violations(const std::vector<std::string>& names) const {
  if (layout_.red_zones == RedZones::kNone || data_ == nullptr) return "";
  return harness::red_zone_violations(data_, layout_.red_zone_list(), names);
}

}  // namespace dragon::harness::isolation
