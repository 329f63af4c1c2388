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

uint64_t round_up(uint64_t bytes) { return (bytes + kArgumentAlignment - 1) / kArgumentAlignment * kArgumentAlignment; }

}  // namespace

ArgumentLayout layout_slices(const std::vector<uint64_t>& bytes) {
  ArgumentLayout layout;
  for (uint64_t b : bytes) {
    layout.slices.push_back({layout.total_bytes, b});
    layout.total_bytes += round_up(b);
  }
  return layout;
}

ArgumentLayout layout_arguments(const std::vector<tensor::HostTensor>& args) {
  std::vector<uint64_t> bytes;
  for (const tensor::HostTensor& t : args) bytes.push_back(static_cast<uint64_t>(t.size_bytes()));
  return layout_slices(bytes);
}

std::string timing_job_problem(const Job& job) {
  if (job.kind != JobKind::kTimeCuda) return "";
  const GpuTimerOptions& t = job.timer;
  if (job.input_sets < 2) return "a timing job rotates at least two input sets";
  if (job.arguments.empty() || job.arguments.size() % job.input_sets != 0) {
    return "the arguments are not input_sets equal sets of tensors";
  }
  const size_t params = job.arguments.size() / job.input_sets;
  for (size_t i = params; i < job.arguments.size(); ++i) {
    if (job.arguments[i].bytes != job.arguments[i % params].bytes) return "the input sets' tensors differ in size";
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
  // A call slot overlapping an input set would let one call's outputs become a later
  // call's inputs.
  std::vector<ArgumentSlice> all = job.arguments;
  all.insert(all.end(), job.call_slots.begin(), job.call_slots.end());
  std::erase_if(all, [](const ArgumentSlice& a) { return a.bytes == 0; });
  std::sort(all.begin(), all.end(), [](const ArgumentSlice& a, const ArgumentSlice& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].offset < all[i - 1].offset + all[i - 1].bytes) return "two slices of the region overlap";
  }
  return "";
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
  w.u64(job.input_sets);
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
  if (!r.u64(job.region_bytes) || !r.u64(job.input_sets) || !r.count(count, sizeof(uint64_t))) return std::nullopt;
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
  if (!timing_job_problem(job).empty()) return std::nullopt;
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
       r.i32(g.temperature_c) && r.str(g.driver_version) && r.at_end();
  if (!ok) return std::nullopt;
  return reply;
}

}  // namespace dragon::harness::kernel_runner
