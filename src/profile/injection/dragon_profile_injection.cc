// libdragon_profile.so: loaded by the CUDA driver into any process that has
// CUDA_INJECTION64_PATH pointing at it. Records kernels, copies and memsets with CUPTI's
// activity API (NVTX ranges: nvtx_ranges.cc) into DRAGON_PROFILE_DIR/trace-<pid>.jsonl,
// flushed at exit. It only records; the analysis happens in `dragon profile`.
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/profile/trace_format.h"
#include "injection_state.h"

namespace dragon::profile::injection {

State& state() {
  static State* s = new State();
  return *s;
}

void write_range(const std::string& name, uint64_t start_ns, uint64_t end_ns) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.out == nullptr) return;
  std::fprintf(s.out, "{\"t\":\"range\",\"n\":\"%s\",\"s\":%" PRIu64 ",\"e\":%" PRIu64 "}\n",
               json_escape(name).c_str(), start_ns, end_ns);
}

void route_nvtx_here() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;  // someone else's NVTX tool
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&state), &info) != 0 && info.dli_fname != nullptr) {
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
  }
}

}  // namespace dragon::profile::injection

namespace {

using dragon::profile::injection::State;
using dragon::profile::injection::state;

constexpr size_t kBufferSize = 8 << 20;
constexpr size_t kAlignment = 8;

std::string process_name() {
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return "";
  char buffer[512] = {};
  size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
  std::fclose(f);
  buffer[n] = '\0';
  return buffer;  // argv[0]: the cmdline entries are NUL-separated
}

const char* memcpy_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

void write_record(State& s, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      // The leading fields of every kernel record version are the same.
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      std::fprintf(s.out,
                   "{\"t\":\"kernel\",\"n\":\"%s\",\"s\":%" PRIu64 ",\"e\":%" PRIu64
                   ",\"d\":%u,\"st\":%u,\"g\":[%d,%d,%d],\"b\":[%d,%d,%d]}\n",
                   dragon::profile::json_escape(k->name ? k->name : "?").c_str(), static_cast<uint64_t>(k->start),
                   static_cast<uint64_t>(k->end), k->deviceId, k->streamId, k->gridX, k->gridY, k->gridZ, k->blockX,
                   k->blockY, k->blockZ);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      std::fprintf(s.out,
                   "{\"t\":\"memcpy\",\"n\":\"%s\",\"s\":%" PRIu64 ",\"e\":%" PRIu64 ",\"d\":%u,\"st\":%u,\"by\":%" PRIu64
                   "}\n",
                   memcpy_kind(m->copyKind), static_cast<uint64_t>(m->start), static_cast<uint64_t>(m->end),
                   m->deviceId, m->streamId, static_cast<uint64_t>(m->bytes));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      std::fprintf(s.out,
                   "{\"t\":\"memset\",\"s\":%" PRIu64 ",\"e\":%" PRIu64 ",\"d\":%u,\"st\":%u,\"by\":%" PRIu64 "}\n",
                   static_cast<uint64_t>(m->start), static_cast<uint64_t>(m->end), m->deviceId, m->streamId,
                   static_cast<uint64_t>(m->bytes));
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferSize));
  *size = *buffer ? kBufferSize : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    CUpti_Activity* record = nullptr;
    while (s.out && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) write_record(s, record);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) s.dropped += dropped;
  }
  std::free(buffer);
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void write_error(State& s, const std::string& message) {
  std::fprintf(stderr, "dragon profile: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.out) std::fprintf(s.out, "{\"t\":\"error\",\"msg\":\"%s\"}\n", dragon::profile::json_escape(message).c_str());
}

void finish() {
  if (state().cupti_started) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.out == nullptr) return;
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  std::fprintf(s.out, "{\"t\":\"end\",\"end\":%" PRIu64 ",\"dropped\":%" PRIu64 "}\n", now, s.dropped);
  std::fclose(s.out);
  s.out = nullptr;
}

}  // namespace

namespace dragon::profile::injection {

bool open_trace() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.opened) return s.out != nullptr;
  s.opened = true;
  const char* dir = std::getenv("DRAGON_PROFILE_DIR");
  std::string path = std::string(dir && *dir ? dir : ".") + "/" + trace_file_name(getpid());
  s.out = std::fopen(path.c_str(), "w");
  if (s.out == nullptr) {
    std::fprintf(stderr, "dragon profile: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  uint64_t start = 0;
  cuptiGetTimestamp(&start);
  std::fprintf(s.out, "{\"t\":\"process\",\"pid\":%d,\"cmd\":\"%s\",\"start\":%" PRIu64 "}\n", getpid(),
               json_escape(process_name()).c_str(), start);
  std::atexit(finish);
  return true;
}

}  // namespace dragon::profile::injection

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static bool initialized = false;
  if (initialized) return 1;
  initialized = true;
  State& s = state();
  if (!dragon::profile::injection::open_trace()) return 0;
  s.cupti_started = true;

  // A subscriber of our own both detects a profiler already attached (CUPTI allows one)
  // and makes a later one fail loudly instead of silently stealing our records.
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult result = cuptiSubscribe(&subscriber, ignore_callback, nullptr);
  // CUPTI's default device buffer and semaphore pool sizes: a run with 32 MiB buffers and a
  // 2^18 semaphore pool was not faster on launch-bound programs (bench/results/profile-h200.md).
  if (result == CUPTI_SUCCESS) result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  // DRAGON_PROFILE_ACTIVITIES narrows what is recorded (`dragon profile --activities`),
  // which is how the cost of each activity kind was measured.
  dragon::profile::ActivitySelection selection;
  if (const char* list = std::getenv("DRAGON_PROFILE_ACTIVITIES"); list != nullptr) {
    std::string error = dragon::profile::activity_selection_error(list, &selection);
    if (!error.empty()) {
      write_error(s, "DRAGON_PROFILE_ACTIVITIES: " + error);
      return 0;
    }
  }
  std::vector<CUpti_ActivityKind> kinds;
  if (selection.kernel) kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (selection.memcpy) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
  if (selection.memset) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
  // NVTX ranges come from our own NVTX injection (nvtx_ranges.cc), not CUPTI's markers.
  if (selection.nvtx) dragon::profile::injection::route_nvtx_here();
  for (CUpti_ActivityKind kind : kinds) {
    if (result != CUPTI_SUCCESS) break;
    result = cuptiActivityEnable(kind);
  }
  if (result != CUPTI_SUCCESS) {
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    std::string message = std::string("CUPTI activity tracing unavailable: ") + (text ? text : "unknown error");
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || result == CUPTI_ERROR_NOT_INITIALIZED ||
        result == CUPTI_ERROR_INVALID_OPERATION) {
      message += " (another CUPTI client such as nsys, ncu or torch.profiler may be active in this process: run "
                 "without it)";
    }
    write_error(s, message);
    return 0;
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.out) std::fflush(s.out);
  return 1;
}
