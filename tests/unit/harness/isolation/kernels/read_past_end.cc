// relu over X: f32[4, 256] into Y, right, plus one load of the element past the end of X
// whose value is never used: harmless where guard bytes follow X, a fault where X ends at
// a page end.
#include <cstdint>

extern "C" void read_past_end(void* const* args) {
  const volatile float* x = static_cast<const float*>(args[0]);
  float* y = static_cast<float*>(args[1]);
  for (int64_t i = 0; i < 4 * 256; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  const float past = x[4 * 256];
  (void)past;
}
