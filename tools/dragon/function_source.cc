// Loading a function from an op spec or an IR text file.
#include "function_source.h"

#include "dragon/ir/parser.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {

void FunctionSource::add_options(CLI::App* sub) {
  sub->add_option("spec", spec, "Op spec, e.g. matmul:m=512,n=512,k=512,dtype=f16 (see `dragon ops`)");
  sub->add_option("--ir", ir_file, "Read the function from this IR text file instead of a spec");
}

ir::PrimFunc FunctionSource::load(std::string* label) const {
  if (spec.empty() == ir_file.empty()) {
    throw UserError(spec.empty() ? "give an op spec or --ir FILE (see `dragon ops`)"
                                 : "give either an op spec or --ir FILE, not both");
  }
  if (!spec.empty()) {
    ops::Workload workload = ops::OpRegistry::global().make_workload(spec);
    if (label) *label = workload.spec;
    return workload.func;
  }
  if (label) *label = ir_file;
  return ir::parse_function(read_text_file(ir_file), ir_file);
}

}  // namespace dragon::cli
