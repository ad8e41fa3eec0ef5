#include "exact/code_scan.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace apptracer::exact {

namespace {

constexpr uint32_t kSm90 = 90;
constexpr uint64_t kOpcodeMask = 0x1ff;
constexpr uint64_t kTensorLoad = 0x1b4;       // UTMALDG
constexpr uint64_t kTensorStore = 0x1b5;      // UTMASTG
constexpr uint64_t kTensorReduce = 0x1b6;     // UTMAREDG
constexpr size_t kInstructionBytes = 16;
constexpr const char kTextPrefix[] = ".text.";

template <typename T>
bool read_at(const char* image, size_t size, uint64_t offset, T& out) {
  if (offset > size || size - offset < sizeof(T)) return false;
  std::memcpy(&out, image + offset, sizeof(T));
  return true;
}

}  // namespace

CodeScan scan_cubin(const void* data, size_t size) {
  CodeScan scan;
  const char* image = static_cast<const char*>(data);
  Elf64_Ehdr header;
  if (!image || !read_at(image, size, 0, header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize != sizeof(Elf64_Shdr)) {
    return scan;
  }
  // The architecture sits in bits 8..15 of e_flags (CUDA ELF ABI 8 and later).
  if (((header.e_flags >> 8) & 0xff) != kSm90) return scan;
  Elf64_Shdr names;
  if (!read_at(image, size, header.e_shoff + uint64_t{header.e_shstrndx} * sizeof(Elf64_Shdr),
               names)) {
    return scan;
  }
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!read_at(image, size, header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), section)) {
      return scan;
    }
    if (section.sh_type != SHT_PROGBITS || section.sh_name >= names.sh_size) continue;
    uint64_t name_at = names.sh_offset + section.sh_name;
    if (name_at >= size) return scan;
    std::string name(image + name_at, strnlen(image + name_at, size - name_at));
    if (name.compare(0, sizeof kTextPrefix - 1, kTextPrefix) != 0) continue;
    if (section.sh_offset > size || section.sh_size > size - section.sh_offset) return scan;
    std::string function = name.substr(sizeof kTextPrefix - 1);
    scan.functions.insert(function);
    for (uint64_t at = 0; at + kInstructionBytes <= section.sh_size; at += kInstructionBytes) {
      uint64_t word;
      std::memcpy(&word, image + section.sh_offset + at, sizeof word);
      uint64_t opcode = word & kOpcodeMask;
      if (opcode == kTensorLoad || opcode == kTensorStore || opcode == kTensorReduce) {
        scan.tensor_copies.insert(function);
      }
    }
  }
  scan.readable = true;
  return scan;
}

ExactGap gap_of(const ModuleCode* module, const std::string& function) {
  if (!module || !module->instrumented) return ExactGap::NotInstrumented;
  const CodeScan& scan = module->scan;
  if (!scan.readable || scan.tensor_copies.count(function)) return ExactGap::TensorCopies;
  if (!scan.tensor_copies.empty() && !scan.functions.count(function)) return ExactGap::TensorCopies;
  return ExactGap::None;
}

}  // namespace apptracer::exact
