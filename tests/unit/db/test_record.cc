// The tuning database's value types: status ids, hashes and times read back as written,
// and the median's confidence interval checked against exact binomial arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "dragon/db/record.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

TEST(RecordStatus, EveryIdReadsBackAndUnknownIdsDoNot) {
  ASSERT_EQ(all_record_statuses().size(), 8u);
  for (RecordStatus status : all_record_statuses()) {
    std::string_view id = record_status_id(status);
    EXPECT_FALSE(id.empty());
    EXPECT_EQ(parse_record_status(id), status) << id;
  }
  EXPECT_EQ(record_status_id(RecordStatus::kWrongResult), "wrong_result");
  EXPECT_FALSE(parse_record_status("OK").has_value());
  EXPECT_FALSE(parse_record_status("").has_value());
}

TEST(WorkloadHash, SixteenHexDigitsBothWays) {
  EXPECT_EQ(format_workload_hash(0x1234abcdULL), "000000001234abcd");
  EXPECT_EQ(format_workload_hash(~0ULL), "ffffffffffffffff");
  for (uint64_t hash : {0ULL, 1ULL, 0x8000000000000000ULL, 0xfedcba9876543210ULL}) {
    EXPECT_EQ(parse_workload_hash(format_workload_hash(hash)), hash);
  }
  EXPECT_EQ(parse_workload_hash("FEDCBA9876543210"), 0xfedcba9876543210ULL);
  for (std::string_view bad : {"", "123", "000000001234abcg", "000000001234abcd0", "-00000001234abcd"}) {
    EXPECT_THROW(parse_workload_hash(bad), UserError) << bad;
  }
}

TEST(Time, IsoTextBothWaysToTheMillisecond) {
  using namespace std::chrono;
  EXPECT_EQ(format_time(TimePoint{}), "1970-01-01T00:00:00.000Z");
  const TimePoint leap = sys_days(year(2024) / February / 29) + hours(23) + minutes(59) + seconds(58) + milliseconds(7);
  EXPECT_EQ(format_time(leap), "2024-02-29T23:59:58.007Z");
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> ms(0, 4102444800000);  // to 2100
  for (int i = 0; i < 200; ++i) {
    const TimePoint t{milliseconds(ms(rng))};
    EXPECT_EQ(parse_time(format_time(t)), t);
  }
  for (std::string_view bad : {"2024-02-30T00:00:00.000Z", "2024-02-29 23:59:58.007Z", "2024-02-29T24:00:00.000Z",
                               "2024-02-29T23:59:58Z", "2024-02-29T23:59:58.007", "yesterday"}) {
    EXPECT_THROW(parse_time(bad), UserError) << bad;
  }
}

TEST(Workload, OfAFunctionHoldsItsHashAndCanonicalText) {
  Workload w = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
  ASSERT_TRUE(w.spec.has_value());
  EXPECT_EQ(*w.spec, ops::OpRegistry::global().make_workload("matmul:m=32,n=32,k=16,dtype=f32").spec);
  const ir::PrimFunc back = w.function();
  EXPECT_EQ(ir::print_function(back), w.ir);
  EXPECT_EQ(ir::structural_hash(back), w.hash);
}

// The rank r of the 95% interval [x_(r), x_(n+1-r)] by exact integer arithmetic: the
// largest r with sum_{i<r} C(n, i) <= 0.025 * 2^n (n <= 60 keeps everything in uint64).
int64_t exact_lower_rank(int64_t n) {
  std::vector<uint64_t> choose(static_cast<size_t>(n) + 1);
  choose[0] = 1;
  for (int64_t i = 1; i <= n; ++i) choose[i] = choose[i - 1] * static_cast<uint64_t>(n - i + 1) / static_cast<uint64_t>(i);
  const long double limit = 0.025L * static_cast<long double>(uint64_t{1} << n);
  uint64_t below = 0;
  int64_t rank = 0;
  for (int64_t i = 0; i <= n / 2; ++i) {
    if (static_cast<long double>(below + choose[i]) > limit) break;
    below += choose[i];
    rank = i + 1;
  }
  return rank;
}

TEST(LatencySummary, MedianAndOrderStatisticInterval) {
  EXPECT_FALSE(summarize_latency({}).has_value());
  std::vector<float> odd = {5, 1, 3};
  auto s = summarize_latency(odd);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->samples, 3);
  EXPECT_EQ(s->median_ms, 3);
  EXPECT_EQ(s->min_ms, 1);
  EXPECT_EQ(s->max_ms, 5);
  EXPECT_FALSE(s->median_ci95.has_value()) << "five or fewer samples cannot bound the median at 95%";
  std::vector<float> even = {4, 1, 3, 2, 6, 5};
  s = summarize_latency(even);
  EXPECT_DOUBLE_EQ(s->median_ms, 3.5);
  ASSERT_TRUE(s->median_ci95.has_value()) << "six samples: [min, max] covers with 1 - 2/64";
  EXPECT_EQ(s->median_ci95->low_ms, 1);
  EXPECT_EQ(s->median_ci95->high_ms, 6);

  std::mt19937_64 rng(11);
  for (int64_t n = 6; n <= 60; ++n) {
    std::vector<float> samples(static_cast<size_t>(n));
    for (float& x : samples) x = std::uniform_real_distribution<float>(1, 2)(rng);
    auto summary = summarize_latency(samples);
    ASSERT_TRUE(summary && summary->median_ci95) << n;
    std::vector<float> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    const int64_t r = exact_lower_rank(n);
    ASSERT_GE(r, 1) << n;
    EXPECT_EQ(summary->median_ci95->low_ms, sorted[r - 1]) << n;
    EXPECT_EQ(summary->median_ci95->high_ms, sorted[n - r]) << n;
    EXPECT_LE(summary->median_ci95->low_ms, summary->median_ms);
    EXPECT_GE(summary->median_ci95->high_ms, summary->median_ms);
  }
}

TEST(Record, MedianComesFromItsSamples) {
  Record r;
  EXPECT_FALSE(r.median_ms().has_value());
  r.samples_ms = {2.0f, 9.0f, 1.0f, 3.0f};
  EXPECT_DOUBLE_EQ(*r.median_ms(), 2.5);
}

}  // namespace
}  // namespace dragon::db
