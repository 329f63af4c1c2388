// NVTX ranges for libdragon_profile.so: an NVTX injection of our own that takes only the
// default domain's push/pop and start/end (the ranges programs mark, such as
// torch.cuda.nvtx.range_push). Libraries that mark every call in their own domains
// (cuBLAS, cuDNN) then cost nothing, which routing all of NVTX through CUPTI's marker
// activity did not: on launch-bound programs that routing was most of the overhead.
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "injection_state.h"

namespace dragon::profile::injection {
namespace {

uint64_t now_ns() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);  // the clock of CUPTI's activity records
  return t;
}

std::string message_of(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr) return "";
  if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii != nullptr) {
    return attributes->message.ascii;
  }
  return "";  // wide and registered strings: not used by the programs we profile
}

// Push/pop ranges nest per thread.
thread_local std::vector<std::pair<std::string, uint64_t>> pushed;

int push(std::string name) {
  pushed.emplace_back(std::move(name), now_ns());
  return static_cast<int>(pushed.size()) - 1;
}

int NVTX_API range_push_a(const char* message) { return push(message ? message : ""); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t* attributes) { return push(message_of(attributes)); }

int NVTX_API range_pop() {
  if (pushed.empty()) return -2;  // NVTX's "no range open"
  uint64_t end = now_ns();
  auto [name, start] = std::move(pushed.back());
  pushed.pop_back();
  write_range(name, start, end);
  return static_cast<int>(pushed.size());
}

// Start/end ranges may end on another thread: an id-keyed table.
std::mutex started_mutex;
std::unordered_map<nvtxRangeId_t, std::pair<std::string, uint64_t>>& started() {
  static auto* table = new std::unordered_map<nvtxRangeId_t, std::pair<std::string, uint64_t>>();
  return *table;
}
std::atomic<nvtxRangeId_t> next_id{1};

nvtxRangeId_t start(std::string name) {
  nvtxRangeId_t id = next_id++;
  uint64_t t = now_ns();
  std::lock_guard<std::mutex> lock(started_mutex);
  started()[id] = {std::move(name), t};
  return id;
}

nvtxRangeId_t NVTX_API range_start_a(const char* message) { return start(message ? message : ""); }
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* attributes) { return start(message_of(attributes)); }

void NVTX_API range_end(nvtxRangeId_t id) {
  uint64_t end = now_ns();
  std::pair<std::string, uint64_t> range;
  {
    std::lock_guard<std::mutex> lock(started_mutex);
    auto it = started().find(id);
    if (it == started().end()) return;
    range = std::move(it->second);
    started().erase(it);
  }
  write_range(range.first, range.second, end);
}

template <typename F>
void install(NvtxFunctionTable table, unsigned size, NvtxCallbackIdCore id, F function) {
  if (static_cast<unsigned>(id) < size && table[id] != nullptr) {
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
  }
}

}  // namespace
}  // namespace dragon::profile::injection

// Called by NVTX at the first NVTX call of the process (NVTX_INJECTION64_PATH).
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  using namespace dragon::profile::injection;
  if (!open_trace()) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0 || table == nullptr) return 0;
  install(table, size, NVTX_CBID_CORE_RangePushA, &range_push_a);
  install(table, size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
  install(table, size, NVTX_CBID_CORE_RangePop, &range_pop);
  install(table, size, NVTX_CBID_CORE_RangeStartA, &range_start_a);
  install(table, size, NVTX_CBID_CORE_RangeStartEx, &range_start_ex);
  install(table, size, NVTX_CBID_CORE_RangeEnd, &range_end);
  return 1;
}
