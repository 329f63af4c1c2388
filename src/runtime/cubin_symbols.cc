// cubin_kernel_names (cubin_symbols.h): the section headers, the symbol table and its
// string table, every offset checked against the image before it is read.
#include "dragon/runtime/cubin_symbols.h"

#include <elf.h>

#include <cstring>

namespace dragon::runtime {
namespace {

// NVIDIA's mark of a kernel entry in a symbol's st_other (cuobjdump prints it as
// STO_ENTRY); device functions that survive inlining lack it.
constexpr unsigned char kStoCudaEntry = 0x10;

RuntimeFailure malformed(const std::string& what) {
  return DRAGON_RUNTIME_FAILURE("cubin_kernel_names", "not a well-formed CUBIN: " + what, "");
}

// A copy of the `T` at `offset`, if all of it lies inside `image`.
template <typename T>
bool read_at(std::string_view image, uint64_t offset, T& out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return true;
}

}  // namespace

Expected<std::vector<std::string>> cubin_kernel_names(std::string_view cubin) {
  Elf64_Ehdr header{};
  if (!read_at(cubin, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return malformed("no ELF header");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return malformed("not a 64-bit little-endian ELF image");
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return malformed("unexpected section header size");
  auto section = [&](uint64_t index, Elf64_Shdr& out) {
    return index < header.e_shnum && read_at(cubin, header.e_shoff + index * sizeof(Elf64_Shdr), out);
  };
  std::vector<std::string> kernels;
  for (uint64_t s = 0; s < header.e_shnum; ++s) {
    Elf64_Shdr symbols{};
    if (!section(s, symbols)) return malformed("section header " + std::to_string(s) + " out of bounds");
    if (symbols.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strings{};
    if (!section(symbols.sh_link, strings) || strings.sh_type != SHT_STRTAB) {
      return malformed("the symbol table's string table is missing");
    }
    if (symbols.sh_entsize != sizeof(Elf64_Sym) || symbols.sh_offset > cubin.size() ||
        cubin.size() - symbols.sh_offset < symbols.sh_size || strings.sh_offset > cubin.size() ||
        cubin.size() - strings.sh_offset < strings.sh_size) {
      return malformed("the symbol table lies outside the image");
    }
    std::string_view names = cubin.substr(strings.sh_offset, strings.sh_size);
    for (uint64_t i = 0; i < symbols.sh_size / sizeof(Elf64_Sym); ++i) {
      Elf64_Sym symbol{};
      read_at(cubin, symbols.sh_offset + i * sizeof(Elf64_Sym), symbol);
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || (symbol.st_other & kStoCudaEntry) == 0) continue;
      if (symbol.st_name >= names.size()) return malformed("a symbol's name lies outside its string table");
      std::string_view rest = names.substr(symbol.st_name);
      size_t end = rest.find('\0');
      if (end == std::string_view::npos) return malformed("a symbol's name is not terminated");
      kernels.emplace_back(rest.substr(0, end));
    }
  }
  return kernels;
}

}  // namespace dragon::runtime
