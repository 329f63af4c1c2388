// HostTensor: storage sizes, rounding on set, integer saturation and wrapping, fill.
#include "dragon/tensor/host_tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dragon/support/error.h"

namespace dragon::interp {
namespace {

using ir::DataType;
using tensor::HostTensor;

TEST(HostTensorTest, ShapeAndStorage) {
  HostTensor t(DataType::f16(), {2, 3});
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.size_bytes(), 12);
  EXPECT_EQ(t.get(5), 0.0);
  HostTensor scalar(DataType::boolean(), {});
  EXPECT_EQ(scalar.num_elements(), 1);
  EXPECT_EQ(scalar.size_bytes(), 1);
  HostTensor empty(DataType::f32(), {4, 0});
  EXPECT_EQ(empty.num_elements(), 0);
  HostTensor like = HostTensor::like(ir::Buffer::make("B", DataType::i64(), {5}));
  EXPECT_EQ(like.dtype(), DataType::i64());
  EXPECT_EQ(like.size_bytes(), 40);
}

TEST(HostTensorTest, SetRoundsToTheElementType) {
  HostTensor h(DataType::f16(), {1});
  h.set(0, 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));  // above halfway: rounds up, once
  EXPECT_EQ(h.get(0), 1 + std::ldexp(1.0, -10));
  HostTensor b(DataType::bf16(), {1});
  b.set(0, 1 + std::ldexp(1.0, -8));  // halfway: ties to even
  EXPECT_EQ(b.get(0), 1.0);
  HostTensor f(DataType::f32(), {1});
  f.set(0, 0.1);
  EXPECT_EQ(f.get(0), static_cast<double>(0.1f));
  HostTensor d(DataType::f64(), {1});
  d.set(0, 0.1);
  EXPECT_EQ(d.get(0), 0.1);
}

TEST(HostTensorTest, IntegersTruncateSaturateAndWrap) {
  HostTensor t(DataType::i8(), {4});
  t.set(0, -3.7);
  t.set(1, 1e9);
  t.set(2, std::numeric_limits<double>::quiet_NaN());
  t.set_int(3, 300);
  EXPECT_EQ(t.get_int(0), -3);
  EXPECT_EQ(t.get_int(1), 127);
  EXPECT_EQ(t.get_int(2), 0);
  EXPECT_EQ(t.get_int(3), 44);
  HostTensor b(DataType::boolean(), {2});
  b.set(0, 0.5);
  b.set_int(1, 0);
  EXPECT_EQ(b.get(0), 1.0);
  EXPECT_EQ(b.get_int(1), 0);
}

TEST(HostTensorTest, FillKeepsNaN) {
  HostTensor t(DataType::bf16(), {3});
  t.fill(std::numeric_limits<double>::quiet_NaN());
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(t.get(i)));
  t.fill(2.5);
  EXPECT_EQ(t.get(2), 2.5);
}

TEST(HostTensorTest, OutOfRangeElementIsAnInternalError) {
  HostTensor t(DataType::f32(), {2});
  EXPECT_THROW(t.get(2), InternalError);
  EXPECT_THROW(t.set(-1, 0), InternalError);
}

}  // namespace
}  // namespace dragon::interp
