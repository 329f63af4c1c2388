// A timing exploit: relu:shape=4x256 (grid 4, block 256) that caches its result under the
// output buffer's address. Each block remembers, per output pointer it has written, what it
// wrote; on a launch with a pointer it has seen, it copies that instead of computing.
// Timing runs call i on input set i % K in buffer group i % (K + 1), so a group's second
// use (call K + 1: call 4 with the default three sets) holds another set than its first,
// and the copy is the wrong set's result.
constexpr int kBlocks = 4, kThreads = 256, kSlots = 8;

__device__ const float* seen_output[kSlots][kBlocks];
__device__ float remembered[kSlots][kBlocks * kThreads];
__device__ int next_slot[kBlocks];

extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y) {
  const int b = blockIdx.x, i = b * kThreads + threadIdx.x;
  __shared__ int found, slot;
  if (threadIdx.x == 0) {
    found = -1;
    for (int s = 0; s < kSlots; ++s) {
      if (seen_output[s][b] == y) found = s;
    }
    slot = next_slot[b];
  }
  __syncthreads();
  if (found >= 0) {
    y[i] = remembered[found][i];
    return;
  }
  const float v = x[i] > 0.0f ? x[i] : 0.0f;
  y[i] = v;
  remembered[slot][i] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    seen_output[slot][b] = y;
    next_slot[b] = (slot + 1) % kSlots;
  }
}
