// libdragon_profile.so: loaded by the CUDA driver into any process that has
// CUDA_INJECTION64_PATH pointing at it. Records kernels, copies, memsets and NVTX ranges
// with CUPTI's activity API and writes DRAGON_PROFILE_DIR/trace-<pid>.jsonl at exit.
// It only records; the analysis happens in `dragon profile`.
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

#include "dragon/profile/trace_format.h"

namespace {

constexpr size_t kBufferSize = 8 << 20;
constexpr size_t kAlignment = 8;

struct State {
  std::mutex mutex;
  FILE* out = nullptr;
  uint64_t dropped = 0;
  // NVTX push/pop and start/end ranges arrive as two marker records sharing an id.
  std::unordered_map<uint32_t, std::pair<std::string, uint64_t>> open_ranges;
};

State& state() {
  static State* s = new State();  // never destroyed: CUPTI may call back during exit
  return *s;
}

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
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        s.open_ranges[m->id] = {m->name ? m->name : "", m->timestamp};
      } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = s.open_ranges.find(m->id);
        if (it != s.open_ranges.end()) {
          std::fprintf(s.out, "{\"t\":\"range\",\"n\":\"%s\",\"s\":%" PRIu64 ",\"e\":%" PRIu64 "}\n",
                       dragon::profile::json_escape(it->second.first).c_str(), it->second.second,
                       static_cast<uint64_t>(m->timestamp));
          s.open_ranges.erase(it);
        }
      }
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
  if (s.out) std::fprintf(s.out, "{\"t\":\"error\",\"msg\":\"%s\"}\n", dragon::profile::json_escape(message).c_str());
}

void finish() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.out == nullptr) return;
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  std::fprintf(s.out, "{\"t\":\"end\",\"end\":%" PRIu64 ",\"dropped\":%" PRIu64 "}\n", now, s.dropped);
  std::fclose(s.out);
  s.out = nullptr;
}

// Routes NVTX calls to CUPTI so ranges become marker records; NVTX reads this variable
// at its first call, which in the programs we profile comes after CUDA starts.
void route_nvtx_to_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 && info.dli_fname != nullptr) {
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static bool initialized = false;
  if (initialized) return 1;
  initialized = true;
  State& s = state();
  const char* dir = std::getenv("DRAGON_PROFILE_DIR");
  std::string path = std::string(dir && *dir ? dir : ".") + "/" + dragon::profile::trace_file_name(getpid());
  s.out = std::fopen(path.c_str(), "w");
  if (s.out == nullptr) {
    std::fprintf(stderr, "dragon profile: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return 0;
  }
  uint64_t start = 0;
  cuptiGetTimestamp(&start);
  std::fprintf(s.out, "{\"t\":\"process\",\"pid\":%d,\"cmd\":\"%s\",\"start\":%" PRIu64 "}\n", getpid(),
               dragon::profile::json_escape(process_name()).c_str(), start);
  route_nvtx_to_cupti();

  // A subscriber of our own both detects a profiler already attached (CUPTI allows one)
  // and makes a later one fail loudly instead of silently stealing our records.
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult result = cuptiSubscribe(&subscriber, ignore_callback, nullptr);
  // CUPTI's default device buffer and semaphore pool sizes: a run with 32 MiB buffers and a
  // 2^18 semaphore pool was not faster on launch-bound programs (bench/results/profile-h200.md).
  if (result == CUPTI_SUCCESS) result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MARKER};
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
  std::fflush(s.out);
  std::atexit(finish);
  return 1;
}
