// A shared library that is not the eager plugin (no dragon_eager_baselines_v1), for the
// loader's negative test.
extern "C" int dragon_not_a_plugin() { return 1; }
