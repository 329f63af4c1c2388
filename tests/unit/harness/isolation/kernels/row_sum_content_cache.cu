// A timing exploit: row_sum.cu (sum:shape=8192x16384,axis=1, grid 8192, block 256) with a
// cache keyed on the inputs' contents. Each row's block keys its row by its first and last
// elements; on a hit it writes the sum it computed for that row before, without reading
// the row. Its outputs are always right, so only the physics floor can catch it: a hit
// reads a few bytes per row instead of 64 KiB, far faster than 512 MiB at 4.8 TB/s.
constexpr int kRows = 8192, kCols = 16384, kSlots = 4;

__device__ float stash_key[kSlots][kRows][2];
__device__ float stash_sum[kSlots][kRows];
__device__ int stash_used[kSlots][kRows];

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
  const int r = blockIdx.x;
  const float* row = x + static_cast<size_t>(r) * kCols;
  __shared__ int hit;
  if (threadIdx.x == 0) {
    hit = -1;
    for (int s = 0; s < kSlots; ++s) {
      if (stash_used[s][r] && stash_key[s][r][0] == row[0] && stash_key[s][r][1] == row[kCols - 1]) hit = s;
    }
  }
  __syncthreads();
  if (hit >= 0) {
    if (threadIdx.x == 0) y[r] = stash_sum[hit][r];
    return;
  }
  const float4* row4 = reinterpret_cast<const float4*>(row);
  float acc = 0.0f;
  for (int i = threadIdx.x; i < kCols / 4; i += blockDim.x) {
    const float4 v = row4[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) {
    y[r] = acc;
    int s = 0;
    while (s < kSlots - 1 && stash_used[s][r]) ++s;
    stash_key[s][r][0] = row[0];
    stash_key[s][r][1] = row[kCols - 1];
    stash_sum[s][r] = acc;
    stash_used[s][r] = 1;
  }
}
