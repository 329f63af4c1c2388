// dragon bench's files without a GPU: the results JSON round trip and its errors, the HTML
// report (table, plots, escaping, summary), peaks files and the floor's peaks, and the
// device kernels' sources compiling with NVRTC.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "dragon/bench/device_comparison.h"
#include "dragon/bench/device_filler.h"
#include "dragon/bench/html_report.h"
#include "dragon/bench/peaks.h"
#include "dragon/bench/suite_audit.h"

#include <nlohmann/json.hpp>
#include "dragon/bench/suite_results.h"
#include "dragon/support/file.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

Contender timed(std::string name, double ms, std::string status = "ok") {
  Contender c;
  c.name = std::move(name);
  c.status = std::move(status);
  c.checks.push_back(OutputCheck{"C", 2e-7, 1e-5, c.status == "ok", "2e-07 of the reference's scale 1"});
  c.time = Measured{ms, ms * 0.98, ms * 1.05, ms * 0.01, 12, true};
  return c;
}

SuiteRun sample_run() {
  SuiteRun run;
  run.suite = "kernelbench-l1";
  run.command = "dragon bench kernelbench-l1 --out r.json";
  run.commit = "abc1234";
  run.started_at = "2026-12-03T10:00:00Z";
  run.device = "NVIDIA H200";
  run.gpu.name = "NVIDIA H200";
  run.gpu.sm_clock_mhz = 1980;
  run.eager_library = "libtorch 2.11.0 (CUDA available)";
  MeasuredPeaks peaks;
  peaks.device = "NVIDIA H200";
  peaks.copy_bytes_per_s = 4.0e12;
  peaks.f32_flops_per_s = 50e12;
  peaks.f16_flops_per_s = 700e12;
  peaks.bf16_flops_per_s = 710e12;
  run.peaks = peaks;

  ProblemResult matmul;
  matmul.id = "1";
  matmul.name = "1_Square_matrix_multiplication_";
  matmul.spec = "matmul:m=4096,n=4096,k=4096";
  matmul.status = "ok";
  matmul.flops = 2.0 * 4096 * 4096 * 4096;
  matmul.bytes = 3.0 * 4096 * 4096 * 4;
  matmul.compute_bound = true;
  matmul.ours = timed("ours (default schedule (auto_bind))", 4.0);
  matmul.baselines = {timed("torch eager: at::matmul", 2.0), timed("cublasGemmEx (f32, compute 32F)", 1.0)};

  ProblemResult relu;
  relu.id = "19";
  relu.name = "19_ReLU <fast>";
  relu.spec = "relu:shape=4096x393216";
  relu.status = "ok";
  relu.bytes = 2.0 * 4096 * 393216 * 4;
  relu.ours = timed("ours", 3.0);
  relu.baselines = {timed("torch eager: at::relu", 6.0)};

  ProblemResult broken;
  broken.id = "23";
  broken.name = "23_Softmax";
  broken.status = "incorrect";
  broken.message = "C: error inf above the tolerance";
  broken.ours.name = "ours";
  broken.ours.status = "incorrect";
  broken.ours.checks.push_back(OutputCheck{"C", INFINITY, 1e-5, false, "NaN"});
  broken.baselines = {timed("torch eager: at::softmax", 6.0), timed("cudnnSoftmaxForward (f32, accurate)", 3.0)};

  ProblemResult missing;
  missing.id = "R6";
  missing.name = "tbe_backward_rowwise_adagrad";
  missing.status = "unsupported";
  missing.message = "backward with an in-place optimizer update";
  run.problems = {matmul, relu, broken, missing};
  return run;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("dragon_bench_test_" + name)).string();
}

TEST(SuiteResults, JsonRoundTripKeepsEveryFieldAReportUses) {
  SuiteRun run = sample_run();
  std::string path = temp_path("results.json");
  write_text_file(path, suite_run_to_json(run));
  SuiteRun back = load_suite_run(path);
  EXPECT_EQ(suite_run_to_json(back), suite_run_to_json(run));
  ASSERT_EQ(back.problems.size(), 4u);
  EXPECT_TRUE(std::isinf(back.problems[2].ours.checks[0].normalized_error)) << "a NaN disagreement stays infinite";
  EXPECT_FALSE(back.problems[3].ours.time.has_value());
  ASSERT_TRUE(back.peaks.has_value());
  EXPECT_DOUBLE_EQ(back.peaks->copy_bytes_per_s, 4.0e12);
  std::filesystem::remove(path);
}

TEST(SuiteResults, MalformedFilesSayWhichFieldOfWhichProblem) {
  std::string path = temp_path("bad.json");
  write_text_file(path, R"({"suite": "dlrm", "device": "x", "problems": [{"id": "R1", "name": "n"}]})");
  try {
    load_suite_run(path);
    FAIL() << "a problem without status loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("problem R1: field 'status' missing"), std::string::npos) << e.what();
  }
  write_text_file(path, "{not json");
  EXPECT_THROW(load_suite_run(path), UserError);
  EXPECT_THROW(load_suite_run(temp_path("does_not_exist.json")), UserError);
  std::filesystem::remove(path);
}

TEST(SuiteResults, SpeedupsAndTheirGeometricMeanUseOnlyCorrectTimedPairs) {
  SuiteRun run = sample_run();
  const ProblemResult& matmul = run.problems[0];
  EXPECT_DOUBLE_EQ(*matmul.speedup_over(*find_baseline(matmul, "torch")), 0.5);
  EXPECT_DOUBLE_EQ(*matmul.speedup_over(*find_baseline(matmul, "cublas")), 0.25);
  EXPECT_FALSE(run.problems[2].speedup_over(*find_baseline(run.problems[2], "torch")).has_value())
      << "an incorrect kernel has no speedup";
  int count = 0;
  std::optional<double> geomean = geomean_speedup(run, "torch", &count);
  EXPECT_EQ(count, 2);
  EXPECT_NEAR(*geomean, 1.0, 1e-12) << "sqrt(0.5 * 2)";
}

TEST(HtmlReport, HasTheSortableTableBothPlotsAndEscapesNames) {
  std::string html = render_html_report(sample_run());
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(html.find("<table class=\"sortable\">"), std::string::npos);
  EXPECT_NE(html.find("addEventListener('click'"), std::string::npos) << "sorting script";
  EXPECT_NE(html.find("aria-label=\"speedup per problem\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"roofline\""), std::string::npos);
  EXPECT_NE(html.find("19_ReLU &lt;fast&gt;"), std::string::npos);
  EXPECT_EQ(html.find("19_ReLU <fast>"), std::string::npos) << "names are escaped";
  EXPECT_NE(html.find("2 problems where both are correct and timed"), std::string::npos);
  EXPECT_NE(html.find("abc1234"), std::string::npos) << "the commit is on the page";
  // One vendor column: cuBLAS for the matmul, cuDNN for the softmax, named in the tooltip.
  EXPECT_NE(html.find("title=\"cublasGemmEx (f32, compute 32F)\">1<"), std::string::npos);
  EXPECT_NE(html.find("title=\"cudnnSoftmaxForward (f32, accurate)\">3<"), std::string::npos);
  EXPECT_NE(html.find("Geometric mean speedup over cuBLAS: <b>0.25x</b> on the 1 problems"), std::string::npos);
  EXPECT_EQ(html.find("speedup over cuDNN:"), std::string::npos) << "our softmax is incorrect: no pair to compare";
  // Our matmul: 137 GFLOP in 4 ms is 34.4 TFLOP/s, 68.7% of the 50 TFLOP/s f32 peak.
  EXPECT_NE(html.find(">34.4<"), std::string::npos);
  EXPECT_NE(html.find(">68.7%<"), std::string::npos);
  // ReLU: 12.9 GB in 3 ms is 4.29 TB/s of a 4.0 TB/s copy: more than the copy, shown as is.
  EXPECT_NE(html.find(">4.29<"), std::string::npos);
  // One bar per problem with a speedup; the incorrect one has none.
  size_t bars = 0;
  for (size_t at = html.find("<rect"); at != std::string::npos; at = html.find("<rect", at + 1)) ++bars;
  EXPECT_EQ(bars, 2u);
}

TEST(Peaks, FilesRoundTripAndTheFloorNeverUsesLessThanTheSpecSheet) {
  MeasuredPeaks measured = *sample_run().peaks;
  measured.l2_bytes = 60LL << 20;
  std::string path = temp_path("peaks.json");
  write_text_file(path, measured.to_json());
  MeasuredPeaks back = load_peaks(path);
  EXPECT_DOUBLE_EQ(back.f16_flops_per_s, 700e12);
  EXPECT_EQ(back.l2_bytes, 60LL << 20);
  harness::DevicePeaks floor = floor_peaks(back);
  EXPECT_DOUBLE_EQ(floor.memory_bytes_per_s, 4.8e12) << "the spec sheet's 4.8 TB/s beats the measured 4.0";
  EXPECT_DOUBLE_EQ(floor.tensor_16bit_flops_per_s, 989e12);
  EXPECT_DOUBLE_EQ(floor.tensor_tf32_flops_per_s, 494.7e12);
  EXPECT_DOUBLE_EQ(measured.as_device_peaks().tensor_tf32_flops_per_s, 355e12) << "half the measured 16-bit rate";
  EXPECT_DOUBLE_EQ(measured.as_device_peaks().memory_bytes_per_s, 4.0e12) << "reports use what was measured";
  write_text_file(path, R"({"device": "x", "copy_bytes_per_s": "fast"})");
  try {
    load_peaks(path);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("copy_bytes_per_s"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

SuiteAudit two_audited_problems() {
  SuiteAudit audit;
  audit.suite = "dlrm";
  audit.command = "dragon audit dlrm";
  audit.commit = "abc1234";
  AuditedProblem weak;
  weak.id = "R9h";
  weak.name = "R9h_mlp_top_sigmoid";
  weak.status = "ok";
  weak.rand_reference_scale = 1.0;
  weak.seconds = 2.4;
  weak.audit.trivial_outputs = {{"zeros", false, false, false},
                                {"ones", false, true, true},
                                {"the reference's mean", false, true, true}};
  AuditedProblem failed;
  failed.id = "R3";
  failed.name = "R3_tbe";
  failed.status = "failed";
  failed.message = "out of memory";
  failed.seconds = 0.5;
  audit.problems = {weak, failed};
  return audit;
}

TEST(SuiteAudit, MarkdownMarksEveryPassAndCountsTheWeakProblems) {
  std::string md = two_audited_problems().to_markdown();
  EXPECT_NE(md.find("- commit: abc1234"), std::string::npos) << md;
  // Ones pass KernelBench HEAD and the paper's tolerance, not ours; zeros pass nothing.
  EXPECT_NE(md.find("| R9h | R9h_mlp_top_sigmoid | 1 | fail / fail / fail | **pass** / **pass** / fail | "
                    "**pass** / **pass** / fail | n/a | 2.4 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| R3 | R3_tbe | failed: out of memory | | | | | 0.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Of 1 problems audited: zeros pass KernelBench HEAD on 0 and the paper's tolerance on 0; some "
                    "trivial output passes KernelBench HEAD on 1 and the paper's tolerance on 1; some trivial output "
                    "passes our check on 0."),
            std::string::npos)
      << md;
}

TEST(SuiteAudit, JsonKeepsEachProblemsVerdictsAndTime) {
  nlohmann::json j = nlohmann::json::parse(two_audited_problems().to_json());
  ASSERT_EQ(j["problems"].size(), 2u);
  EXPECT_EQ(j["commit"], "abc1234");
  EXPECT_DOUBLE_EQ(j["problems"][0]["seconds"].get<double>(), 2.4);
  EXPECT_EQ(j["problems"][0]["audit"]["trivial_outputs"].size(), 3u);
  EXPECT_EQ(j["problems"][1]["status"], "failed");
  EXPECT_EQ(j["problems"][1]["message"], "out of memory");
  EXPECT_FALSE(j["problems"][1].contains("audit"));
}

TEST(DeviceKernels, FillerAndComparisonSourcesCompileWithNvrtc) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  for (std::string_view source : {DeviceFiller::source(), DeviceComparer::source()}) {
    Expected<runtime::Cubin> cubin =
        runtime::nvrtc_compile(std::string(source), "bench_kernels.cu", {}, runtime::CompileCache::global());
    ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
    EXPECT_FALSE(cubin.value().bytes.empty());
  }
}

}  // namespace
}  // namespace dragon::bench
