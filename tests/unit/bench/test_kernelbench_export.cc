// `dragon export kernelbench` without a GPU: the exported ModelNew's structure for a
// parameter-free problem, a conv (a layer with weight and bias), a LayerNorm and a
// keepdim reduction; a tuned script's kernel; several kernels and a workspace; the clear
// errors (no record, only failed records, unknown problem, an op the table lacks); and, where
// python3 is installed, that the files compile as Python.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "dragon/bench/kernelbench_export.h"
#include "dragon/db/database.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/search/default_schedule.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "dragon/runtime/compile.h"
#include "unit/db/db_test_util.h"
#include "unit/schedule/wgmma_gemm_sketch.h"

namespace dragon::bench {
namespace {

using db::testing::TempDir;

// The spec of a kernelbench-l1 problem, as the suite has it.
std::string suite_spec(const std::string& id) {
  for (const suites::Problem& p : suites::load_suite("kernelbench-l1").problems) {
    if (p.id == id) return p.spec;
  }
  throw InternalError("no problem " + id);
}

// A database holding one verified H200 record of problem `id`: the default schedule ("")
// or, with `tuned`, the default schedule's own script as a tuned record.
std::string database_with_record(const TempDir& dir, const std::string& id, bool tuned = false) {
  const std::string path = dir.file("tune.db");
  ops::Workload workload = ops::OpRegistry::global().make_workload(suite_spec(id));
  db::Database database = db::Database::open(path);
  db::Workload w = db::Workload::of(workload.func, workload.spec);
  database.add_workload(w);
  const lower::Target target = lower::Target::cuda_h200();
  const std::string script = tuned ? script::encode(search::default_schedule(workload.func, target).trace()) : "";
  db::Record record = db::testing::ok_record({w.hash, db::testing::cuda_sm90a(), db::testing::h200()}, script,
                                             {1.25f, 1.5f, 1.0f});
  // A default record stands for the kernel it measured: today's default's.
  record.kernel_hash =
      runtime::generate(search::default_schedule(workload.func, target).func(), target).cuda_kernel_hash(target.arch);
  database.commit(record);
  return path;
}

KernelBenchKernel exported(const std::string& db, const std::string& problem) {
  return best_kernelbench_kernel(problem, KernelBenchExportOptions{.db = db});
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every kernel is in the source under its entry name and launched, in order, with the
// codegen's grid, block and shared memory.
void expect_launches(const KernelBenchKernel& kernel, const std::string& py) {
  ASSERT_FALSE(kernel.source.kernels.empty());
  size_t previous = 0;
  for (const codegen::KernelLaunch& k : kernel.source.kernels) {
    EXPECT_TRUE(contains(py, "__global__")) << k.name;
    EXPECT_TRUE(contains(py, " " + k.name + "(")) << "the kernel's definition: " << k.name;
    const std::string launch = fmt::format(
        "dragon_launch(reinterpret_cast<const void*>(&dragon_generated::{0}), \"{0}\", dim3({1}, {2}, {3}), "
        "dim3({4}, {5}, {6}), {7}, stream, args);",
        k.name, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.dynamic_shared_bytes);
    size_t at = py.find(launch);
    ASSERT_NE(at, std::string::npos) << launch << "\n" << py;
    EXPECT_GE(at, previous) << "launch order";
    previous = at;
  }
}

// python3 -m py_compile on `text`; skipped where there is no python3.
void expect_compiles_as_python(const TempDir& dir, const std::string& name, const std::string& text) {
  if (std::system("python3 --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 here";
  const std::string path = dir.file(name);
  write_text_file(path, text);
  const std::string command = "python3 -m py_compile '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

// The generated kernels of an exported file, compiled by nvcc as load_inline compiles them:
// after <cstdint> (torch's headers bring it), with torch's half-type macros defined and then
// undefined by the file's own flags, for sm_90a by the file's -gencode; and every kernel's
// address taken, as the launcher does. Skipped where there is no nvcc.
void expect_kernels_compile_with_nvcc(const TempDir& dir, const std::string& name, const KernelBenchKernel& kernel,
                                      const std::string& py) {
  const char* find = "command -v nvcc >/dev/null 2>&1 || test -x /usr/local/cuda/bin/nvcc";
  if (std::system(find) != 0) GTEST_SKIP() << "no nvcc here";
  const std::string open = "CUDA_SOURCE = r\"\"\"\n";
  const size_t begin = py.find(open), end = py.find("#include <ATen/cuda/CUDAContext.h>");
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos && end > begin);
  std::string cu = "#include <cstdint>\n#include <cuda_runtime.h>\n" + py.substr(begin + open.size(), end - begin - open.size());
  cu += "const void* dragon_every_kernel[] = {";
  for (const codegen::KernelLaunch& k : kernel.source.kernels) {
    cu += "reinterpret_cast<const void*>(&dragon_generated::" + k.name + "), ";
  }
  cu += "};\n";
  const std::string path = dir.file(name + ".cu");
  write_text_file(path, cu);
  const std::string command =
      "PATH=$PATH:/usr/local/cuda/bin nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -diag-suppress 177 --expt-relaxed-constexpr "
      "-D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ "
      "-D__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ "
      "-U__CUDA_NO_BFLOAT16_CONVERSIONS__ -U__CUDA_NO_HALF2_OPERATORS__ -c '" + path + "' -o '" + path + ".o' > '" +
      path + ".log' 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << read_text_file(path + ".log");
}

TEST(KernelBenchExport, ParameterFreeProblemTakesItsInputsAndLaunchesEveryKernel) {
  TempDir dir;
  KernelBenchKernel kernel = exported(database_with_record(dir, "19"), "19");
  EXPECT_EQ(kernel.problem.name, "19_ReLU");
  const std::string py = write_kernelbench_model_new(kernel);
  EXPECT_TRUE(contains(py, "from torch.utils.cpp_extension import load_inline"));
  EXPECT_TRUE(contains(py, "class ModelNew(nn.Module):"));
  EXPECT_TRUE(contains(py, "    def __init__(self, *init_inputs, **init_kwargs):\n        super().__init__()\n\n"))
      << "a parameter-free Model creates no layer";
  EXPECT_FALSE(contains(py, "self.conv"));
  EXPECT_TRUE(contains(py, "    def forward(self, X):\n        return _extension.forward(X)\n"));
  EXPECT_TRUE(contains(py, "CPP_SOURCE = \"torch::Tensor forward(torch::Tensor p_X);\""));
  EXPECT_TRUE(contains(py, "dragon_check_tensor(p_X, \"X\", at::kFloat, {4096, 393216});"));
  EXPECT_TRUE(contains(py, "const torch::Tensor t_X = p_X.contiguous();"));
  EXPECT_TRUE(contains(py, "torch::Tensor t_relu = torch::empty({4096, 393216}, p_X.options().dtype(at::kFloat));"))
      << py;
  EXPECT_TRUE(contains(py, "cudaStream_t stream = at::cuda::getCurrentCUDAStream();"));
  EXPECT_TRUE(contains(py, "extra_cuda_cflags=[\"-gencode=arch=compute_90a,code=sm_90a\""))
      << "an arch flag of its own, so torch adds no sm_90 one";
  EXPECT_TRUE(contains(py, "namespace dragon_generated {"));
  EXPECT_TRUE(contains(py, "record 1 of " + dir.file("tune.db") + " (the default schedule), cuda sm_90a on NVIDIA H200"));
  expect_launches(kernel, py);
  expect_kernels_compile_with_nvcc(dir, "relu", kernel, py);
  expect_compiles_as_python(dir, "relu_new.py", py);
}

TEST(KernelBenchExport, HalfPrecisionWgmmaKernelKeepsItsHeadersAndCompilesWithNvcc) {
  // A Hopper f16 GEMM (wgmma, cp.async pipeline): the half headers stay in front of the
  // namespace, the tensors are checked as at::kHalf.
  const std::string spec = "matmul:m=256,n=256,k=256,trans_b=true,dtype=f16";
  ops::Workload workload = ops::OpRegistry::global().make_workload(spec);
  schedule::Schedule sch = schedule::testing::wgmma_gemm_sketch(spec, {.warpgroups = 2, .n_tile = 128, .stages = 3}, true);
  KernelBenchKernel kernel;
  kernel.problem = suites::Problem{"900", "900_f16_gemm", spec, "256x256", "test"};
  kernel.spec = workload.spec;
  kernel.func = workload.func;
  kernel.source = std::get<codegen::CudaSource>(runtime::generate(sch.func(), lower::Target::cuda_h200()).source);
  kernel.module = *kernelbench_module(*workload.op, ops::OpRegistry::global().parse(workload.spec));
  kernel.provenance = "the wgmma sketch";
  const std::string py = write_kernelbench_model_new(kernel);
  EXPECT_TRUE(contains(py, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\nnamespace dragon_generated {")) << py.substr(0, 800);
  EXPECT_TRUE(contains(py, "wgmma.mma_async")) << "the kernel is the tensor-core one";
  EXPECT_TRUE(contains(py, "dragon_check_tensor(p_B, \"B\", at::kHalf, {256, 256});"));
  EXPECT_TRUE(contains(py, "return _extension.forward(A, B)"));
  expect_launches(kernel, py);
  TempDir dir;
  expect_kernels_compile_with_nvcc(dir, "wgmma", kernel, py);
}

TEST(KernelBenchExport, ConvModelBuildsTheConvLayerAndPassesItsWeightAndBias) {
  TempDir dir;
  KernelBenchKernel kernel = exported(database_with_record(dir, "50"), "50_conv_standard_2D__square_input__square_kernel");
  const std::string py = write_kernelbench_model_new(kernel);
  EXPECT_TRUE(contains(py, "        self.conv = nn.Conv2d(3, 96, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2), "
                           "dilation=(1, 1), groups=1, bias=True)\n"))
      << py.substr(py.find("class ModelNew"));
  EXPECT_TRUE(contains(py, "return _extension.forward(X, self.conv.weight, self.conv.bias)"));
  EXPECT_TRUE(contains(py, "torch::Tensor forward(torch::Tensor p_X, torch::Tensor p_W, torch::Tensor p_bias);"));
  EXPECT_TRUE(contains(py, "dragon_check_tensor(p_W, \"W\", at::kFloat, {96, 3, 11, 11});"));
  EXPECT_TRUE(contains(py, "dragon_check_tensor(p_bias, \"bias\", at::kFloat, {96});"));
  EXPECT_TRUE(contains(py, "torch::empty({256, 96, 55, 55}"));
  expect_launches(kernel, py);

  const std::string reference = write_kernelbench_reference(kernel);
  EXPECT_TRUE(contains(reference, "class Model(nn.Module):"));
  EXPECT_TRUE(contains(reference, "        self.conv = nn.Conv2d(3, 96, kernel_size=(11, 11)"));
  EXPECT_TRUE(contains(reference, "        return self.conv(X)\n"));
  EXPECT_TRUE(contains(reference, "    X = torch.rand(256, 3, 224, 224, dtype=torch.float32)\n    return [X]\n"));
  EXPECT_TRUE(contains(reference, "def get_init_inputs():\n    return []\n"));
  expect_compiles_as_python(dir, "conv_new.py", py);
  expect_compiles_as_python(dir, "conv_ref.py", reference);
}

TEST(KernelBenchExport, LayerNormAndKeepdimReductionTakeTheSuitesShapes) {
  TempDir dir;
  {
    KernelBenchKernel kernel = exported(database_with_record(dir, "40"), "40");
    const std::string py = write_kernelbench_model_new(kernel);
    EXPECT_TRUE(contains(py, "self.ln = nn.LayerNorm((64, 256, 256), eps=1e-05, elementwise_affine=True)"));
    EXPECT_TRUE(contains(py, "return _extension.forward(X, self.ln.weight, self.ln.bias)"));
    expect_launches(kernel, py);
  }
  std::filesystem::remove(dir.file("tune.db"));
  KernelBenchKernel kernel = exported(database_with_record(dir, "47"), "47");
  EXPECT_TRUE(contains(write_kernelbench_reference(kernel), "return torch.sum(X, dim=1, keepdim=True)"));
  EXPECT_TRUE(contains(write_kernelbench_model_new(kernel), "torch::empty({128, 1, 4095}"));
}

TEST(KernelBenchExport, BatchNormAndScalarLossTakeTheirTensorsAndShapes) {
  TempDir dir;
  {
    KernelBenchKernel kernel = exported(database_with_record(dir, "33"), "33_BatchNorm");
    const std::string py = write_kernelbench_model_new(kernel);
    EXPECT_TRUE(contains(py, "        self.norm = nn.BatchNorm2d(64, eps=1e-05)\n"));
    EXPECT_TRUE(contains(py, "return _extension.forward(X, self.norm.weight, self.norm.bias)"));
  }
  std::filesystem::remove(dir.file("tune.db"));
  KernelBenchKernel kernel = exported(database_with_record(dir, "94"), "94");
  const std::string py = write_kernelbench_model_new(kernel);
  EXPECT_TRUE(contains(py, "    def forward(self, predictions, targets):\n        return _extension.forward(predictions, targets)\n"));
  EXPECT_TRUE(contains(py, "torch::Tensor t_loss = torch::empty(at::IntArrayRef{}, p_predictions.options()"))
      << "KernelBench's loss is a 0-d tensor";
  const std::string reference = write_kernelbench_reference(kernel);
  EXPECT_TRUE(contains(reference, "return torch.mean((predictions - targets) ** 2)"));
  expect_launches(kernel, py);
  expect_compiles_as_python(dir, "mse_new.py", py);
  expect_compiles_as_python(dir, "mse_ref.py", reference);
}

TEST(KernelBenchExport, TunedScriptIsReplayedAndNamed) {
  TempDir dir;
  KernelBenchKernel kernel = exported(database_with_record(dir, "23", /*tuned=*/true), "23");
  EXPECT_TRUE(contains(kernel.provenance, "(a tuned script)")) << kernel.provenance;
  const std::string py = write_kernelbench_model_new(kernel);
  EXPECT_TRUE(contains(py, "# Kernel: record 1 of"));
  expect_launches(kernel, py);
}

// A default record of other code (an older version's default) is not today's kernel: it
// is passed over for the tuned script even when faster, and alone it is nothing to export.
TEST(KernelBenchExport, AnOlderDefaultsRecordIsNotExported) {
  TempDir dir;
  const std::string path = database_with_record(dir, "19", /*tuned=*/true);
  ops::Workload workload = ops::OpRegistry::global().make_workload(suite_spec("19"));
  const db::Workload w = db::Workload::of(workload.func, workload.spec);
  db::Record old_default =
      db::testing::ok_record({w.hash, db::testing::cuda_sm90a(), db::testing::h200()}, "", {0.01f});
  old_default.kernel_hash = "an older default's kernel";
  db::Database::open(path).commit(old_default);
  KernelBenchKernel kernel = exported(path, "19");
  EXPECT_TRUE(contains(kernel.provenance, "(a tuned script)")) << kernel.provenance;

  TempDir other;
  const std::string alone = other.file("alone.db");
  {
    db::Database database = db::Database::open(alone);
    database.add_workload(w);
    database.commit(old_default);
  }
  try {
    exported(alone, "19");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "none verified of a tuned script or of today's default schedule")) << e.what();
  }
}

TEST(KernelBenchExport, SeveralKernelsShareTheirWorkspaceInLaunchOrder) {
  // A two-kernel source as the codegen describes one: partial sums into a workspace, then
  // a second kernel reading it (the launch plan is what the exporter writes from).
  TempDir dir;
  KernelBenchKernel kernel = exported(database_with_record(dir, "19"), "19");
  kernel.source.code = "#include <cuda_fp16.h>\ntypedef long long int64_t;\n"
                       "extern \"C\" __global__ void part0(float* X, float* ws) {}\n"
                       "extern \"C\" __global__ void part1(float* ws, float* relu) {}\n";
  kernel.source.prelude_size = 0;
  kernel.source.workspaces = {{"partials", 4096}};
  using Arg = codegen::KernelArg;
  kernel.source.kernels = {
      {"part0", {132, 1, 1}, {256, 1, 1}, 0, {{Arg::Kind::kParam, 0}, {Arg::Kind::kWorkspace, 0}}},
      {"part1", {1, 1, 1}, {1024, 1, 1}, 65536, {{Arg::Kind::kWorkspace, 0}, {Arg::Kind::kParam, 1}}},
  };
  const std::string py = write_kernelbench_model_new(kernel);
  EXPECT_TRUE(contains(py, "torch::Tensor workspace0 = torch::empty({4096}, p_X.options().dtype(at::kByte));  // partials"));
  EXPECT_TRUE(contains(py, "    void* a0 = t_X.data_ptr();\n    void* a1 = workspace0.data_ptr();\n"));
  EXPECT_TRUE(contains(py, "    void* a0 = workspace0.data_ptr();\n    void* a1 = t_relu.data_ptr();\n"));
  // The #include stays outside the namespace; the typedef goes in.
  EXPECT_TRUE(contains(py, "#include <cuda_fp16.h>\nnamespace dragon_generated {\ntypedef long long int64_t;\n"));
  EXPECT_TRUE(contains(py, "if (shared > 48 * 1024)")) << "the launcher opts large shared memory in";
  expect_launches(kernel, py);
}

TEST(KernelBenchExport, EveryCoveredProblemExportsAndCompilesAsPython) {
  TempDir dir;
  const ops::OpRegistry& registry = ops::OpRegistry::global();
  int covered = 0;
  std::string model_new, reference;
  for (const suites::Problem& p : suites::load_suite("kernelbench-l1").problems) {
    if (!p.supported()) continue;
    ops::Workload workload = registry.make_workload(p.spec);
    if (!kernelbench_module(*workload.op, registry.parse(workload.spec))) continue;
    std::filesystem::remove(dir.file("tune.db"));
    KernelBenchKernel kernel = exported(database_with_record(dir, p.id), p.id);
    model_new = write_kernelbench_model_new(kernel);
    reference = write_kernelbench_reference(kernel);
    expect_launches(kernel, model_new);
    write_text_file(dir.file("p" + p.id + "_new.py"), model_new);
    write_text_file(dir.file("p" + p.id + "_ref.py"), reference);
    ++covered;
  }
  EXPECT_GE(covered, 80);
  if (std::system("python3 --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 here";
  const std::string command = "python3 -m py_compile '" + dir.path() + "'/p*.py";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(KernelBenchExport, SeveralOutputsAreAClearError) {
  // MaxPool returning indices has two outputs; a KernelBench forward returns one tensor.
  const std::string spec = "max_pool2d:batch=1,channels=2,height=8,width=8,kernel=2,stride=2,return_indices=true";
  ops::Workload workload = ops::OpRegistry::global().make_workload(spec);
  EXPECT_FALSE(kernelbench_module(*workload.op, ops::OpRegistry::global().parse(workload.spec)))
      << "the table has no Model for it either";
  KernelBenchKernel kernel;
  kernel.problem = suites::Problem{"901", "901_pool_indices", spec, "1x2x4x4", "test:1"};
  kernel.spec = workload.spec;
  kernel.func = workload.func;
  kernel.module = KernelBenchModule{{}, "torch.nn.functional.max_pool2d(X, 2)"};
  try {
    write_kernelbench_model_new(kernel);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "test:1: problem 901_pool_indices")) << e.what();
    EXPECT_TRUE(contains(e.what(), "several outputs")) << e.what();
  }
}

TEST(KernelBenchExport, MissingRecordIsAClearError) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  db::Database::open(path);
  try {
    exported(path, "19");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), path + " has 0 CUDA records of problem 19_ReLU")) << e.what();
    EXPECT_TRUE(contains(e.what(), "none verified")) << e.what();
    EXPECT_TRUE(contains(e.what(), "dragon tune --suite kernelbench-l1 --problems 19")) << e.what();
  }
  // Only a failed record: counted, still no kernel to export.
  ops::Workload workload = ops::OpRegistry::global().make_workload(suite_spec("19"));
  db::Database database = db::Database::open(path);
  db::Workload w = db::Workload::of(workload.func, workload.spec);
  database.add_workload(w);
  database.commit(db::testing::failed_record({w.hash, db::testing::cuda_sm90a(), db::testing::h200()}, "",
                                             db::RecordStatus::kBuildFailed, "nvrtc said no"));
  try {
    exported(path, "19");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "has 1 CUDA record of problem 19_ReLU")) << e.what();
  }
}

TEST(KernelBenchExport, UnknownProblemAndUncoveredOpAreClearErrors) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  db::Database::open(path);
  EXPECT_THROW(
      {
        try {
          exported(path, "999");
        } catch (const UserError& e) {
          EXPECT_TRUE(contains(e.what(), "no problem '999' in suite kernelbench-l1")) << e.what();
          throw;
        }
      },
      UserError);
  EXPECT_THROW(
      {
        try {
          exported(path, "97");  // attention: no entry in the table
        } catch (const UserError& e) {
          EXPECT_TRUE(contains(e.what(), "is a scaled_dot_product_attention, which the KernelBench module table"))
              << e.what();
          EXPECT_TRUE(contains(e.what(), "parts/kb_attention.tsv:1")) << e.what();
          throw;
        }
      },
      UserError);
  EXPECT_THROW(best_kernelbench_kernel("19", {}), UserError) << "no --db";
}

}  // namespace
}  // namespace dragon::bench
