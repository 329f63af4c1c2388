// The registry of operator kinds: each with named, typed parameters, defaults and a
// builder that turns validated arguments into an unscheduled PrimFunc. Op spec strings
// ("matmul:m=1024,n=1024,k=1024,dtype=f16") are parsed and checked here.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::ops {

enum class ParamType : uint8_t {
  kInt,     // 1024, -1
  kFloat,   // 0.01, 1e-5
  kBool,    // true, false
  kDType,   // f32, bf16, ...
  kChoice,  // one of OpParam::choices
  kShape,   // 16x64x256 (one or more positive integers joined by 'x')
};
std::string_view param_type_name(ParamType type);

using ParamValue = std::variant<int64_t, double, bool, ir::DataType, std::string, std::vector<int64_t>>;
std::string format_param_value(const ParamValue& value);

struct OpParam {
  std::string name;
  ParamType type = ParamType::kInt;
  std::optional<ParamValue> default_value;  // nullopt: required
  std::string help;
  std::vector<std::string> choices;    // kChoice, and the allowed spellings of kDType if not empty
  std::optional<int64_t> min_value;    // kInt and each kShape entry
};

class OpKind;

// Validated arguments of one op instance. Getters take the parameter's name and
// check its type (a mismatch is our bug, not the user's).
class OpArgs {
 public:
  OpArgs(const OpKind* op, std::map<std::string, ParamValue, std::less<>> values)
      : op_(op), values_(std::move(values)) {}

  int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  ir::DataType get_dtype(std::string_view name) const;
  const std::string& get_choice(std::string_view name) const;
  const std::vector<int64_t>& get_shape(std::string_view name) const;

  // Cross-parameter validation inside builders: throws a UserError naming the op and
  // `param` when `condition` is false.
  void require(bool condition, std::string_view param, std::string_view message) const;

  const std::map<std::string, ParamValue, std::less<>>& values() const { return values_; }

 private:
  const ParamValue& get(std::string_view name) const;
  const OpKind* op_;
  std::map<std::string, ParamValue, std::less<>> values_;
};

class OpKind {
 public:
  std::string name;
  std::string category;  // "matmul", "activation", "norm", ... for `dragon ops`
  std::string summary;   // one line
  std::vector<OpParam> params;
  std::function<ir::PrimFunc(const OpArgs&)> build;

  const OpParam* find_param(std::string_view param) const;
};

// An op instance: its canonical spec (every parameter, in declaration order) and function.
struct Workload {
  std::string spec;
  const OpKind* op = nullptr;
  ir::PrimFunc func;
};

class OpRegistry {
 public:
  // Every op kind of the library, registered once (no static initializers).
  static const OpRegistry& global();

  void add(OpKind op);
  const OpKind* find(std::string_view name) const;
  const std::vector<OpKind>& kinds() const { return kinds_; }

  // Parses and validates `spec`; throws UserError saying what is wrong and where.
  OpArgs parse(std::string_view spec) const;
  // parse + build.
  Workload make_workload(std::string_view spec) const;

 private:
  std::vector<OpKind> kinds_;
};

// The canonical spelling of an instance: "op:p1=v1,p2=v2" with every parameter.
std::string canonical_spec(const OpKind& op, const OpArgs& args);

// Every parameter's canonical spelling by name ("size" -> "16x16", "bias" -> "false"): how
// an op instance crosses a boundary that links no dragon library (the eager plugin).
std::map<std::string, std::string> canonical_values(const OpArgs& args);

// Parameter declarations for op families. A nullopt default makes the parameter required.
OpParam int_param(std::string name, std::optional<int64_t> default_value, std::string help, int64_t min_value = 1);
OpParam float_param(std::string name, std::optional<double> default_value, std::string help);
OpParam bool_param(std::string name, bool default_value, std::string help);
// A data type limited to the float types f32, f16, bf16, f64 (the default list).
OpParam dtype_param(std::string name, std::string default_value, std::string help,
                    std::vector<std::string> allowed = {"f32", "f16", "bf16", "f64"});
OpParam choice_param(std::string name, std::string default_value, std::vector<std::string> choices,
                     std::string help);
OpParam shape_param(std::string name, std::optional<std::vector<int64_t>> default_value, std::string help);

}  // namespace dragon::ops
