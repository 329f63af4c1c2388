// Owning handles for XGBoost's C API and the error check every call goes through (the
// API returns -1 and keeps the message in XGBGetLastError).
#pragma once

#include <string_view>
#include <vector>

#include <xgboost/c_api.h>

namespace dragon::search::xgb {

// Throws InternalError "XGBoost <call>: <XGBGetLastError()>" when `status` is not 0.
void check(int status, std::string_view call);

class DMatrix {
 public:
  // rows x cols floats, row-major; no missing values.
  DMatrix(const float* data, size_t rows, size_t cols);
  ~DMatrix();
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

class Booster {
 public:
  Booster() = default;
  // A booster caching predictions for `cached` (the training matrix), or none.
  explicit Booster(const DMatrix* cached);
  ~Booster();
  Booster(Booster&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Booster& operator=(Booster&& other) noexcept;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  bool defined() const { return handle_ != nullptr; }
  void set_param(const char* name, const std::string& value);
  // One boosting round from given first and second derivatives per row.
  void boost(const DMatrix& train, std::vector<float>& grad, std::vector<float>& hess);
  // Raw scores (margins) of every row, from the first `rounds` rounds (0: all).
  std::vector<float> predict(const DMatrix& data, int rounds = 0) const;
  // The first `rounds` rounds as a booster of its own.
  Booster slice(int rounds) const;
  int rounds() const;
  // XGBoost's binary JSON (UBJSON) model, and back.
  std::string save() const;
  static Booster load(std::string_view model);

 private:
  explicit Booster(BoosterHandle handle) : handle_(handle) {}
  BoosterHandle handle_ = nullptr;
};

}  // namespace dragon::search::xgb
