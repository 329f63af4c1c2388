// Deterministic input generation: same seed same bytes, per-parameter streams, the
// distributions' ranges, and every value domain's properties.
#include "dragon/interp/input_generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "dragon/support/error.h"
#include "interp_test_util.h"

namespace dragon::interp {
namespace {

using ir::DataType;
using tensor::HostTensor;

ir::Param param(const std::string& name, DataType dtype, std::vector<int64_t> shape,
                ir::ParamRole role = ir::ParamRole::kInput, ir::ValueDomain domain = {}) {
  return ir::Param{ir::Buffer::make(name, dtype, std::move(shape)), role, domain};
}

// Generation reads only the parameters; the body is a placeholder that never runs.
ir::PrimFunc func_of(std::vector<ir::Param> params) {
  return testing::make_func(std::move(params), ir::EvaluateNode::make(0));
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.size_bytes() == b.size_bytes() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

TEST(InputGeneratorTest, SameSeedSameBytesDifferentSeedDifferentBytes) {
  ir::PrimFunc f =
      func_of({param("A", DataType::f32(), {64}), param("B", DataType::f16(), {8, 8}),
               param("I", DataType::i64(), {32}, ir::ParamRole::kInput, ir::ValueDomain::int_range(0, 1000))});
  for (Distribution d : {Distribution::kNormal, Distribution::kUniform, Distribution::kRand, Distribution::kOffset,
                         Distribution::kEdge}) {
    std::vector<HostTensor> first = make_arguments(f, 42, d), again = make_arguments(f, 42, d);
    std::vector<HostTensor> other = make_arguments(f, 43, d);
    for (size_t p = 0; p < first.size(); ++p) {
      EXPECT_TRUE(same_bytes(first[p], again[p])) << distribution_name(d) << " param " << p;
      EXPECT_FALSE(same_bytes(first[p], other[p])) << distribution_name(d) << " param " << p;
    }
  }
}

// Two parameters of one shape and type draw from different streams.
TEST(InputGeneratorTest, EachParameterHasItsOwnStream) {
  ir::PrimFunc f = func_of({param("A", DataType::f32(), {32}), param("B", DataType::f32(), {32})});
  std::vector<HostTensor> args = make_arguments(f, 5, Distribution::kNormal);
  EXPECT_FALSE(same_bytes(args[0], args[1]));
}

// Pins the generator's bits: a change here changes every recorded experiment's inputs.
TEST(InputGeneratorTest, BitsArePinned) {
  ir::PrimFunc f = func_of({param("A", DataType::f64(), {3}), param("I", DataType::i32(), {3}, ir::ParamRole::kInput,
                                                                    ir::ValueDomain::int_range(0, 1000000))});
  std::vector<HostTensor> args = make_arguments(f, 1, Distribution::kNormal);
  std::string text = fmt::format("{:.17g} {:.17g} {:.17g} {} {} {}", args[0].get(0), args[0].get(1), args[0].get(2),
                                 args[1].get_int(0), args[1].get_int(1), args[1].get_int(2));
  EXPECT_EQ(text, "-0.6630836951814737 0.94395829873308912 0.67051216527807345 673957 535022 702626");
}

struct Moments {
  double mean = 0, stddev = 0, min = std::numeric_limits<double>::infinity(),
         max = -std::numeric_limits<double>::infinity();
};
Moments moments(const HostTensor& t) {
  Moments m;
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.get(i);
    sum += v;
    sum_sq += v * v;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  double n = static_cast<double>(t.num_elements());
  m.mean = sum / n;
  m.stddev = std::sqrt(sum_sq / n - m.mean * m.mean);
  return m;
}

TEST(InputGeneratorTest, DistributionsHaveTheirRanges) {
  ir::PrimFunc f = func_of({param("A", DataType::f32(), {20000})});
  Moments normal = moments(make_arguments(f, 1, Distribution::kNormal)[0]);
  EXPECT_NEAR(normal.mean, 0, 0.05);
  EXPECT_NEAR(normal.stddev, 1, 0.05);
  Moments uniform = moments(make_arguments(f, 1, Distribution::kUniform)[0]);
  EXPECT_GE(uniform.min, -1);
  EXPECT_LT(uniform.max, 1);
  EXPECT_LT(uniform.min, -0.99);
  EXPECT_NEAR(uniform.mean, 0, 0.05);
  Moments rand = moments(make_arguments(f, 1, Distribution::kRand)[0]);
  EXPECT_GE(rand.min, 0);
  EXPECT_LE(rand.max, 1);  // < 1 before rounding to f32
  EXPECT_NEAR(rand.mean, 0.5, 0.02);
  Moments offset = moments(make_arguments(f, 1, Distribution::kOffset)[0]);
  EXPECT_NEAR(offset.mean, 100, 0.05);
  EXPECT_NEAR(offset.stddev, 1, 0.05);
}

TEST(InputGeneratorTest, EdgeMixesSpecialValues) {
  ir::PrimFunc f = func_of({param("A", DataType::f32(), {2000})});
  HostTensor t = make_arguments(f, 9, Distribution::kEdge)[0];
  int positive_zero = 0, negative_zero = 0, ones = 0, minus_ones = 0, tiny = 0, large = 0, other = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.get(i);
    ASSERT_TRUE(std::isfinite(v));
    if (v == 0) {
      (std::signbit(v) ? negative_zero : positive_zero)++;
    } else if (v == 1) {
      ones++;
    } else if (v == -1) {
      minus_ones++;
    } else if (std::fabs(v) == static_cast<double>(1e-6f)) {
      tiny++;
    } else if (std::fabs(v) == 1e3) {
      large++;
    } else {
      other++;
    }
  }
  EXPECT_GT(positive_zero, 100);
  EXPECT_GT(negative_zero, 100);
  EXPECT_GT(ones, 100);
  EXPECT_GT(minus_ones, 100);
  EXPECT_GT(tiny, 200);
  EXPECT_GT(large, 200);
  EXPECT_GT(other, 200);
}

TEST(InputGeneratorTest, OutputsStartAsSentinels) {
  ir::PrimFunc f =
      func_of({param("In", DataType::f32(), {4}), param("F", DataType::bf16(), {4}, ir::ParamRole::kOutput),
               param("I", DataType::i32(), {4}, ir::ParamRole::kOutput),
               param("IO", DataType::f32(), {4}, ir::ParamRole::kInOut)});
  std::vector<HostTensor> args = make_arguments(f, 1, Distribution::kNormal);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(std::isnan(args[0].get(i)));
    EXPECT_TRUE(std::isnan(args[1].get(i)));
    EXPECT_EQ(static_cast<uint32_t>(args[2].get_int(i)), 0x5a5a5a5au);
    EXPECT_FALSE(std::isnan(args[3].get(i))) << "inout parameters are inputs";
  }
}

TEST(InputGeneratorTest, IntsAndBoolsWithoutADomain) {
  ir::PrimFunc f = func_of({param("I", DataType::i32(), {1000}), param("B", DataType::boolean(), {1000})});
  std::vector<HostTensor> args = make_arguments(f, 3, Distribution::kNormal);
  std::set<int64_t> ints, bools;
  for (int64_t i = 0; i < 1000; ++i) {
    ints.insert(args[0].get_int(i));
    bools.insert(static_cast<const uint8_t*>(args[1].data())[i]);
  }
  EXPECT_EQ(*ints.begin(), -8);
  EXPECT_EQ(*ints.rbegin(), 7);
  EXPECT_EQ(ints.size(), 16u);
  EXPECT_EQ(bools, (std::set<int64_t>{0, 1}));
}

TEST(InputGeneratorTest, IntRangeStaysInBoundsAndCoversIt) {
  ir::PrimFunc f =
      func_of({param("I", DataType::i64(), {2000}, ir::ParamRole::kInput, ir::ValueDomain::int_range(-3, 7)),
               param("J", DataType::i8(), {10}, ir::ParamRole::kInput, ir::ValueDomain::int_range(5, 6))});
  std::vector<HostTensor> args = make_arguments(f, 11, Distribution::kEdge);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < 2000; ++i) seen.insert(args[0].get_int(i));
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(*seen.begin(), -3);
  EXPECT_EQ(*seen.rbegin(), 6);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(args[1].get_int(i), 5);
}

TEST(InputGeneratorTest, BadIntRangesAreUserErrors) {
  EXPECT_THROW(make_arguments(
                   func_of({param("I", DataType::i32(), {4}, ir::ParamRole::kInput, ir::ValueDomain::int_range(3, 3))}),
                   1, Distribution::kNormal),
               UserError);
  EXPECT_THROW(
      make_arguments(
          func_of({param("I", DataType::i8(), {4}, ir::ParamRole::kInput, ir::ValueDomain::int_range(0, 1000))}), 1,
          Distribution::kNormal),
      UserError);
}

void expect_offsets(const HostTensor& t, int64_t total, int64_t max_len) {
  ASSERT_EQ(t.shape().size(), 1u);
  EXPECT_EQ(t.get_int(0), 0);
  EXPECT_EQ(t.get_int(t.num_elements() - 1), total);
  for (int64_t i = 1; i < t.num_elements(); ++i) {
    int64_t step = t.get_int(i) - t.get_int(i - 1);
    EXPECT_GE(step, 0) << "at " << i;
    EXPECT_LE(step, max_len) << "at " << i;
  }
}

TEST(InputGeneratorTest, OffsetsHitTheTotalWithBoundedSteps) {
  struct Case {
    int64_t bags, total, max_len;
  };
  const Case cases[] = {{10, 37, 8}, {10, 0, 8}, {10, 80, 8}, {1, 5, 5}, {100, 3, 50}, {100, 4990, 50}, {0, 0, 4}};
  for (const Case& c : cases) {
    ir::PrimFunc f = func_of({param("Off", DataType::i64(), {c.bags + 1}, ir::ParamRole::kInput,
                                    ir::ValueDomain::offsets(c.total, c.max_len))});
    for (uint64_t seed = 0; seed < 5; ++seed) {
      SCOPED_TRACE(fmt::format("bags {} total {} max_len {} seed {}", c.bags, c.total, c.max_len, seed));
      expect_offsets(make_arguments(f, seed, Distribution::kNormal)[0], c.total, c.max_len);
    }
  }
  // Not every bag the same length: the lengths are drawn.
  ir::PrimFunc f =
      func_of({param("Off", DataType::i32(), {51}, ir::ParamRole::kInput, ir::ValueDomain::offsets(250, 10))});
  HostTensor t = make_arguments(f, 2, Distribution::kNormal)[0];
  std::set<int64_t> lengths;
  for (int64_t i = 1; i < 51; ++i) lengths.insert(t.get_int(i) - t.get_int(i - 1));
  EXPECT_GT(lengths.size(), 3u);
}

TEST(InputGeneratorTest, ImpossibleOffsetsAreUserErrors) {
  ir::PrimFunc f =
      func_of({param("Off", DataType::i64(), {5}, ir::ParamRole::kInput, ir::ValueDomain::offsets(17, 4))});
  EXPECT_THROW(make_arguments(f, 1, Distribution::kNormal), UserError);
  ir::PrimFunc narrow =
      func_of({param("Off", DataType::i8(), {5}, ir::ParamRole::kInput, ir::ValueDomain::offsets(200, 60))});
  EXPECT_THROW(make_arguments(narrow, 1, Distribution::kNormal), UserError);
}

TEST(InputGeneratorTest, SimplexRowsArePositiveAndSumToOne) {
  ir::PrimFunc f =
      func_of({param("P", DataType::f32(), {7, 3, 100}, ir::ParamRole::kInput, ir::ValueDomain::simplex())});
  HostTensor t = make_arguments(f, 4, Distribution::kNormal)[0];
  for (int64_t row = 0; row < 21; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < 100; ++j) {
      double v = t.get(row * 100 + j);
      EXPECT_GT(v, 0);
      sum += v;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6) << "row " << row;
  }
}

TEST(InputGeneratorTest, PositiveDomainIsPositive) {
  ir::PrimFunc f = func_of({param("P", DataType::f16(), {1000}, ir::ParamRole::kInput, ir::ValueDomain::positive())});
  for (Distribution d : {Distribution::kNormal, Distribution::kEdge, Distribution::kUniform}) {
    HostTensor t = make_arguments(f, 8, d)[0];
    for (int64_t i = 0; i < 1000; ++i) EXPECT_GE(t.get(i), 0.09) << distribution_name(d);
  }
}

TEST(InputGeneratorTest, DistributionNamesRoundTrip) {
  for (Distribution d : {Distribution::kNormal, Distribution::kUniform, Distribution::kRand, Distribution::kOffset,
                         Distribution::kEdge}) {
    EXPECT_EQ(parse_distribution(distribution_name(d)), d);
    EXPECT_NE(distribution_names().find(distribution_name(d)), std::string_view::npos);
  }
  EXPECT_EQ(parse_distribution("gaussian"), std::nullopt);
}

}  // namespace
}  // namespace dragon::interp
