// Kernel files (isolated_kernel.h): the language from the extension, the text as it is.
#include "dragon/harness/isolated_kernel.h"

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::harness {

std::string_view kernel_language_name(KernelLanguage language) {
  switch (language) {
    case KernelLanguage::kCpu: return "cpu";
    case KernelLanguage::kCuda: return "cuda";
  }
  return "unknown";
}

IsolatedKernel read_isolated_kernel(const std::string& path, std::string entry) {
  std::string name = path.substr(path.rfind('/') + 1);
  std::string extension = name.rfind('.') == std::string::npos ? "" : name.substr(name.rfind('.'));
  IsolatedKernel kernel;
  if (extension == ".cc" || extension == ".cpp" || extension == ".cxx") {
    kernel.language = KernelLanguage::kCpu;
  } else if (extension == ".cu") {
    kernel.language = KernelLanguage::kCuda;
  } else {
    throw UserError(
        fmt::format("{}: a kernel file is C++ for the CPU (.cc, .cpp, .cxx) or CUDA (.cu), not '{}'", path, extension));
  }
  if (entry.empty()) throw UserError(path + ": the kernel's entry name is empty");
  kernel.source = read_text_file(path);
  kernel.source_name = name;
  kernel.entry = std::move(entry);
  return kernel;
}

}  // namespace dragon::harness
