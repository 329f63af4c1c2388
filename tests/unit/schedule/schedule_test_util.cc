// Shared helpers for schedule tests (see schedule_test_util.h).
#include "schedule_test_util.h"

#include <cmath>
#include <cstring>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/trace_json.h"

namespace dragon::schedule::testing {

ir::PrimFunc workload(std::string_view spec) { return ops::OpRegistry::global().make_workload(spec).func; }

::testing::AssertionResult same_outputs(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed,
                                        bool exact) {
  std::vector<tensor::HostTensor> expected = interp::make_arguments(before, seed, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> actual = expected;
  interp::run(before, expected);
  interp::run(after, actual);
  for (size_t p = 0; p < before->params.size(); ++p) {
    if (before->params[p].role == ir::ParamRole::kInput) continue;
    const tensor::HostTensor& e = expected[p];
    const tensor::HostTensor& a = actual[p];
    const std::string& name = before->params[p].buffer->name;
    if (exact) {
      if (e.size_bytes() != a.size_bytes() || std::memcmp(e.data(), a.data(), e.size_bytes()) != 0) {
        for (int64_t i = 0; i < e.num_elements(); ++i) {
          if (e.get(i) != a.get(i) && !(std::isnan(e.get(i)) && std::isnan(a.get(i)))) {
            return ::testing::AssertionFailure() << "output " << name << " differs first at [" << i << "]: expected "
                                                 << e.get(i) << ", got " << a.get(i);
          }
        }
        return ::testing::AssertionFailure() << "output " << name << " differs in its bytes";
      }
      continue;
    }
    double scale = 0;
    for (int64_t i = 0; i < e.num_elements(); ++i) scale = std::max(scale, std::fabs(e.get(i)));
    for (int64_t i = 0; i < e.num_elements(); ++i) {
      double x = e.get(i), y = a.get(i);
      if (std::isnan(x) != std::isnan(y) || std::fabs(x - y) > 1e-4 * (scale + 1e-30)) {
        return ::testing::AssertionFailure() << "output " << name << " differs at [" << i << "]: expected " << x
                                             << ", got " << y << " (scale " << scale << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult has_line(const std::string& text, std::string_view piece) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    if (line.find(piece) != std::string_view::npos) return ::testing::AssertionSuccess();
    pos = end + 1;
  }
  return ::testing::AssertionFailure() << "no line contains '" << piece << "' in:\n" << text;
}

::testing::AssertionResult replays_exactly(const Schedule& sch) {
  Schedule again = replay(sch.trace(), sch.original());
  if (!ir::structural_equal(again.func(), sch.func())) {
    return ::testing::AssertionFailure() << "replay differs.\ntrace:\n"
                                         << sch.trace().to_string() << "scheduled:\n"
                                         << ir::print_function(sch.func()) << "replayed:\n"
                                         << ir::print_function(again.func());
  }
  if (!(again.trace() == sch.trace())) {
    return ::testing::AssertionFailure() << "replay recorded another trace:\n" << again.trace().to_string();
  }
  std::string json = trace_to_json(sch.trace());
  Trace decoded = trace_from_json(json);
  if (!(decoded == sch.trace())) return ::testing::AssertionFailure() << "JSON round trip changed the trace: " << json;
  if (trace_to_json(decoded) != json) return ::testing::AssertionFailure() << "JSON re-encoding differs: " << json;
  Schedule from_json = replay(decoded, sch.original());
  if (!ir::structural_equal(from_json.func(), sch.func())) {
    return ::testing::AssertionFailure() << "replay of the decoded JSON differs: " << json;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace dragon::schedule::testing
