#include "eager_op_params.h"

#include <charconv>
#include <stdexcept>

namespace dragon::bench::torch_eager {
namespace {

bool parse_int(std::string_view text, int64_t& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

const std::string& EagerOpParams::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) fail(name, "a value (the parameter is missing)");
  return it->second;
}

void EagerOpParams::fail(std::string_view name, std::string_view expected) const {
  auto it = values_.find(std::string(name));
  std::string got = it == values_.end() ? std::string("nothing") : "'" + it->second + "'";
  throw std::runtime_error(op_kind_ + ": parameter " + std::string(name) + ": expected " + std::string(expected) +
                           ", got " + got);
}

int64_t EagerOpParams::get_int(std::string_view name) const {
  int64_t value = 0;
  if (!parse_int(get(name), value)) fail(name, "an integer");
  return value;
}

double EagerOpParams::get_float(std::string_view name) const {
  const std::string& text = get(name);
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail(name, "a number");
  }
  if (used != text.size()) fail(name, "a number");
  return value;
}

bool EagerOpParams::get_bool(std::string_view name) const {
  const std::string& text = get(name);
  if (text == "true") return true;
  if (text == "false") return false;
  fail(name, "true or false");
}

const std::string& EagerOpParams::get_choice(std::string_view name) const { return get(name); }

std::vector<int64_t> EagerOpParams::get_shape(std::string_view name) const {
  std::string_view text = get(name);
  std::vector<int64_t> shape;
  while (true) {
    size_t x = text.find('x');
    int64_t extent = 0;
    if (!parse_int(text.substr(0, x), extent)) fail(name, "a shape like 16x64");
    shape.push_back(extent);
    if (x == std::string_view::npos) break;
    text.remove_prefix(x + 1);
  }
  return shape;
}

ir::DataType EagerOpParams::get_dtype(std::string_view name) const {
  static const std::map<std::string, ir::DataType, std::less<>> kTypes = {
      {"f64", ir::DataType::f64()}, {"f32", ir::DataType::f32()}, {"f16", ir::DataType::f16()},
      {"bf16", ir::DataType::bf16()}, {"i8", ir::DataType::i8()}, {"i32", ir::DataType::i32()},
      {"i64", ir::DataType::i64()}, {"bool", ir::DataType::boolean()}};
  auto it = kTypes.find(get(name));
  if (it == kTypes.end()) fail(name, "a dtype (f64, f32, f16, bf16, i8, i32, i64, bool)");
  return it->second;
}

}  // namespace dragon::bench::torch_eager
