// Profile analysis on synthetic traces: window, busy/idle, category unions, NVTX windows,
// addressable fraction and top kernels.
#include <gtest/gtest.h>

#include "dragon/profile/profile_report.h"
#include "dragon/support/error.h"

namespace dragon::profile {
namespace {

TraceEvent kernel(const std::string& name, uint64_t start, uint64_t end, uint32_t stream = 7) {
  TraceEvent e;
  e.kind = EventKind::kKernel;
  e.name = name;
  e.start_ns = start;
  e.end_ns = end;
  e.stream = stream;
  return e;
}

TraceEvent range(const std::string& name, uint64_t start, uint64_t end) {
  TraceEvent e = kernel(name, start, end);
  e.kind = EventKind::kRange;
  return e;
}

KernelClassifier rules() {
  return KernelClassifier::from_text(
      "category\tgemm\tfixed\tg\ncategory\tnorm\taddressable\tn\ncategory\tembed\taddressable\te\n"
      "rule\tgemm\tgemm\nrule\tnorm\tnorm\nrule\tembed\tembed\n",
      "<test>");
}

ProcessTrace process(std::vector<TraceEvent> events, uint64_t start = 0, uint64_t end = 1000) {
  ProcessTrace t;
  t.pid = 1;
  t.window_start_ns = start;
  t.window_end_ns = end;
  t.complete = true;
  t.events = std::move(events);
  return t;
}

const CategoryTime& category(const ProfileReport& r, const std::string& name) {
  for (const CategoryTime& c : r.categories) {
    if (c.category == name) return c;
  }
  throw std::runtime_error("no category " + name);
}

TEST(ProfileReport, WindowBusyIdleAndCategoryShares) {
  // gemm on two streams overlapping: [100,300) and [200,400) -> 300 ns union.
  // norm [500,600), embed [550,700) (overlaps norm): addressable union [500,700) = 200.
  ProfileReport r = analyze({process({kernel("gemm_a", 100, 300, 1), kernel("gemm_b", 200, 400, 2),
                                      kernel("norm_k", 500, 600), kernel("embed_k", 550, 700)})},
                            rules(), {});
  EXPECT_EQ(r.window_ns, 1000u);
  EXPECT_EQ(r.busy_ns, 300u + 200u);
  EXPECT_EQ(r.idle_ns, 500u);
  EXPECT_EQ(category(r, "gemm").union_ns, 300u);
  EXPECT_EQ(category(r, "gemm").summed_ns, 400u);
  EXPECT_EQ(category(r, "gemm").count, 2);
  EXPECT_DOUBLE_EQ(category(r, "gemm").share, 0.3);
  EXPECT_DOUBLE_EQ(r.addressable_fraction, 0.2);
  ASSERT_FALSE(r.top_kernels.empty());
  EXPECT_EQ(r.top_kernels[0].name, "gemm_a");  // 200 ns, ties broken by name
}

TEST(ProfileReport, NvtxRangeRestrictsTheWindow) {
  ProfileReport r = analyze({process({kernel("gemm", 0, 100), range("measure", 400, 600), kernel("norm", 450, 650),
                                      range("other", 0, 1000)})},
                            rules(), {"measure", 10});
  EXPECT_EQ(r.window_ns, 200u);
  EXPECT_EQ(category(r, "norm").union_ns, 150u);  // clipped to the range
  EXPECT_EQ(category(r, "gemm").union_ns, 0u);
  EXPECT_DOUBLE_EQ(r.addressable_fraction, 0.75);
  EXPECT_NE(r.window_source.find("measure"), std::string::npos);
}

TEST(ProfileReport, ProcessesAreUnitedOnOneClock) {
  ProcessTrace a = process({kernel("gemm", 100, 200)}, 0, 500);
  ProcessTrace b = process({kernel("norm", 400, 900)}, 300, 1000);
  b.pid = 2;
  ProfileReport r = analyze({a, b}, rules(), {});
  EXPECT_EQ(r.window_ns, 1000u);
  EXPECT_EQ(r.processes, 2);
  EXPECT_EQ(r.busy_ns, 600u);
}

TEST(ProfileReport, NothingToAnalyseIsAUserError) {
  EXPECT_THROW(analyze({process({})}, rules(), {}), UserError);
  EXPECT_THROW(analyze({process({kernel("gemm", 0, 10)})}, rules(), {"missing", 10}), UserError);
  ProcessTrace conflicted = process({kernel("gemm", 0, 10)});
  conflicted.error = "CUPTI activity tracing unavailable: another subscriber";
  EXPECT_THROW(analyze({conflicted}, rules(), {}), UserError);
}

TEST(ProfileReport, IncompleteTracesEndAtTheirLastActivityWithAWarning) {
  ProcessTrace t = process({kernel("gemm", 100, 700)}, 0, 0);
  t.complete = false;
  ProfileReport r = analyze({t}, rules(), {});
  EXPECT_EQ(r.window_ns, 700u);
  ASSERT_EQ(r.warnings.size(), 1u);
}

}  // namespace
}  // namespace dragon::profile
