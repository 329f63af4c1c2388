// The CUDA example of docs/kernel-calling-convention.md: matmul:m=64,n=32,k=16 (A: f32[64, 16],
// B: f32[16, 32], C: f32[64, 32]), one thread per element of C, grid 2x4, block 16x16.
extern "C" __global__ void matmul(const float* A, const float* B, float* C) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;  // n
  int row = blockIdx.y * blockDim.y + threadIdx.y;  // m
  if (row >= 64 || col >= 32) return;
  float sum = 0.0f;
  for (int k = 0; k < 16; ++k) sum += A[row * 16 + k] * B[k * 32 + col];
  C[row * 32 + col] = sum;
}
