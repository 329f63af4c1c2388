// The gradient-based task scheduler: one round-robin round, then rounds to the task with
// the most expected gain; finished tasks get none; the geometric objective weighs relative
// gains, the total-latency objective absolute ones.
#include <gtest/gtest.h>

#include "dragon/search/task_scheduler.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

TEST(GradientTaskScheduler, FirstVisitsEveryTaskInOrder) {
  GradientTaskScheduler s({1, 1, 1});
  for (size_t expected = 0; expected < 3; ++expected) {
    std::optional<size_t> t = s.next();
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(*t, expected);
    s.report(*t, 1.0);
  }
}

TEST(GradientTaskScheduler, NextTasksRanksDistinctUnfinishedTasksAsNextWould) {
  GradientTaskScheduler s({1, 1, 1, 1});
  EXPECT_EQ(s.next_tasks(3), (std::vector<size_t>{0, 1, 2})) << "the round-robin round, in order";
  s.report(0, 10.0);
  s.report(1, 0.1);
  s.finish(2);
  // Task 3 has not had its first round; 0 (slow) before 1 under total latency; 2 is done.
  EXPECT_EQ(s.next_tasks(8), (std::vector<size_t>{3, 0, 1}));
  EXPECT_EQ(s.next_tasks(1).front(), *s.next());
  EXPECT_TRUE(s.next_tasks(0).empty());
}

TEST(GradientTaskScheduler, TotalLatencyFavoursTheSlowTask) {
  GradientTaskScheduler s({1, 1});
  s.report(0, 10.0);  // 10 ms
  s.report(1, 0.1);   // 0.1 ms
  EXPECT_EQ(s.next(), 0u);
}

TEST(GradientTaskScheduler, GeometricMeanFavoursTheTaskThatImprovesFastest) {
  GradientTaskScheduler s({1, 1}, {.objective = TaskObjective::kGeometricMean, .alpha = 0.5, .window = 1});
  // Task 0 (slow) has stopped improving; task 1 (fast) halved its latency last round.
  s.report(0, 10.0);
  s.report(1, 0.2);
  s.report(0, 10.0);
  s.report(1, 0.1);
  EXPECT_GT(s.priority(1), s.priority(0));
  EXPECT_EQ(s.next(), 1u);
}

TEST(GradientTaskScheduler, WeightsScaleThePriority) {
  GradientTaskScheduler s({1, 4});
  s.report(0, 1.0);
  s.report(1, 1.0);
  EXPECT_DOUBLE_EQ(s.priority(1), 4 * s.priority(0));
  EXPECT_EQ(s.next(), 1u);
}

TEST(GradientTaskScheduler, FinishedTasksGetNoMoreRounds) {
  GradientTaskScheduler s({1, 1});
  s.report(0, 5.0);
  s.report(1, 1.0);
  s.finish(0);
  EXPECT_EQ(s.next(), 1u);
  s.finish(1);
  EXPECT_FALSE(s.next().has_value());
}

TEST(GradientTaskScheduler, ATaskThatFindsNothingGoesLast) {
  GradientTaskScheduler s({1, 1});
  s.report(0, std::nullopt);
  s.report(1, 1.0);
  EXPECT_EQ(s.next(), 0u) << "one more round for a task that found nothing yet";
  s.report(0, std::nullopt);
  EXPECT_EQ(s.next(), 1u);
}

TEST(GradientTaskScheduler, TheBestNeverGetsWorse) {
  GradientTaskScheduler s({1}, {.objective = TaskObjective::kTotalLatency, .alpha = 1.0, .window = 1});
  s.report(0, 2.0);
  s.report(0, 3.0);  // a worse round: the best stays 2
  EXPECT_DOUBLE_EQ(s.priority(0), 0.0);  // no measured gain over the window
}

TEST(GradientTaskScheduler, RejectsBadWeights) {
  EXPECT_THROW(GradientTaskScheduler({1, 0}), UserError);
  EXPECT_THROW(GradientTaskScheduler({1}, {.window = 0}), UserError);
}

}  // namespace
}  // namespace dragon::search
