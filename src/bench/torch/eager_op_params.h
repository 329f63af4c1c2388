// An op's parameters as the plugin sees them: canonical spellings by name (the plugin links
// no dragon library, so it parses the few value forms `dragon ops` prints itself).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/dtype.h"

namespace dragon::bench::torch_eager {

class EagerOpParams {
 public:
  EagerOpParams(std::string op_kind, std::map<std::string, std::string> values)
      : op_kind_(std::move(op_kind)), values_(std::move(values)) {}

  // Each throws std::runtime_error naming the op and the parameter when it is missing or
  // not of the asked form.
  int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  const std::string& get_choice(std::string_view name) const;
  std::vector<int64_t> get_shape(std::string_view name) const;  // "16x64x256"
  ir::DataType get_dtype(std::string_view name) const;          // "f32", "bf16", "i64", ...
  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }

  const std::string& op_kind() const { return op_kind_; }

 private:
  const std::string& get(std::string_view name) const;
  [[noreturn]] void fail(std::string_view name, std::string_view expected) const;
  std::string op_kind_;
  std::map<std::string, std::string> values_;
};

}  // namespace dragon::bench::torch_eager
