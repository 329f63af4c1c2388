// DeviceZone (red_zones.h): plain device memory for guards, a reserved-and-partly-mapped
// address range for page ends (the driver's virtual memory management), and the
// best-effort placement where the driver has none.
#include <utility>

#include "cuda_virtual_memory.h"
#include "dragon/harness/red_zones.h"

namespace dragon::harness {

struct DeviceZone::Mapping {
  runtime::CudaDriver* driver = nullptr;
  runtime::DevicePtr allocation = 0;  // cuMemAlloc'd, or 0
  // Virtual memory management: `reserved` bytes of address space at `address`, of which
  // the first `mapped` are backed by `handle`.
  runtime::DevicePtr address = 0;
  size_t reserved = 0, mapped = 0;
  cuda_vmm::Handle handle = 0;
  bool has_handle = false;

  ~Mapping() {
    if (allocation != 0) driver->release(allocation);
    const cuda_vmm::Api* vmm = cuda_vmm::api();
    if (vmm == nullptr) return;
    if (mapped > 0) vmm->cuMemUnmap(address, mapped);
    if (has_handle) vmm->cuMemRelease(handle);
    if (reserved > 0) vmm->cuMemAddressFree(address, reserved);
  }
};

namespace {

uint64_t round_up(uint64_t bytes, uint64_t unit) { return (bytes + unit - 1) / unit * unit; }

// The driver's granule when its virtual memory management is there, else 2 MiB (what
// plain allocations are carved from).
size_t granule() {
  constexpr size_t kFallback = size_t{2} << 20;
  const cuda_vmm::Api* vmm = cuda_vmm::api();
  if (vmm == nullptr) return kFallback;
  cuda_vmm::AllocationProp prop = cuda_vmm::device_allocation();
  size_t bytes = 0;
  if (vmm->cuMemGetAllocationGranularity(&bytes, &prop, cuda_vmm::kGranularityMinimum) != 0 || bytes == 0) {
    return kFallback;
  }
  return bytes;
}

// `mapped` bytes backed at the start of `mapped + one granule` of reserved address space:
// the granule after them is never mapped. False (everything given back) on any failure.
bool map_with_hole_after(DeviceZone::Mapping& m, size_t mapped, size_t granule_bytes) {
  const cuda_vmm::Api* vmm = cuda_vmm::api();
  if (vmm == nullptr) return false;
  cuda_vmm::AllocationProp prop = cuda_vmm::device_allocation();
  if (vmm->cuMemAddressReserve(&m.address, mapped + granule_bytes, granule_bytes, 0, 0) != 0) return false;
  m.reserved = mapped + granule_bytes;
  if (vmm->cuMemCreate(&m.handle, mapped, &prop, 0) != 0) return false;
  m.has_handle = true;
  if (vmm->cuMemMap(m.address, mapped, 0, m.handle, 0) != 0) return false;
  m.mapped = mapped;
  cuda_vmm::AccessDesc access;
  access.location = prop.location;
  access.flags = cuda_vmm::kAccessReadWrite;
  return vmm->cuMemSetAccess(m.address, mapped, &access, 1) == 0;
}

}  // namespace

Expected<DeviceZone> DeviceZone::allocate(runtime::CudaDriver* driver, uint64_t zone_bytes,
                                                   RedZones red_zones) {
  DeviceZone zone;
  zone.mapping_ = std::make_unique<Mapping>();
  Mapping& m = *zone.mapping_;
  m.driver = driver;
  if (red_zones != RedZones::kPageEnd) {
    Expected<runtime::DevicePtr> p = driver->allocate(zone_bytes);
    if (!p) return p.error();
    m.allocation = p.value();
    zone.zone_ = m.allocation;
    return zone;
  }
  const size_t unit = granule();
  const size_t mapped = round_up(std::max<uint64_t>(zone_bytes, 1), unit);
  runtime::DevicePtr start = 0;
  if (map_with_hole_after(m, mapped, unit)) {
    start = m.address;
    zone.faults_past_end_ = true;
  } else {
    // No virtual memory management here: as close as plain allocations come.
    zone.mapping_ = std::make_unique<Mapping>();
    zone.mapping_->driver = driver;
    Expected<runtime::DevicePtr> p = driver->allocate(mapped);
    if (!p) return p.error();
    zone.mapping_->allocation = p.value();
    start = p.value();
  }
  zone.zone_ = start + mapped - zone_bytes;
  if (zone.zone_ > start) {
    if (Status s = driver->fill_bytes(start, kGuardByte, zone.zone_ - start); !s) return s.error();
  }
  return zone;
}

DeviceZone::DeviceZone(DeviceZone&& other) noexcept
    : mapping_(std::move(other.mapping_)), zone_(other.zone_), faults_past_end_(other.faults_past_end_) {}

DeviceZone& DeviceZone::operator=(DeviceZone&& other) noexcept {
  mapping_ = std::move(other.mapping_);
  zone_ = other.zone_;
  faults_past_end_ = other.faults_past_end_;
  return *this;
}

DeviceZone::~DeviceZone() = default;

}  // namespace dragon::harness
