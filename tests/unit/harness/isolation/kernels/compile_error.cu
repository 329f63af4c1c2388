// Does not compile: NVRTC's log must reach the run's kFailed reason.
extern "C" __global__ void compile_error(float* y) { y[threadIdx.x] = undeclared_value; }
