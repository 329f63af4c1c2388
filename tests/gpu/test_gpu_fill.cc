// The input filler's value domains on a GPU: small integers and bools of a real domain,
// positive values, softmax rows, integer ranges; each buffer filled on the device, read
// back and checked for its value set and statistics (the host generator's semantics,
// src/interp/input_generator.cc, not its bits).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <numbers>
#include <optional>
#include <set>
#include <vector>

#include "dragon/bench/device_filler.h"
#include "dragon/support/error.h"
#include "dragon/tensor/host_tensor.h"
#include "gpu_test_support.h"

namespace dragon::bench {
namespace {

using ir::DataType;
using ir::ValueDomain;
using Distribution = DeviceFiller::Distribution;

// A device buffer of one shape and type, filled within a domain and read back (the host
// copy made on the first read: the largest buffers are only sampled).
class Filled {
 public:
  Filled(runtime::CudaDriver* driver, DataType dtype, std::vector<int64_t> shape)
      : driver_(driver), buffer_(ir::Buffer::make("X", dtype, std::move(shape))) {
    int64_t bytes = dtype.bytes();
    for (int64_t extent : buffer_->shape) bytes *= extent;
    ptr_ = driver_->allocate(static_cast<size_t>(std::max<int64_t>(bytes, 1))).value();
  }
  ~Filled() { driver_->release(ptr_); }
  Filled(const Filled&) = delete;
  Filled& operator=(const Filled&) = delete;

  const tensor::HostTensor& fill(DeviceFiller& filler, const ValueDomain& domain, Distribution distribution,
                                 uint64_t seed) {
    filler.fill_domain(ptr_, buffer_, domain, distribution, seed);
    if (!host_) host_ = tensor::HostTensor::like(buffer_);
    EXPECT_TRUE(driver_->copy_to_host(host_->data(), ptr_, static_cast<size_t>(host_->size_bytes())).ok());
    return *host_;
  }
  runtime::DevicePtr ptr() const { return ptr_; }
  const ir::Buffer& buffer() const { return buffer_; }

 private:
  runtime::CudaDriver* driver_;
  ir::Buffer buffer_;
  std::optional<tensor::HostTensor> host_;
  runtime::DevicePtr ptr_ = 0;
};

struct Summary {
  double mean = 0, min = INFINITY, max = -INFINITY;
  std::set<int64_t> integers;  // the distinct values, when they are integers
  bool all_integers = true;
};
Summary summarize(const tensor::HostTensor& t) {
  Summary s;
  double sum = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.get(i);
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    if (v != std::floor(v)) {
      s.all_integers = false;
    } else if (s.integers.size() < 4096) {
      s.integers.insert(static_cast<int64_t>(v));
    }
  }
  s.mean = sum / static_cast<double>(t.num_elements());
  return s;
}

std::set<int64_t> range_values(int64_t lo, int64_t hi) {
  std::set<int64_t> values;
  for (int64_t v = lo; v < hi; ++v) values.insert(v);
  return values;
}

constexpr int64_t kElements = 1 << 20;

TEST(GpuFill, IntegersOfARealDomainAreUniformInMinus8To8) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  for (DataType dtype : {DataType::i8(), DataType::i32(), DataType::i64()}) {
    Filled x(driver, dtype, {kElements});
    Summary s = summarize(x.fill(filler, ValueDomain::real(), Distribution::kNormal, 7));
    EXPECT_TRUE(s.all_integers) << ir::to_string(dtype);
    EXPECT_EQ(s.integers, range_values(-8, 8)) << ir::to_string(dtype);
    EXPECT_NEAR(s.mean, -0.5, 0.03) << ir::to_string(dtype);
  }
}

TEST(GpuFill, BoolsOfARealDomainAreZeroOrOneAboutHalfEach) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  Filled x(driver, DataType::boolean(), {1024, 1024});
  const tensor::HostTensor& t = x.fill(filler, ValueDomain::real(), Distribution::kUniform01, 3);
  const auto* bytes = static_cast<const uint8_t*>(t.data());
  int64_t ones = 0, others = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    ones += bytes[i] == 1;
    others += bytes[i] > 1;
  }
  EXPECT_EQ(others, 0) << "bools are stored as the bytes 0 and 1";
  EXPECT_NEAR(static_cast<double>(ones) / static_cast<double>(t.num_elements()), 0.5, 0.005);
}

TEST(GpuFill, PositiveFloatsAreAtLeastATenthAndFollowTheDistribution) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  Filled x(driver, DataType::f32(), {kElements});
  Summary rand = summarize(x.fill(filler, ValueDomain::positive(), Distribution::kUniform01, 11));
  EXPECT_GE(rand.min, 0.1f);
  EXPECT_LE(rand.max, 1.1f);
  EXPECT_NEAR(rand.mean, 0.6, 0.005);  // U[0, 1) + 0.1
  Summary normal = summarize(x.fill(filler, ValueDomain::positive(), Distribution::kNormal, 11));
  EXPECT_GE(normal.min, 0.1f);
  EXPECT_GT(normal.max, 3.0);
  EXPECT_NEAR(normal.mean, std::sqrt(2 / std::numbers::pi) + 0.1, 0.005);  // |N(0, 1)| + 0.1
  for (DataType dtype : {DataType::f64(), DataType::f16(), DataType::bf16()}) {
    Filled y(driver, dtype, {4096});
    Summary s = summarize(y.fill(filler, ValueDomain::positive(), Distribution::kNormal, 5));
    EXPECT_GT(s.min, 0.099) << ir::to_string(dtype);  // 0.1 rounded to the type
    EXPECT_NEAR(s.mean, std::sqrt(2 / std::numbers::pi) + 0.1, 0.05) << ir::to_string(dtype);
  }
}

TEST(GpuFill, PositiveIntegersAreOneToEight) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  for (DataType dtype : {DataType::i8(), DataType::i32(), DataType::i64()}) {
    Filled x(driver, dtype, {kElements});
    Summary s = summarize(x.fill(filler, ValueDomain::positive(), Distribution::kUniform01, 9));
    EXPECT_EQ(s.integers, range_values(1, 9)) << ir::to_string(dtype);
    EXPECT_NEAR(s.mean, 4.5, 0.02) << ir::to_string(dtype);
  }
  // Bools of a positive domain hold 1 everywhere (value != 0 of 1..8), as on the host.
  Filled b(driver, DataType::boolean(), {4096});
  const tensor::HostTensor& t = b.fill(filler, ValueDomain::positive(), Distribution::kUniform01, 9);
  const auto* bytes = static_cast<const uint8_t*>(t.data());
  for (int64_t i = 0; i < t.num_elements(); ++i) ASSERT_EQ(bytes[i], 1) << "element " << i;
}

// Every row non-negative, summing to 1, and not uniform: its values differ, and a row of
// 64 or more normals spans well over ln 2, so its largest probability is over twice its
// smallest.
void expect_probability_rows(const tensor::HostTensor& t, int64_t row_length, double tolerance,
                             const std::string& what) {
  int64_t rows = t.num_elements() / row_length;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t j = 0; j < row_length; ++j) {
      double v = t.get(r * row_length + j);
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    ASSERT_GE(lo, 0.0) << what << " row " << r;
    ASSERT_NEAR(sum, 1.0, tolerance) << what << " row " << r;
    if (row_length > 1) {
      ASSERT_GT(hi, lo) << what << " row " << r << " is uniform";
    }
    if (row_length >= 64) {
      ASSERT_GT(hi, 2 * lo) << what << " row " << r << " is nearly uniform";
    }
  }
}

TEST(GpuFill, SimplexRowsAreSoftmaxesOfNormals) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  // Rows shorter than a warp, of a few blocks' width, and longer than a block many times.
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{4096, 3}, {2, 8, 300}, {40, 20000}}) {
    Filled x(driver, DataType::f32(), shape);
    const tensor::HostTensor& t = x.fill(filler, ValueDomain::simplex(), Distribution::kUniform01, 21);
    expect_probability_rows(t, shape.back(), 1e-5, "f32 rows of " + std::to_string(shape.back()));
    if (shape.back() >= 20000) {
      // The largest of 20000 normals is about 4 standard deviations out: e^4 above the mean.
      Summary s = summarize(t);
      EXPECT_GT(s.max / s.mean, 20.0);
    }
  }
  Filled wide(driver, DataType::f64(), {8, 5000});
  expect_probability_rows(wide.fill(filler, ValueDomain::simplex(), Distribution::kNormal, 2), 5000, 1e-12, "f64");
  for (DataType dtype : {DataType::f16(), DataType::bf16()}) {
    Filled narrow(driver, dtype, {64, 64});
    expect_probability_rows(narrow.fill(filler, ValueDomain::simplex(), Distribution::kNormal, 2), 64, 2e-2,
                            ir::to_string(dtype));
  }
  // A scalar is a row of one: probability 1.
  Filled scalar(driver, DataType::f32(), {});
  EXPECT_EQ(scalar.fill(filler, ValueDomain::simplex(), Distribution::kNormal, 1).get(0), 1.0);
}

// kl_div_loss's shape in kernelbench-l1 (problem 98): 16384 rows of 16384, drawn in well
// under a second (the host generator took a minute per input).
TEST(GpuFill, SimplexOfAKlDivLossInputIsFast) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  const int64_t rows = 16384, row_length = 16384;
  Filled x(driver, DataType::f32(), {rows, row_length});
  filler.fill_domain(x.ptr(), x.buffer(), ValueDomain::simplex(), Distribution::kUniform01, 4);  // loads, warms up
  ASSERT_TRUE(driver->synchronize().ok());
  auto start = std::chrono::steady_clock::now();
  filler.fill_domain(x.ptr(), x.buffer(), ValueDomain::simplex(), Distribution::kUniform01, 5);
  ASSERT_TRUE(driver->synchronize().ok());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "simplex fill of " << rows << "x" << row_length << " f32: " << seconds * 1e3 << " ms\n";
  EXPECT_LT(seconds, 2.0);
  // The first and last rows, read back.
  tensor::HostTensor ends(DataType::f32(), {2, row_length});
  size_t row_bytes = static_cast<size_t>(row_length) * sizeof(float);
  ASSERT_TRUE(driver->copy_to_host(ends.data(), x.ptr(), row_bytes).ok());
  ASSERT_TRUE(driver
                  ->copy_to_host(static_cast<uint8_t*>(ends.data()) + row_bytes,
                                 x.ptr() + static_cast<runtime::DevicePtr>((rows - 1) * row_bytes), row_bytes)
                  .ok());
  expect_probability_rows(ends, row_length, 1e-5, "kl_div_loss rows");
}

TEST(GpuFill, IntegerRangesAreUniformWithinTheRange) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  struct Case {
    DataType dtype;
    int64_t lo, hi;
  };
  for (Case c : {Case{DataType::i32(), 0, 1000}, Case{DataType::i64(), -(int64_t{1} << 40), int64_t{1} << 40},
                 Case{DataType::i8(), -128, 128}, Case{DataType::i64(), 5, 6}, Case{DataType::f32(), -3, 7},
                 Case{DataType::f16(), 0, 100}, Case{DataType::bf16(), 0, 64}, Case{DataType::f64(), 10, 20}}) {
    std::string what = ir::to_string(c.dtype) + " [" + std::to_string(c.lo) + ", " + std::to_string(c.hi) + ")";
    Filled x(driver, c.dtype, {kElements});
    Summary s = summarize(x.fill(filler, ValueDomain::int_range(c.lo, c.hi), Distribution::kNormal, 13));
    EXPECT_TRUE(s.all_integers) << what;
    EXPECT_GE(s.min, static_cast<double>(c.lo)) << what;
    EXPECT_LE(s.max, static_cast<double>(c.hi - 1)) << what;
    double span = static_cast<double>(c.hi) - static_cast<double>(c.lo);
    EXPECT_NEAR(s.mean, (static_cast<double>(c.lo) + static_cast<double>(c.hi - 1)) / 2, span * 0.005 + 1e-9) << what;
    if (c.hi - c.lo <= 1000) {
      EXPECT_EQ(s.integers, range_values(c.lo, c.hi)) << what;
    }
  }
}

TEST(GpuFill, SameSeedSameValuesOtherSeedOtherValues) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  for (ValueDomain domain : {ValueDomain::int_range(0, 1000), ValueDomain::simplex(), ValueDomain::positive()}) {
    Filled x(driver, DataType::f32(), {64, 64});
    tensor::HostTensor first = x.fill(filler, domain, Distribution::kNormal, 1);
    tensor::HostTensor again = x.fill(filler, domain, Distribution::kNormal, 1);
    tensor::HostTensor other = x.fill(filler, domain, Distribution::kNormal, 2);
    size_t bytes = static_cast<size_t>(first.size_bytes());
    EXPECT_EQ(std::memcmp(first.data(), again.data(), bytes), 0);
    EXPECT_NE(std::memcmp(first.data(), other.data(), bytes), 0);
  }
}

TEST(GpuFill, DomainsLeftToTheHostAreRefused) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  Filled offsets(driver, DataType::i32(), {9});
  EXPECT_THROW(offsets.fill(filler, ValueDomain::offsets(16, 4), Distribution::kNormal, 1), UserError);
  Filled narrow(driver, DataType::i8(), {16});
  EXPECT_THROW(filler.fill_int_range(narrow.ptr(), DataType::i8(), 16, 0, 300, 1), UserError);
  EXPECT_THROW(narrow.fill(filler, ValueDomain::simplex(), Distribution::kNormal, 1), UserError);
}

}  // namespace
}  // namespace dragon::bench
