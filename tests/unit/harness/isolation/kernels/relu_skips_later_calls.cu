// A timing exploit: relu:shape=4x256 (grid 4, block 256) that is honest on the first four
// launches in a process and writes nothing afterwards. It counts launches in a __device__
// variable, which persists across the launches of one runner process: the timing job's
// three warm-up calls and its timed calls. Verification (one launch per process) never
// sees it skip; timing must, on timed call 1: outputs are reset to the sentinel before
// every call, so the skipped call leaves the sentinel.
__device__ unsigned int blocks_started;

extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ unsigned int launch;
  if (threadIdx.x == 0) launch = atomicAdd(&blocks_started, 1u) / gridDim.x;
  __syncthreads();
  if (launch >= 4) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 4 * 256) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
