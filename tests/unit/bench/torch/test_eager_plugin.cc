// The plugin as dragon bench loads it: found, loaded with dlopen, and computing through the
// boundary (bind, run, copy_output, write_output) on CPU tensors; and the reasons given
// when a path is not a plugin.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dragon/bench/eager_plugin.h"

namespace dragon::bench {
namespace {

TEST(EagerPlugin, LoadsAndComputesSoftmaxThroughTheBoundary) {
  EagerPlugin plugin = load_eager_plugin_from(DRAGON_EAGER_PLUGIN_PATH);
  ASSERT_NE(plugin.baselines, nullptr) << plugin.why_not;
  EXPECT_NE(plugin.baselines->library().find("libtorch"), std::string::npos);
  EXPECT_EQ(plugin.baselines->call("not_an_op"), "");
  ASSERT_NE(plugin.baselines->call("softmax"), "");

  std::vector<float> x = {1, 2, 3, -1, 0, 1};
  std::vector<EagerTensor> inputs = {{x.data(), ir::DataType::f32(), {2, 3}}};
  std::map<std::string, std::string> params = {{"shape", "2x3"}, {"axis", "1"}, {"dtype", "f32"}};
  for (bool promote : {false, true}) {
    std::unique_ptr<EagerComputation> softmax =
        plugin.baselines->bind("softmax", params, inputs, EagerDevice::kCpu, promote);
    softmax->run();
    ASSERT_EQ(softmax->num_outputs(), 1u);
    std::vector<double> y(6);
    softmax->copy_output(0, ir::DataType::f64(), y.data(), 6 * sizeof(double));
    double denominator = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    EXPECT_NEAR(y[2], std::exp(3.0) / denominator, promote ? 1e-15 : 1e-7);
    EXPECT_NEAR(y[3] + y[4] + y[5], 1.0, 1e-6);
    std::vector<float> written(6, -1);
    softmax->write_output(0, EagerTensor{written.data(), ir::DataType::f32(), {6}});
    EXPECT_NEAR(written[2], y[2], 1e-7);
    // Our buffer's element count, not torch's shape, is what must agree.
    std::vector<double> too_small(5);
    EXPECT_THROW(softmax->copy_output(0, ir::DataType::f64(), too_small.data(), 5 * sizeof(double)), std::runtime_error);
  }
  try {
    plugin.baselines->bind("softmax", {{"shape", "2x3"}, {"dtype", "f32"}}, inputs, EagerDevice::kCpu, false)->run();
    FAIL() << "a missing parameter ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("axis"), std::string::npos) << e.what();
  }
}

TEST(EagerPlugin, SaysWhyAPathIsNotAPlugin) {
  EagerPlugin missing = load_eager_plugin_from("/nonexistent/libdragon_eager_torch.so");
  EXPECT_EQ(missing.baselines, nullptr);
  EXPECT_NE(missing.why_not.find("not there"), std::string::npos);
  EagerPlugin other = load_eager_plugin_from(DRAGON_NOT_A_PLUGIN_PATH);
  EXPECT_EQ(other.baselines, nullptr);
  EXPECT_NE(other.why_not.find("dragon_eager_baselines_v1"), std::string::npos) << other.why_not;
}

}  // namespace
}  // namespace dragon::bench
