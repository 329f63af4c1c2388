// Amdahl projection, including the seed paper's DLRM arithmetic.
#include <gtest/gtest.h>

#include "dragon/profile/projection.h"
#include "dragon/support/error.h"

namespace dragon::profile {
namespace {

TEST(Projection, ReproducesTheSeedPapersRecommenderFigure) {
  // 58.2% addressable, kernels win on 41.7% of it at a 1.552x median: about 8.6% saved.
  Projection p = project({{0.582, CategorySpeedup{"embedding_sparse", 1.552, 0.417}}});
  EXPECT_NEAR(p.time_saved_fraction, 0.0863, 0.0005);
  EXPECT_NEAR(p.end_to_end_speedup, 1.0 / (1.0 - 0.0863), 0.001);
}

TEST(Projection, AmdahlLimits) {
  EXPECT_NEAR(project({{0.5, CategorySpeedup{"x", 2.0, 1.0}}}).end_to_end_speedup, 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(project({{0.01, CategorySpeedup{"x", 1e9, 1.0}}}).time_saved_fraction, 0.01, 1e-9);
  EXPECT_NEAR(project({{0.3, CategorySpeedup{"x", 0.5, 1.0}}}).time_saved_fraction, -0.3, 1e-12);  // slowdowns count
  EXPECT_THROW(project({{0.7, CategorySpeedup{"a", 2}}, {0.6, CategorySpeedup{"b", 2}}}), UserError);
  EXPECT_THROW(project({{0.1, CategorySpeedup{"a", 0}}}), UserError);
}

TEST(Projection, ParsesSpeedupFlags) {
  CategorySpeedup s = parse_category_speedup("embedding_sparse=1.552@0.417");
  EXPECT_EQ(s.category, "embedding_sparse");
  EXPECT_DOUBLE_EQ(s.speedup, 1.552);
  EXPECT_DOUBLE_EQ(s.win_fraction, 0.417);
  EXPECT_DOUBLE_EQ(parse_category_speedup("norm_softmax=2").win_fraction, 1.0);
  EXPECT_THROW(parse_category_speedup("norm_softmax"), UserError);
  EXPECT_THROW(parse_category_speedup("x=fast"), UserError);
  EXPECT_THROW(parse_category_speedup("x=2@1.5"), UserError);
}

TEST(Projection, UnknownCategoryInAReportIsAUserError) {
  ProfileReport r;
  r.categories.push_back(CategoryTime{"gemm", false, 10, 10, 1, 0.5});
  EXPECT_NEAR(project(r, {CategorySpeedup{"gemm", 2.0, 1.0}}).time_saved_fraction, 0.25, 1e-12);
  EXPECT_THROW(project(r, {CategorySpeedup{"nonsense", 2.0, 1.0}}), UserError);
}

}  // namespace
}  // namespace dragon::profile
