// Which inputs `dragon bench` draws on the device (DeviceFiller::draws) and which it leaves
// to interp's host generator: bag offsets, types without a kernel, and the domains the host
// generator rejects, so that its message (naming the parameter) is the one users see.
#include <gtest/gtest.h>

#include <limits>

#include "dragon/bench/device_filler.h"
#include "dragon/interp/input_generator.h"
#include "dragon/ir/stmt.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

using ir::DataType;
using ir::ValueDomain;

const DataType kFloats[] = {DataType::f32(), DataType::f64(), DataType::f16(), DataType::bf16()};
const DataType kIntegers[] = {DataType::i8(), DataType::i32(), DataType::i64(), DataType::boolean()};

TEST(DeviceFillerDomains, RealAndPositiveInputsOfEveryScalarTypeGoToTheDevice) {
  for (const DataType* types : {kFloats, kIntegers}) {
    for (int t = 0; t < 4; ++t) {
      EXPECT_TRUE(DeviceFiller::draws(ValueDomain::real(), types[t])) << ir::to_string(types[t]);
      EXPECT_TRUE(DeviceFiller::draws(ValueDomain::positive(), types[t])) << ir::to_string(types[t]);
    }
  }
}

TEST(DeviceFillerDomains, SimplexGoesToTheDeviceForFloatsOnly) {
  for (DataType dtype : kFloats) {
    EXPECT_TRUE(DeviceFiller::draws(ValueDomain::simplex(), dtype)) << ir::to_string(dtype);
  }
  for (DataType dtype : kIntegers) {
    EXPECT_FALSE(DeviceFiller::draws(ValueDomain::simplex(), dtype)) << ir::to_string(dtype);
  }
}

TEST(DeviceFillerDomains, IntegerRangesGoToTheDeviceWhenTheTypeHoldsThem) {
  EXPECT_TRUE(DeviceFiller::draws(ValueDomain::int_range(0, 1000), DataType::i32()));
  EXPECT_TRUE(DeviceFiller::draws(ValueDomain::int_range(-128, 128), DataType::i8()));
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::int_range(-129, 0), DataType::i8()));
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::int_range(0, 129), DataType::i8()));
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::int_range(0, int64_t{1} << 31 | 1), DataType::i32()));
  const int64_t lowest = std::numeric_limits<int64_t>::min(), highest = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(DeviceFiller::draws(ValueDomain::int_range(lowest, highest), DataType::i64()));
  EXPECT_TRUE(DeviceFiller::draws(ValueDomain::int_range(0, 1000000), DataType::f16())) << "floats take any range";
  EXPECT_TRUE(DeviceFiller::draws(ValueDomain::int_range(0, 5), DataType::boolean())) << "bools store value != 0";
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::int_range(3, 3), DataType::i32())) << "empty";
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::int_range(3, 2), DataType::f32())) << "empty";
}

TEST(DeviceFillerDomains, IntRangeFitsChecksBothEnds) {
  EXPECT_TRUE(DeviceFiller::int_range_fits(DataType::i8(), -128, 128));
  EXPECT_FALSE(DeviceFiller::int_range_fits(DataType::i8(), -128, 129));
  EXPECT_FALSE(DeviceFiller::int_range_fits(DataType::i8(), -129, 127));
  EXPECT_TRUE(DeviceFiller::int_range_fits(DataType::i32(), -(int64_t{1} << 31), int64_t{1} << 31));
  EXPECT_FALSE(DeviceFiller::int_range_fits(DataType::i32(), 0, (int64_t{1} << 31) + 1));
  EXPECT_TRUE(DeviceFiller::int_range_fits(DataType::i64(), -5, -4));
  EXPECT_FALSE(DeviceFiller::int_range_fits(DataType::i64(), -4, -5));
}

TEST(DeviceFillerDomains, OffsetsVectorTypesAndUnkernelledWidthsStayOnTheHost) {
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::offsets(16, 4), DataType::i32()));
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::offsets(16, 4), DataType::i64()));
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::real(), DataType::f16().with_lanes(2)));
  EXPECT_FALSE(DeviceFiller::draws(ValueDomain::real(), DataType(ir::TypeCode::kInt, 16)));
}

// The domains draws() refuses as invalid are the ones the host generator rejects, so the
// fallback reports them instead of drawing something else.
TEST(DeviceFillerDomains, InvalidDomainsAreRejectedByTheHostFallback) {
  struct Case {
    DataType dtype;
    ValueDomain domain;
  };
  for (Case c : {Case{DataType::i32(), ValueDomain::simplex()}, Case{DataType::i8(), ValueDomain::int_range(0, 300)},
                 Case{DataType::i64(), ValueDomain::int_range(7, 7)}}) {
    ASSERT_FALSE(DeviceFiller::draws(c.domain, c.dtype));
    ir::PrimFunc f = ir::PrimFunc::make("f", {ir::Param{ir::Buffer::make("X", c.dtype, {4}), ir::ParamRole::kInput, c.domain}},
                                        ir::EvaluateNode::make(0));
    EXPECT_THROW(interp::make_argument(f, 0, 1, interp::Distribution::kRand), UserError) << ir::to_string(c.dtype);
  }
  // Offsets are valid; the host draws them.
  ir::PrimFunc f = ir::PrimFunc::make(
      "f", {ir::Param{ir::Buffer::make("O", DataType::i32(), {5}), ir::ParamRole::kInput, ValueDomain::offsets(8, 4)}},
      ir::EvaluateNode::make(0));
  tensor::HostTensor offsets = interp::make_argument(f, 0, 1, interp::Distribution::kRand);
  EXPECT_EQ(offsets.get_int(0), 0);
  EXPECT_EQ(offsets.get_int(4), 8);
}

}  // namespace
}  // namespace dragon::bench
