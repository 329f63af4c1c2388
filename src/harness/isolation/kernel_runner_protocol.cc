// The runner protocol (kernel_runner_protocol.h): a little-endian, length-prefixed binary
// encoding, framed by a magic word and checked to the last byte on decode.
#include "dragon/harness/kernel_runner_protocol.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace dragon::harness::kernel_runner {
namespace {

constexpr uint32_t kJobMagic = 0x4b4a4744;    // "DGJK"
constexpr uint32_t kReplyMagic = 0x4b524744;  // "DGRK"
// A job carries at most a CUBIN or a source file; anything larger is not one of ours.
constexpr uint64_t kMaxFieldBytes = uint64_t{1} << 30;

class Writer {
 public:
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.append(s);
  }
  std::string take() { return std::move(bytes_); }

 private:
  void raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool u32(uint32_t& v) { return raw(&v, sizeof v); }
  bool u64(uint64_t& v) { return raw(&v, sizeof v); }
  bool i64(int64_t& v) { return raw(&v, sizeof v); }
  bool f64(double& v) { return raw(&v, sizeof v); }
  bool i32(int& v) {
    int64_t wide = 0;
    if (!i64(wide) || wide < INT32_MIN || wide > INT32_MAX) return false;
    v = static_cast<int>(wide);
    return true;
  }
  // A count of items of at least `item_bytes` each that the rest of the bytes can hold:
  // a forged count cannot make the decoder allocate more than the message's size.
  bool count(uint64_t& n, size_t item_bytes) { return u64(n) && n <= (bytes_.size() - at_) / item_bytes; }
  bool str(std::string& s) {
    uint64_t n = 0;
    if (!u64(n) || n > kMaxFieldBytes || n > bytes_.size() - at_) return false;
    s.assign(bytes_.substr(at_, n));
    at_ += n;
    return true;
  }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  bool raw(void* p, size_t n) {
    if (n > bytes_.size() - at_) return false;
    std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  std::string_view bytes_;
  size_t at_ = 0;
};

uint64_t round_up(uint64_t bytes, uint64_t unit = kArgumentAlignment) { return (bytes + unit - 1) / unit * unit; }

bool contains(const ArgumentSlice& outer, const ArgumentSlice& inner) {
  return inner.offset >= outer.offset && inner.bytes <= outer.bytes && inner.offset - outer.offset <= outer.bytes - inner.bytes;
}

// Whether any two of the slices overlap (empty slices overlap nothing).
bool any_overlap(std::vector<ArgumentSlice> all) {
  std::erase_if(all, [](const ArgumentSlice& a) { return a.bytes == 0; });
  std::sort(all.begin(), all.end(), [](const ArgumentSlice& a, const ArgumentSlice& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].offset < all[i - 1].offset + all[i - 1].bytes) return true;
  }
  return false;
}

std::string run_job_problem(const Job& job) {
  if (job.red_zones == RedZones::kNone && job.zones.empty()) return "";
  if (job.zones.size() != job.arguments.size()) return "there is not one red zone per argument";
  for (size_t i = 0; i < job.zones.size(); ++i) {
    const ArgumentSlice& zone = job.zones[i];
    if (zone.offset > job.region_bytes || zone.bytes > job.region_bytes - zone.offset) {
      return "a red zone lies outside the region";
    }
    if (!contains(zone, job.arguments[i])) return "an argument lies outside its red zone";
    if (job.red_zones == RedZones::kPageEnd &&
        (zone.offset % host_page_bytes() != 0 || zone.bytes % host_page_bytes() != 0 || zone.bytes == 0)) {
      return "a page-end red zone is not whole pages";
    }
  }
  if (any_overlap(job.zones)) return "two red zones overlap";
  return "";
}

std::string timing_job_problem(const Job& job) {
  const GpuTimerOptions& t = job.timer;
  if (job.input_sets < 1) return "a timing job has at least one input set";
  if (job.arguments.empty() || job.arguments.size() % job.input_sets != 0) {
    return "the arguments are not input_sets equal sets of tensors";
  }
  const size_t params = job.arguments.size() / job.input_sets;
  for (size_t i = params; i < job.arguments.size(); ++i) {
    if (job.arguments[i].bytes != job.arguments[i % params].bytes) return "the input sets' tensors differ in size";
  }
  const uint64_t variants = job.variant_bases.size();
  if (variants < 2) return "a timing job rotates at least two variants";
  if ((job.input_sets + 1) % variants == 0) {
    return "the number of variants divides the number of buffer groups: a group would hold one variant twice in a row";
  }
  for (uint64_t base : job.variant_bases) {
    if (base >= job.input_sets) return "a variant's base set is not one of the input sets";
  }
  for (const ElementPatch& patch : job.patches) {
    if (patch.variant >= variants || patch.param >= params) return "a patch names no variant or parameter";
    if (patch.bytes != 1 && patch.bytes != 2 && patch.bytes != 4 && patch.bytes != 8) {
      return "a patch is not one element of 1, 2, 4 or 8 bytes";
    }
    if (patch.byte_offset > job.arguments[patch.param].bytes ||
        patch.bytes > job.arguments[patch.param].bytes - patch.byte_offset) {
      return "a patch lies outside its parameter";
    }
  }
  if (job.recorded_params.empty()) return "a timing job records at least one parameter";
  for (size_t r = 0; r < job.recorded_params.size(); ++r) {
    if (job.recorded_params[r] >= params) return "a recorded parameter is not one of the kernel's";
    if (r > 0 && job.recorded_params[r] <= job.recorded_params[r - 1]) {
      return "the recorded parameters are not in increasing order";
    }
  }
  if (t.warmup_calls < 0 || t.min_calls < 1 || t.max_calls < t.min_calls || !(t.max_seconds > 0) ||
      !std::isfinite(t.max_seconds) || !(t.target_relative_ci > 0)) {
    return "the timer settings are out of range (warm-up >= 0, 1 <= min_calls <= max_calls, positive limits)";
  }
  const size_t recorded = job.recorded_params.size();
  if (job.call_slots.size() / recorded != static_cast<uint64_t>(t.max_calls) ||
      job.call_slots.size() % recorded != 0) {
    return "there is not one call slot per timed call and recorded parameter";
  }
  for (size_t i = 0; i < job.call_slots.size(); ++i) {
    if (job.call_slots[i].bytes != job.arguments[job.recorded_params[i % recorded]].bytes) {
      return "a call slot's size is not that of its parameter";
    }
  }
  if (!job.zones.empty()) return "a timing job's red zones are on the device, not in the region";
  // A call slot overlapping an input set would let one call's outputs become a later
  // call's inputs.
  std::vector<ArgumentSlice> all = job.arguments;
  all.insert(all.end(), job.call_slots.begin(), job.call_slots.end());
  if (any_overlap(all)) return "two slices of the region overlap";
  return "";
}

}  // namespace

std::vector<RedZone> ArgumentLayout::red_zone_list() const {
  std::vector<RedZone> list;
  for (size_t i = 0; i < slices.size() && i < zones.size(); ++i) {
    list.push_back({zones[i].offset, zones[i].bytes, slices[i].offset, slices[i].bytes});
  }
  return list;
}

ArgumentLayout layout_slices(const std::vector<uint64_t>& bytes, RedZones red_zones) {
  ArgumentLayout layout;
  layout.red_zones = red_zones;
  const uint64_t page = host_page_bytes();
  for (uint64_t b : bytes) {
    const uint64_t start = layout.total_bytes;
    uint64_t data = start, end = start + round_up(b);
    if (red_zones == RedZones::kGuards) {
      data = start + kGuardBytes;
      end = data + round_up(b) + kGuardBytes;
    } else if (red_zones == RedZones::kPageEnd) {
      end = start + std::max<uint64_t>(round_up(round_up(b), page), page);
      data = end - round_up(b);
    }
    layout.slices.push_back({data, b});
    layout.zones.push_back({start, end - start});
    layout.total_bytes = end;
  }
  return layout;
}

ArgumentLayout layout_arguments(const std::vector<tensor::HostTensor>& args, RedZones red_zones) {
  std::vector<uint64_t> bytes;
  for (const tensor::HostTensor& t : args) bytes.push_back(static_cast<uint64_t>(t.size_bytes()));
  return layout_slices(bytes, red_zones);
}

std::string job_problem(const Job& job) {
  switch (job.kind) {
    case JobKind::kRunCpu:
    case JobKind::kRunCuda: return run_job_problem(job);
    case JobKind::kTimeCuda: return timing_job_problem(job);
    case JobKind::kCompileCpu: return "";
  }
  return "a job of an unknown kind";
}

std::string encode_job(const Job& job) {
  Writer w;
  w.u32(kJobMagic);
  w.u32(static_cast<uint32_t>(job.kind));
  w.u64(job.nonce);
  w.str(job.entry);
  w.str(job.source);
  w.str(job.cache_directory);
  w.str(job.compiler);
  w.str(job.optimization);
  w.u32(job.march_native ? 1 : 0);
  w.str(job.module_path);
  w.str(job.cubin);
  for (int64_t g : job.grid) w.i64(g);
  for (int64_t b : job.block) w.i64(b);
  w.i64(job.dynamic_shared_bytes);
  w.u64(job.arguments.size());
  for (const ArgumentSlice& a : job.arguments) {
    w.u64(a.offset);
    w.u64(a.bytes);
  }
  w.u64(job.region_bytes);
  w.u32(static_cast<uint32_t>(job.red_zones));
  w.u64(job.zones.size());
  for (const ArgumentSlice& z : job.zones) {
    w.u64(z.offset);
    w.u64(z.bytes);
  }
  w.u64(job.input_sets);
  w.u64(job.variant_bases.size());
  for (uint64_t b : job.variant_bases) w.u64(b);
  w.u64(job.patches.size());
  for (const ElementPatch& p : job.patches) {
    w.u64(p.variant);
    w.u64(p.param);
    w.u64(p.byte_offset);
    w.u32(p.bytes);
    w.u64(p.bits);
  }
  w.u64(job.recorded_params.size());
  for (uint64_t p : job.recorded_params) w.u64(p);
  w.u64(job.call_slots.size());
  for (const ArgumentSlice& a : job.call_slots) {
    w.u64(a.offset);
    w.u64(a.bytes);
  }
  w.i64(job.timer.warmup_calls);
  w.i64(job.timer.min_calls);
  w.i64(job.timer.max_calls);
  w.f64(job.timer.max_seconds);
  w.f64(job.timer.target_relative_ci);
  w.u32(job.timer.flush_l2 ? 1 : 0);
  return w.take();
}

std::optional<Job> decode_job(std::string_view bytes) {
  Reader r(bytes);
  Job job;
  uint32_t magic = 0, kind = 0, march = 0;
  if (!r.u32(magic) || magic != kJobMagic || !r.u32(kind)) return std::nullopt;
  if (kind < static_cast<uint32_t>(JobKind::kCompileCpu) || kind > static_cast<uint32_t>(JobKind::kTimeCuda)) {
    return std::nullopt;
  }
  job.kind = static_cast<JobKind>(kind);
  bool ok = r.u64(job.nonce) && r.str(job.entry) && r.str(job.source) && r.str(job.cache_directory) &&
            r.str(job.compiler) && r.str(job.optimization) && r.u32(march) && r.str(job.module_path) &&
            r.str(job.cubin);
  for (int64_t& g : job.grid) ok = ok && r.i64(g);
  for (int64_t& b : job.block) ok = ok && r.i64(b);
  uint64_t count = 0;
  ok = ok && r.i64(job.dynamic_shared_bytes) && r.count(count, 2 * sizeof(uint64_t));
  if (!ok) return std::nullopt;
  job.march_native = march != 0;
  job.arguments.resize(count);
  for (ArgumentSlice& a : job.arguments) {
    if (!r.u64(a.offset) || !r.u64(a.bytes)) return std::nullopt;
  }
  uint32_t red_zones = 0;
  if (!r.u64(job.region_bytes) || !r.u32(red_zones) || red_zones > static_cast<uint32_t>(RedZones::kPageEnd) ||
      !r.count(count, 2 * sizeof(uint64_t))) {
    return std::nullopt;
  }
  job.red_zones = static_cast<RedZones>(red_zones);
  job.zones.resize(count);
  for (ArgumentSlice& z : job.zones) {
    if (!r.u64(z.offset) || !r.u64(z.bytes)) return std::nullopt;
  }
  if (!r.u64(job.input_sets) || !r.count(count, sizeof(uint64_t))) return std::nullopt;
  job.variant_bases.resize(count);
  for (uint64_t& b : job.variant_bases) {
    if (!r.u64(b)) return std::nullopt;
  }
  if (!r.count(count, 4 * sizeof(uint64_t) + sizeof(uint32_t))) return std::nullopt;
  job.patches.resize(count);
  for (ElementPatch& p : job.patches) {
    if (!r.u64(p.variant) || !r.u64(p.param) || !r.u64(p.byte_offset) || !r.u32(p.bytes) || !r.u64(p.bits)) {
      return std::nullopt;
    }
  }
  if (!r.count(count, sizeof(uint64_t))) return std::nullopt;
  job.recorded_params.resize(count);
  for (uint64_t& p : job.recorded_params) {
    if (!r.u64(p)) return std::nullopt;
  }
  if (!r.count(count, 2 * sizeof(uint64_t))) return std::nullopt;
  job.call_slots.resize(count);
  for (ArgumentSlice& a : job.call_slots) {
    if (!r.u64(a.offset) || !r.u64(a.bytes)) return std::nullopt;
  }
  uint32_t flush = 0;
  ok = r.i32(job.timer.warmup_calls) && r.i32(job.timer.min_calls) && r.i32(job.timer.max_calls) &&
       r.f64(job.timer.max_seconds) && r.f64(job.timer.target_relative_ci) && r.u32(flush) && r.at_end();
  if (!ok) return std::nullopt;
  job.timer.flush_l2 = flush != 0;
  for (const std::vector<ArgumentSlice>* slices : {&job.arguments, &job.call_slots}) {
    for (const ArgumentSlice& a : *slices) {
      if (a.offset > job.region_bytes || a.bytes > job.region_bytes - a.offset) return std::nullopt;
    }
  }
  if (!job_problem(job).empty()) return std::nullopt;
  return job;
}

std::string encode_reply(const Reply& reply) {
  Writer w;
  w.u32(kReplyMagic);
  w.u64(reply.nonce);
  w.u32(static_cast<uint32_t>(reply.status));
  w.str(reply.failure.api);
  w.str(reply.failure.message);
  w.str(reply.failure.log);
  w.str(reply.failure.where);
  w.str(reply.module_path);
  w.u64(reply.samples_ms.size());
  for (double ms : reply.samples_ms) w.f64(ms);
  const GpuState& g = reply.gpu_state;
  w.str(g.name);
  for (int v : {g.sm_clock_mhz, g.max_sm_clock_mhz, g.memory_clock_mhz, g.temperature_c}) w.i64(v);
  w.str(g.driver_version);
  w.str(reply.red_zone_violations);
  return w.take();
}

std::optional<Reply> decode_reply(std::string_view bytes) {
  Reader r(bytes);
  Reply reply;
  uint32_t magic = 0, status = 0;
  if (!r.u32(magic) || magic != kReplyMagic || !r.u64(reply.nonce) || !r.u32(status)) return std::nullopt;
  if (status < static_cast<uint32_t>(ReplyStatus::kSuccess) || status > static_cast<uint32_t>(ReplyStatus::kFaulted)) {
    return std::nullopt;
  }
  reply.status = static_cast<ReplyStatus>(status);
  uint64_t samples = 0;
  bool ok = r.str(reply.failure.api) && r.str(reply.failure.message) && r.str(reply.failure.log) &&
            r.str(reply.failure.where) && r.str(reply.module_path) && r.count(samples, sizeof(double));
  if (!ok) return std::nullopt;
  reply.samples_ms.resize(samples);
  for (double& ms : reply.samples_ms) {
    if (!r.f64(ms)) return std::nullopt;
  }
  GpuState& g = reply.gpu_state;
  ok = r.str(g.name) && r.i32(g.sm_clock_mhz) && r.i32(g.max_sm_clock_mhz) && r.i32(g.memory_clock_mhz) &&
       r.i32(g.temperature_c) && r.str(g.driver_version) && r.str(reply.red_zone_violations) && r.at_end();
  if (!ok) return std::nullopt;
  return reply;
}

}  // namespace dragon::harness::kernel_runner
