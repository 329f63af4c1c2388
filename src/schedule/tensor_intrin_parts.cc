// The parts the built-in tensor intrinsic families share (tensor_intrin_parts.h).
#include "tensor_intrin_parts.h"

#include <fmt/format.h>

#include "dragon/ir/parser.h"

namespace dragon::schedule::detail {

TensorIntrin make_tensor_intrin(std::string name, const std::string& text, std::vector<std::vector<std::string>> scopes,
                                std::string summary) {
  ir::PrimFunc description = ir::parse_function(text, "<intrinsic " + name + ">");
  return TensorIntrin{std::move(name), std::move(description), std::move(scopes), std::move(summary)};
}

TensorIntrin accumulator_fill(std::string name, int rows, std::string summary) {
  const std::string text = fmt::format(R"(func {0}(out C: f32[{1}, 8]) {{
  block root {{
    for i in {1} {{
      for j in 8 {{
        block C [vi: S {1} = i, vj: S 8 = j] {{
          writes C[vi, vj]
          C[vi, vj] = 0f32
        }}
      }}
    }}
  }}
}}
)",
                                       name, rows);
  return make_tensor_intrin(std::move(name), text, {kFragmentScopes}, std::move(summary));
}

TensorIntrin accumulator_store(std::string name, int rows, std::string summary) {
  const std::string text = fmt::format(R"(func {0}(in C: f32[{1}, 8], out D: f32[{1}, 8]) {{
  block root {{
    for i in {1} {{
      for j in 8 {{
        block D [vi: S {1} = i, vj: S 8 = j] {{
          reads C[vi, vj]
          writes D[vi, vj]
          D[vi, vj] = C[vi, vj]
        }}
      }}
    }}
  }}
}}
)",
                                       name, rows);
  return make_tensor_intrin(std::move(name), text, {kFragmentScopes, kStoreTargetScopes}, std::move(summary));
}

}  // namespace dragon::schedule::detail
