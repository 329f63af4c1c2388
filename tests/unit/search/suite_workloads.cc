// suite_workloads (suite_workloads.h).
#include "suite_workloads.h"

#include <algorithm>
#include <set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ops/op_registry.h"
#include "dragon/suites/suite.h"
#include "dragon/support/error.h"

namespace dragon::search::testing {
namespace {

std::string capped(const ops::OpKind& op, const std::map<std::string, ops::ParamValue, std::less<>>& values,
                   int64_t cap) {
  std::string spec = op.name + ":";
  bool first = true;
  for (const auto& [name, original] : values) {
    ops::ParamValue value = original;
    if (auto* shape = std::get_if<std::vector<int64_t>>(&value)) {
      for (int64_t& extent : *shape) extent = std::min(extent, cap);
    } else if (auto* number = std::get_if<int64_t>(&value)) {
      *number = std::min(*number, cap);
    }
    spec += (first ? "" : ",") + name + "=" + ops::format_param_value(value);
    first = false;
  }
  return spec;
}

// Block instances the function runs (each block once per iteration of its loops): the
// interpreter's work.
int64_t block_instances(const ir::Stmt& body, int64_t outer = 1) {
  struct Count : ir::StmtVisitor {
    int64_t iterations = 1, total = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      int64_t saved = iterations;
      iterations *= ir::as_const_int(op->extent).value_or(1);
      ir::StmtVisitor::visit_(op);
      iterations = saved;
    }
    void visit_(const ir::BlockRealizeNode* op) override {
      total += iterations;
      ir::StmtVisitor::visit_(op);
    }
  } count;
  count.iterations = outer;
  count.visit(body);
  return count.total;
}

// Whether the spec builds and runs at most `budget` block instances.
bool fits(const std::string& spec, int64_t budget) {
  try {
    return block_instances(ops::OpRegistry::global().make_workload(spec).func->body) <= budget;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace

std::string reduced_spec(const std::string& spec, int64_t max_extent) {
  const ops::OpRegistry& registry = ops::OpRegistry::global();
  ops::OpArgs args = registry.parse(spec);
  const ops::OpKind* op = registry.find(spec.substr(0, spec.find(':')));
  ops::OpArgs defaults = registry.parse(op->name);
  // Smaller caps first when the op is heavy (3-D convolutions), larger when a constraint
  // between parameters needs them.
  for (int64_t budget : {int64_t{1} << 16, int64_t{1} << 20}) {
    for (const ops::OpArgs* source : {&args, &defaults}) {
      for (int64_t cap : {max_extent, max_extent / 2, max_extent / 4, max_extent * 2, max_extent * 4, max_extent * 8}) {
        if (cap < 1) continue;
        std::string candidate = capped(*op, source->values(), cap);
        if (fits(candidate, budget)) return candidate;
      }
    }
  }
  return spec;
}

const std::vector<SuiteWorkload>& suite_workloads() {
  static const std::vector<SuiteWorkload> all = [] {
    std::vector<SuiteWorkload> out;
    for (const std::string& name : suites::suite_names()) {
      suites::Suite suite = suites::load_suite(name);
      for (const suites::Problem& p : suite.problems) {
        if (!p.supported()) continue;
        out.push_back({name + "/" + p.id, p.spec, reduced_spec(p.spec, 8)});
      }
    }
    return out;
  }();
  return all;
}

std::vector<SuiteWorkload> one_problem_per_op_kind() {
  std::vector<SuiteWorkload> out;
  std::set<std::string> seen;
  for (const SuiteWorkload& w : suite_workloads()) {
    if (seen.insert(w.spec.substr(0, w.spec.find(':'))).second) out.push_back(w);
  }
  return out;
}

}  // namespace dragon::search::testing
