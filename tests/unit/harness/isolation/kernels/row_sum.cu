// Honest: sum:shape=8192x16384,axis=1 (X: f32[8192, 16384] -> sum: f32[8192]), one block of
// 256 threads per row reading float4s, reduced with shuffles and shared memory; grid 8192,
// block 256. Big enough (512 MiB read per call) that the physics floor, 0.11 ms on the
// H200's 4.8 TB/s, is far above the launch overhead of a timed call.
constexpr int kCols = 16384;

__device__ float block_sum(float acc) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  acc = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  }
  return acc;
}

extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y) {
  const float4* row = reinterpret_cast<const float4*>(x + static_cast<size_t>(blockIdx.x) * kCols);
  float acc = 0.0f;
  for (int i = threadIdx.x; i < kCols / 4; i += blockDim.x) {
    const float4 v = row[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) y[blockIdx.x] = acc;
}
