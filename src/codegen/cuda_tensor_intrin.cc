// The extension point for tensor-core blocks: a unit loop annotated "tensor_intrin" = NAME
// (lower.h keeps the annotation) is printed by the printer registered under NAME. None is
// registered yet (mma comes later); the block then prints as the scalar code it lowers to.
#include "cuda_emitter.h"

namespace dragon::codegen {

const std::map<std::string, CudaEmitter::TensorIntrinPrinter, std::less<>>& CudaEmitter::tensor_intrin_printers() {
  // NAME -> &CudaEmitter::print_NAME, one row per tensor intrinsic, e.g. an mma.sync
  // m16n8k16 printer that reads the loop nest under the annotated unit loop.
  static const std::map<std::string, TensorIntrinPrinter, std::less<>> printers;
  return printers;
}

bool CudaEmitter::print_tensor_intrin(const ir::ForNode* op, const std::string& intrin) {
  const auto& printers = tensor_intrin_printers();
  auto it = printers.find(intrin);
  if (it == printers.end()) return false;
  return (this->*(it->second))(op);
}

}  // namespace dragon::codegen
