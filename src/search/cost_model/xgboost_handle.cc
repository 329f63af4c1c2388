// XGBoost C API wrappers (xgboost_handle.h).
#include "xgboost_handle.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::search::xgb {

void check(int status, std::string_view call) {
  if (status != 0) throw InternalError(fmt::format("XGBoost {}: {}", call, XGBGetLastError()));
}

DMatrix::DMatrix(const float* data, size_t rows, size_t cols) {
  // NaN marks missing values; rows never hold NaN.
  check(XGDMatrixCreateFromMat(data, rows, cols, std::nanf(""), &handle_), "XGDMatrixCreateFromMat");
}

DMatrix::~DMatrix() {
  if (handle_ != nullptr) XGDMatrixFree(handle_);
}

Booster::Booster(const DMatrix* cached) {
  DMatrixHandle dmats[1] = {cached != nullptr ? cached->get() : nullptr};
  check(XGBoosterCreate(dmats, cached != nullptr ? 1 : 0, &handle_), "XGBoosterCreate");
}

Booster::~Booster() {
  if (handle_ != nullptr) XGBoosterFree(handle_);
}

Booster& Booster::operator=(Booster&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGBoosterFree(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

void Booster::set_param(const char* name, const std::string& value) {
  check(XGBoosterSetParam(handle_, name, value.c_str()), fmt::format("XGBoosterSetParam({}={})", name, value));
}

void Booster::boost(const DMatrix& train, std::vector<float>& grad, std::vector<float>& hess) {
  check(XGBoosterBoostOneIter(handle_, train.get(), grad.data(), hess.data(), grad.size()), "XGBoosterBoostOneIter");
}

std::vector<float> Booster::predict(const DMatrix& data, int rounds) const {
  // type 1: margins (no link function), the sum PackSum adds up.
  const std::string config = fmt::format(
      R"({{"type": 1, "training": false, "iteration_begin": 0, "iteration_end": {}, "strict_shape": false}})", rounds);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDMatrix(handle_, data.get(), config.c_str(), &shape, &dims, &result),
        "XGBoosterPredictFromDMatrix");
  bst_ulong n = 1;
  for (bst_ulong d = 0; d < dims; ++d) n *= shape[d];
  return std::vector<float>(result, result + n);
}

Booster Booster::slice(int rounds) const {
  BoosterHandle out = nullptr;
  check(XGBoosterSlice(handle_, 0, rounds, 1, &out), "XGBoosterSlice");
  return Booster(out);
}

int Booster::rounds() const {
  int n = 0;
  check(XGBoosterBoostedRounds(handle_, &n), "XGBoosterBoostedRounds");
  return n;
}

std::string Booster::save() const {
  bst_ulong length = 0;
  const char* data = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "ubj"})", &length, &data), "XGBoosterSaveModelToBuffer");
  return std::string(data, length);
}

Booster Booster::load(std::string_view model) {
  Booster b(static_cast<const DMatrix*>(nullptr));
  check(XGBoosterLoadModelFromBuffer(b.handle_, model.data(), model.size()), "XGBoosterLoadModelFromBuffer");
  return b;
}

}  // namespace dragon::search::xgb
