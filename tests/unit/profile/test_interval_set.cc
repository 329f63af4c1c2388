// Interval unions: overlap across streams counts once.
#include <gtest/gtest.h>

#include "dragon/profile/interval_set.h"

namespace dragon::profile {
namespace {

TEST(IntervalSet, UnionMergesOverlapAndTouchingIntervals) {
  auto u = interval_union({{10, 20}, {15, 30}, {30, 35}, {50, 60}, {5, 5}, {40, 38}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].start, 10u);
  EXPECT_EQ(u[0].end, 35u);
  EXPECT_EQ(u[1].start, 50u);
  EXPECT_EQ(total_length(u), 35u);
}

TEST(IntervalSet, ConcurrentStreamsAreNotDoubleCounted) {
  // Two streams busy over [0,100) and [50,150): 150 ns busy, not 200.
  EXPECT_EQ(total_length(interval_union({{0, 100}, {50, 150}})), 150u);
}

TEST(IntervalSet, IntersectClipsToWindows) {
  auto clipped = intersect(interval_union({{0, 100}, {200, 300}}), interval_union({{50, 250}, {290, 400}}));
  ASSERT_EQ(clipped.size(), 3u);
  EXPECT_EQ(total_length(clipped), 50u + 50u + 10u);
  EXPECT_TRUE(intersect({}, {{0, 10}}).empty());
}

}  // namespace
}  // namespace dragon::profile
