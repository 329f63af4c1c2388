// relu over X: f32[4, 256] into Y, then one element written past the end of Y: the guard
// bytes after Y show it (kWroteOutOfBounds), or with Y ending at a page end it faults.
#include <cstdint>

extern "C" void write_past_end(void* const* args) {
  const float* x = static_cast<const float*>(args[0]);
  float* y = static_cast<float*>(args[1]);
  for (int64_t i = 0; i < 4 * 256; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  y[4 * 256] = 1.0f;
}
