// Stores far outside any allocation: the device faults and the run must be kCrashed.
extern "C" __global__ void illegal_address(const float* x, float* y) {
  y[threadIdx.x + (1ll << 40)] = x[threadIdx.x];
}
