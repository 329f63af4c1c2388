// max_pool{1,2,3}d and avg_pool{1,2,3}d run on the interpreter against a plain
// double-precision reference that follows torch's CPU kernels (clipped windows, no
// padded copy), plus the family's KernelBench map. Not a test of the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::to_doubles;
using testing::user_error_of;

struct Pool {
  bool max = true;
  int64_t batch = 2, channels = 3;
  std::vector<int64_t> sizes;  // spatial input sizes
  int64_t kernel = 2, stride = 2, padding = 0, dilation = 1;
  bool ceil_mode = false, return_indices = false, count_include_pad = true;
  std::string dtype = "f32";

  int rank() const { return static_cast<int>(sizes.size()); }

  std::string spec() const {
    static const char* names[3][3] = {{"length"}, {"height", "width"}, {"depth", "height", "width"}};
    std::string s = std::string(max ? "max_pool" : "avg_pool") + std::to_string(rank()) +
                    "d:batch=" + std::to_string(batch) + ",channels=" + std::to_string(channels);
    for (int a = 0; a < rank(); ++a) s += "," + std::string(names[rank() - 1][a]) + "=" + std::to_string(sizes[a]);
    s += ",kernel=" + std::to_string(kernel) + ",stride=" + std::to_string(stride) +
         ",padding=" + std::to_string(padding) + ",ceil_mode=" + (ceil_mode ? "true" : "false") + ",dtype=" + dtype;
    if (max) {
      s += ",dilation=" + std::to_string(dilation) + ",return_indices=" + (return_indices ? "true" : "false");
    } else {
      s += ",count_include_pad=" + std::string(count_include_pad ? "true" : "false");
    }
    return s;
  }

  // torch's output size, written out independently of the builder.
  int64_t output_size(int64_t input) const {
    int64_t span = input + 2 * padding - dilation * (kernel - 1) - 1;
    int64_t out = (ceil_mode ? (span + stride - 1) : span);
    out = static_cast<int64_t>(std::floor(static_cast<double>(out) / static_cast<double>(stride))) + 1;
    if (ceil_mode && (out - 1) * stride >= input + padding) --out;
    return out;
  }
  std::vector<int64_t> output_shape() const {
    std::vector<int64_t> s{batch, channels};
    for (int64_t size : sizes) s.push_back(output_size(size));
    return s;
  }
};

// Row-major odometer over `extents`; false once it wraps.
bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& extents) {
  for (size_t a = index.size(); a-- > 0;) {
    if (++index[a] < extents[a]) return true;
    index[a] = 0;
  }
  return false;
}

struct Expected {
  std::vector<double> values;
  std::vector<double> indices;  // max pooling only
};

// For each output element, the window's positions along each axis are clipped to the
// input the way torch's CPU kernels do: max pooling skips positions in the padding
// (its first candidate is the first window position inside the input), average pooling
// divides by the window clipped to the padded input or to the input.
Expected reference_pool(const Pool& p, const std::vector<double>& x) {
  const int rank = p.rank();
  std::vector<int64_t> out_sizes;
  for (int64_t size : p.sizes) out_sizes.push_back(p.output_size(size));
  int64_t plane = 1;
  for (int64_t size : p.sizes) plane *= size;
  Expected result;
  for (int64_t nc = 0; nc < p.batch * p.channels; ++nc) {
    const double* in = x.data() + nc * plane;
    std::vector<int64_t> o(rank, 0);
    do {
      std::vector<int64_t> first(rank), last(rank), step(rank);  // positions first, first+step, ... < last
      int64_t pool_size = 1;
      bool empty = false;
      for (int a = 0; a < rank; ++a) {
        int64_t start = o[a] * p.stride - p.padding;
        if (p.max) {
          int64_t end = std::min(start + (p.kernel - 1) * p.dilation + 1, p.sizes[a]);
          while (start < 0) start += p.dilation;
          first[a] = start;
          last[a] = end;
          step[a] = p.dilation;
        } else {
          int64_t end = std::min(start + p.kernel, p.sizes[a] + p.padding);
          pool_size *= end - start;
          first[a] = std::max<int64_t>(start, 0);
          last[a] = std::min(end, p.sizes[a]);
          step[a] = 1;
        }
        empty |= first[a] >= last[a];
      }
      auto flat = [&](const std::vector<int64_t>& pos) {
        int64_t f = 0;
        for (int a = 0; a < rank; ++a) f = f * p.sizes[a] + pos[a];
        return f;
      };
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t best_index = flat(first), count = 0;
      if (!empty) {
        std::vector<int64_t> pos = first;
        while (true) {
          double v = in[flat(pos)];
          if (v > best) {  // strict: ties keep the first maximum, as torch does
            best = v;
            best_index = flat(pos);
          }
          sum += v;
          ++count;
          int a = rank - 1;
          for (; a >= 0; --a) {
            pos[a] += step[a];
            if (pos[a] < last[a]) break;
            pos[a] = first[a];
          }
          if (a < 0) break;
        }
      }
      if (p.max) {
        result.values.push_back(best);
        result.indices.push_back(static_cast<double>(best_index));
      } else {
        result.values.push_back(empty ? 0.0 : sum / static_cast<double>(p.count_include_pad ? pool_size : count));
      }
    } while (next_index(o, out_sizes));
  }
  return result;
}

void check_pool(const Pool& p, uint64_t seed, interp::Distribution distribution, double rtol, double atol) {
  SCOPED_TRACE(p.spec());
  OpRun run = run_op(p.spec(), seed, distribution);
  ASSERT_EQ(run.output(0).shape(), p.output_shape());
  EXPECT_EQ(run.output(0).dtype(), run.arg(0).dtype());
  Expected expected = reference_pool(p, to_doubles(run.arg(0)));
  EXPECT_TRUE(all_close(run.output(0), expected.values, rtol, atol));
  if (p.max && p.return_indices) {
    ASSERT_EQ(run.output(1).shape(), p.output_shape());
    EXPECT_EQ(run.output(1).dtype(), ir::DataType::i64());
    EXPECT_TRUE(all_close(run.output(1), expected.indices, 0.0, 0.0));
  } else {
    EXPECT_EQ(run.workload.func.outputs().size(), 1u);
  }
}

Pool max_pool(std::vector<int64_t> sizes, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
              bool ceil_mode, bool return_indices) {
  Pool p;
  p.sizes = std::move(sizes);
  p.kernel = kernel, p.stride = stride, p.padding = padding, p.dilation = dilation;
  p.ceil_mode = ceil_mode, p.return_indices = return_indices;
  return p;
}

Pool avg_pool(std::vector<int64_t> sizes, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode,
              bool count_include_pad) {
  Pool p;
  p.max = false;
  p.sizes = std::move(sizes);
  p.kernel = kernel, p.stride = stride, p.padding = padding;
  p.ceil_mode = ceil_mode, p.count_include_pad = count_include_pad;
  return p;
}

// ---- max pooling --------------------------------------------------------------------

TEST(MaxPool, OneDimensionalWindowsWithPaddingDilationAndCeilMode) {
  for (bool ceil_mode : {false, true}) {
    check_pool(max_pool({13}, 3, 2, 1, 2, ceil_mode, true), 1, interp::Distribution::kNormal, 0, 0);
    check_pool(max_pool({13}, 4, 3, 2, 1, ceil_mode, true), 2, interp::Distribution::kNormal, 0, 0);
    // Ties everywhere (0, -0, +-1, ...): the first maximum's index is reported.
    check_pool(max_pool({17}, 5, 2, 2, 1, ceil_mode, true), 3, interp::Distribution::kEdge, 0, 0);
    // With ceil_mode the last window runs past the (padded) input.
    check_pool(max_pool({10}, 3, 3, 0, 1, ceil_mode, true), 7, interp::Distribution::kNormal, 0, 0);
    check_pool(max_pool({12}, 4, 3, 1, 1, ceil_mode, true), 8, interp::Distribution::kNormal, 0, 0);
  }
  check_pool(max_pool({7}, 7, 1, 0, 1, false, false), 4, interp::Distribution::kNormal, 0, 0);  // one window
  check_pool(max_pool({9}, 1, 1, 0, 1, false, true), 5, interp::Distribution::kNormal, 0, 0);   // identity
}

TEST(MaxPool, WindowsEntirelyInPaddingGiveMinusInfinityAndTorchsIndex) {
  // Kernel 2, dilation 4, padding 2 over a length-2 input: each window's two taps, at
  // -2 and 2 (then -1 and 3), both miss the input. torch reports -inf and the first
  // dilation step at or after 0.
  Pool p = max_pool({2}, 2, 1, 2, 4, false, true);
  check_pool(p, 6, interp::Distribution::kNormal, 0, 0);
  OpRun run = run_op(p.spec(), 6);
  ASSERT_EQ(run.output(0).num_elements(), 2 * 3 * 2);
  EXPECT_TRUE(std::isinf(run.output(0).get(0)) && run.output(0).get(0) < 0);
  EXPECT_EQ(run.output(1).get_int(0), 2);
  EXPECT_EQ(run.output(1).get_int(1), 3);
}

TEST(MaxPool, TwoDimensional) {
  for (bool ceil_mode : {false, true}) {
    check_pool(max_pool({7, 9}, 3, 2, 1, 1, ceil_mode, true), 11, interp::Distribution::kNormal, 0, 0);
    check_pool(max_pool({7, 9}, 2, 1, 1, 2, ceil_mode, true), 12, interp::Distribution::kUniform, 0, 0);
    check_pool(max_pool({8, 5}, 3, 3, 1, 1, ceil_mode, false), 13, interp::Distribution::kEdge, 0, 0);
  }
  check_pool(max_pool({6, 6}, 2, 2, 0, 1, false, true), 14, interp::Distribution::kEdge, 0, 0);
}

TEST(MaxPool, ThreeDimensional) {
  // KernelBench 43's kernel 3, stride 2, padding 1, dilation 3 at a small size.
  check_pool(max_pool({5, 6, 7}, 3, 2, 1, 3, false, true), 21, interp::Distribution::kNormal, 0, 0);
  check_pool(max_pool({5, 6, 7}, 3, 2, 1, 1, true, true), 22, interp::Distribution::kNormal, 0, 0);
  check_pool(max_pool({4, 5, 3}, 2, 1, 0, 2, false, false), 23, interp::Distribution::kEdge, 0, 0);
  check_pool(max_pool({6, 5, 4}, 3, 2, 1, 2, true, true), 24, interp::Distribution::kNormal, 0, 0);
}

TEST(MaxPool, HalfPrecisionIsExact) {
  Pool p = max_pool({7, 9}, 3, 2, 1, 1, true, true);
  p.dtype = "f16";
  check_pool(p, 31, interp::Distribution::kNormal, 0, 0);
  p.dtype = "bf16";
  p.sizes = {5, 4, 6};
  check_pool(p, 32, interp::Distribution::kNormal, 0, 0);
}

// ---- average pooling ----------------------------------------------------------------

TEST(AvgPool, OneDimensionalDivisorsForEveryMode) {
  for (bool ceil_mode : {false, true}) {
    for (bool count_include_pad : {false, true}) {
      check_pool(avg_pool({13}, 4, 3, 2, ceil_mode, count_include_pad), 41, interp::Distribution::kNormal, 1e-6, 1e-7);
      check_pool(avg_pool({13}, 3, 2, 1, ceil_mode, count_include_pad), 42, interp::Distribution::kOffset, 1e-6, 1e-7);
      check_pool(avg_pool({10}, 3, 3, 0, ceil_mode, count_include_pad), 43, interp::Distribution::kNormal, 1e-6, 1e-7);
      // ceil_mode's last window overhangs the right padding: torch clips its divisor.
      check_pool(avg_pool({12}, 4, 3, 1, ceil_mode, count_include_pad), 44, interp::Distribution::kNormal, 1e-6, 1e-7);
    }
  }
}

TEST(AvgPool, TwoDimensional) {
  for (bool ceil_mode : {false, true}) {
    for (bool count_include_pad : {false, true}) {
      check_pool(avg_pool({7, 9}, 3, 2, 1, ceil_mode, count_include_pad), 51, interp::Distribution::kNormal, 1e-6,
                 1e-7);
    }
  }
  // KernelBench 45's stride = kernel = 11 leaves a remainder, which ceil_mode pools.
  check_pool(avg_pool({13, 12}, 11, 11, 0, false, true), 52, interp::Distribution::kRand, 1e-6, 1e-7);
  check_pool(avg_pool({13, 12}, 5, 5, 0, true, true), 53, interp::Distribution::kRand, 1e-6, 1e-7);
}

TEST(AvgPool, ThreeDimensional) {
  for (bool ceil_mode : {false, true}) {
    for (bool count_include_pad : {false, true}) {
      check_pool(avg_pool({5, 6, 7}, 3, 2, 1, ceil_mode, count_include_pad), 61, interp::Distribution::kNormal, 1e-6,
                 1e-7);
      check_pool(avg_pool({6, 5, 4}, 3, 2, 1, ceil_mode, count_include_pad), 62, interp::Distribution::kRand, 1e-6,
                 1e-7);
    }
  }
}

TEST(AvgPool, HalfPrecisionSumsInF32) {
  Pool p = avg_pool({9, 11}, 3, 2, 1, true, false);
  p.dtype = "f16";
  check_pool(p, 71, interp::Distribution::kNormal, 1e-3, 1e-3);  // one f16 rounding of an f32 mean
  p.dtype = "bf16";
  p.sizes = {6, 5, 7};
  check_pool(p, 72, interp::Distribution::kNormal, 8e-3, 8e-3);
}

// ---- bad parameters -----------------------------------------------------------------

TEST(Pool, TorchsRejectionsAreUserErrorsNamingTheParameter) {
  // Padding beyond half the (dilated) kernel.
  EXPECT_NE(user_error_of("max_pool2d:kernel=3,stride=1,padding=2").find("op max_pool2d: parameter padding"),
            std::string::npos);
  EXPECT_NE(user_error_of("avg_pool1d:kernel=2,stride=1,padding=2").find("parameter padding"), std::string::npos);
  // Allowed by dilation in 1-d and 2-d ...
  EXPECT_EQ(user_error_of("max_pool2d:kernel=3,stride=1,padding=2,dilation=3"), "(no error)");
  // ... but 3-d checks the undilated kernel.
  EXPECT_NE(user_error_of("max_pool3d:kernel=3,stride=1,padding=2,dilation=3").find("parameter padding"),
            std::string::npos);
  // A window larger than the padded input leaves no output.
  EXPECT_NE(user_error_of("max_pool1d:length=4,kernel=3,stride=1,dilation=3").find("parameter length"),
            std::string::npos);
  EXPECT_NE(user_error_of("avg_pool2d:height=16,width=3,kernel=5,stride=1").find("parameter width"), std::string::npos);
  // torch's 3-d average pooling wants every input axis at least the kernel.
  EXPECT_NE(user_error_of("avg_pool3d:depth=2,kernel=3,stride=1,padding=1").find("parameter depth"), std::string::npos);
  // Parameters that exist for one kind only.
  EXPECT_NE(user_error_of("avg_pool2d:dilation=2").find("no parameter 'dilation'"), std::string::npos);
  EXPECT_NE(user_error_of("max_pool1d:count_include_pad=false").find("no parameter 'count_include_pad'"),
            std::string::npos);
  EXPECT_NE(user_error_of("max_pool1d:padding=-1").find("padding"), std::string::npos);
}

TEST(Pool, StagesAreNamedAndPaddingIsItsOwnStage) {
  Workload padded = OpRegistry::global().make_workload("max_pool2d:kernel=3,stride=2,padding=1");
  EXPECT_EQ(padded.func->name, "max_pool2d");
  ASSERT_EQ(padded.func.root_block()->alloc_buffers.size(), 1u);
  EXPECT_EQ(padded.func.root_block()->alloc_buffers[0]->name, "X_pad");
  // No padding and no ceil overhang: the window reads the input directly.
  Workload direct = OpRegistry::global().make_workload("avg_pool2d:kernel=2,stride=2");
  ASSERT_EQ(direct.func.root_block()->alloc_buffers.size(), 1u);
  EXPECT_EQ(direct.func.root_block()->alloc_buffers[0]->name, "Y_sum");
}

// ---- KernelBench map ----------------------------------------------------------------

}  // namespace
}  // namespace dragon::ops
