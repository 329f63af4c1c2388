// dragon peaks: the current GPU's copy bandwidth and GEMM throughput (bench/peaks.h),
// printed, and written as JSON for `dragon bench --peaks`.
#include <cstdio>

#include "commands.h"
#include "dragon/bench/peaks.h"
#include "dragon/bench/suite_results.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {
namespace {

struct PeaksOptions {
  std::string out;
  int64_t gemm_size = 8192;
  double copy_gib = 4;
};

int peaks(const PeaksOptions& options) {
  Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
  if (!driver.ok()) throw UserError("dragon peaks measures a CUDA GPU and found none: " + driver.error().describe());
  if (options.gemm_size < 256) throw UserError("--gemm-size must be at least 256");
  if (options.copy_gib <= 0) throw UserError("--copy-gib must be positive");
  bench::PeakOptions peak_options;
  peak_options.gemm_size = options.gemm_size;
  peak_options.copy_bytes = static_cast<int64_t>(options.copy_gib * (1LL << 30));
  bench::MeasuredPeaks measured = bench::measure_peaks(driver.value(), peak_options);
  std::printf("%s", measured.to_text().c_str());
  if (!options.out.empty()) {
    write_text_file(options.out, measured.to_json() + "\n");
    std::printf("wrote %s\n", options.out.c_str());
  }
  return 0;
}

}  // namespace

Command add_peaks_command(CLI::App& app) {
  auto options = std::make_shared<PeaksOptions>();
  CLI::App* sub = app.add_subcommand("peaks", "Measure the GPU's copy bandwidth and cuBLAS GEMM throughput");
  sub->add_option("--out", options->out, "Write the peaks as JSON (for dragon bench --peaks)");
  sub->add_option("--gemm-size", options->gemm_size, "m = n = k of the GEMMs")->capture_default_str();
  sub->add_option("--copy-gib", options->copy_gib, "Bytes copied per timed call, in GiB")->capture_default_str();
  return [options] { return peaks(*options); };
}

}  // namespace dragon::cli
