#include "dragon/bench/cublas_gemm.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include <mutex>

namespace dragon::bench {
namespace {

// The few cuBLAS v2 entry points used, declared here with the values of their enums (a
// stable ABI), so the build needs no CUDA headers.
using Handle = void*;
using GemmEx = int (*)(Handle, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                       const void*, void*, int, int, int, int);
using GemmStridedBatchedEx = int (*)(Handle, int, int, int, int, int, const void*, const void*, int, int, long long,
                                     const void*, int, int, long long, const void*, void*, int, int, long long, int,
                                     int, int);
constexpr int kOpN = 0, kOpT = 1;
constexpr int kR32F = 0, kR16F = 2, kR16BF = 14;
constexpr int kCompute32F = 68;
constexpr int kGemmDefault = -1;

struct CublasApi {
  int (*create)(Handle*) = nullptr;
  int (*destroy)(Handle) = nullptr;
  GemmEx gemm = nullptr;
  GemmStridedBatchedEx gemm_batched = nullptr;
  const char* (*status_string)(int) = nullptr;
  std::string error;
};

const CublasApi& cublas_api() {
  static const CublasApi api = [] {
    CublasApi a;
    void* library = nullptr;
    for (const char* name : {"libcublas.so", "libcublas.so.13", "libcublas.so.12"}) {
      if ((library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    }
    if (!library) {
      a.error = std::string("cannot load libcublas: ") + ::dlerror();
      return a;
    }
    a.create = reinterpret_cast<decltype(a.create)>(::dlsym(library, "cublasCreate_v2"));
    a.destroy = reinterpret_cast<decltype(a.destroy)>(::dlsym(library, "cublasDestroy_v2"));
    a.gemm = reinterpret_cast<GemmEx>(::dlsym(library, "cublasGemmEx"));
    a.gemm_batched = reinterpret_cast<GemmStridedBatchedEx>(::dlsym(library, "cublasGemmStridedBatchedEx"));
    a.status_string = reinterpret_cast<decltype(a.status_string)>(::dlsym(library, "cublasGetStatusString"));
    if (!a.create || !a.destroy || !a.gemm || !a.gemm_batched || !a.status_string) {
      a.error = "libcublas lacks an entry point (cublasCreate_v2, cublasGemmEx, cublasGemmStridedBatchedEx)";
    }
    return a;
  }();
  return api;
}

// One operand as cuBLAS sees it: column-major, so a row-major [rows, cols] buffer is its
// transpose with leading dimension cols.
struct Operand {
  int op;
  int ld;
};

class CublasGemmImpl final : public CublasGemm {
 public:
  CublasGemmImpl(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, bool broadcast_b,
                 ir::DataType dtype)
      : batch_(batch), m_(m), n_(n), k_(k), broadcast_b_(broadcast_b), dtype_(dtype) {
    // op(B)^T: B stored [k, n] is already B^T column-major (N, ld n); stored [n, k] it is B (T, ld k).
    b_ = trans_b ? Operand{kOpT, static_cast<int>(k)} : Operand{kOpN, static_cast<int>(n)};
    a_ = trans_a ? Operand{kOpT, static_cast<int>(m)} : Operand{kOpN, static_cast<int>(k)};
    type_ = dtype == ir::DataType::f32() ? kR32F : dtype == ir::DataType::f16() ? kR16F : kR16BF;
    if (int status = cublas_api().create(&handle_); status != 0) {
      handle_ = nullptr;
      create_error_ = fmt::format("cublasCreate: {}", cublas_api().status_string(status));
    }
  }
  ~CublasGemmImpl() override {
    if (handle_) cublas_api().destroy(handle_);
  }

  std::string name() const override {
    return fmt::format("{} ({}, compute 32F)", batch_ > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx",
                       ir::to_string(dtype_));
  }

  Status run(const std::vector<runtime::DevicePtr>& params) override {
    if (!handle_) return DRAGON_RUNTIME_FAILURE("cublasCreate", create_error_, "");
    const void* a = reinterpret_cast<const void*>(params[0]);
    const void* b = reinterpret_cast<const void*>(params[1]);
    void* c = reinterpret_cast<void*>(params[2]);
    const float alpha = 1, beta = 0;
    int m = static_cast<int>(m_), n = static_cast<int>(n_), k = static_cast<int>(k_);
    int status;
    if (batch_ == 1) {
      status = cublas_api().gemm(handle_, b_.op, a_.op, n, m, k, &alpha, b, type_, b_.ld, a, type_, a_.ld, &beta, c,
                                 type_, n, kCompute32F, kGemmDefault);
    } else {
      status = cublas_api().gemm_batched(handle_, b_.op, a_.op, n, m, k, &alpha, b, type_, b_.ld,
                                         broadcast_b_ ? 0 : k_ * n_, a, type_, a_.ld, m_ * k_, &beta, c, type_, n,
                                         m_ * n_, static_cast<int>(batch_), kCompute32F, kGemmDefault);
    }
    if (status != 0) return DRAGON_RUNTIME_FAILURE(name().c_str(), cublas_api().status_string(status), "");
    return {};
  }

 private:
  int64_t batch_, m_, n_, k_;
  bool broadcast_b_;
  ir::DataType dtype_;
  Operand a_{}, b_{};
  int type_ = kR32F;
  Handle handle_ = nullptr;
  std::string create_error_;
};

}  // namespace

bool cublas_applies(const ops::Workload& workload, std::string& why_not) {
  const std::string& kind = workload.op->name;
  if (kind != "matmul" && kind != "batch_matmul") {
    why_not = "cuBLAS applies to matmul and batch_matmul only";
    return false;
  }
  ir::DataType dtype = ops::OpRegistry::global().parse(workload.spec).get_dtype("dtype");
  if (dtype != ir::DataType::f32() && dtype != ir::DataType::f16() && dtype != ir::DataType::bf16()) {
    why_not = "no cuBLAS GEMM for " + ir::to_string(dtype);
    return false;
  }
  return true;
}

std::unique_ptr<CublasGemm> make_cublas_gemm(const ops::Workload& workload, std::string& why_not) {
  if (!cublas_applies(workload, why_not)) return nullptr;
  const std::string& kind = workload.op->name;
  ops::OpArgs args = ops::OpRegistry::global().parse(workload.spec);
  ir::DataType dtype = args.get_dtype("dtype");
  if (!cublas_api().error.empty()) {
    why_not = cublas_api().error;
    return nullptr;
  }
  int64_t batch = 1;
  bool broadcast_b = false;
  if (kind == "batch_matmul") {
    for (int64_t extent : args.get_shape("batch")) batch *= extent;
    broadcast_b = args.get_bool("broadcast_b");
  }
  return std::make_unique<CublasGemmImpl>(batch, args.get_int("m"), args.get_int("n"), args.get_int("k"),
                                          args.get_bool("trans_a"), args.get_bool("trans_b"), broadcast_b, dtype);
}

}  // namespace dragon::bench
