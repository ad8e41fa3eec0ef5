// What a kernel's name says about its parameters: its demangled name, and
// how it accesses memory through each parameter (`const T*` is a read; other
// pointers are assumed read-write; numbers are not pointers). Cached per name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "apptracer/enums.h"
#include "buffer/string_table.h"

namespace apptracer {

class KernelSignatures {
 public:
  explicit KernelSignatures(StringTable& strings) : strings_(strings) {}

  // The interned demangled name (the mangled one when it does not demangle).
  uint32_t demangled_id(uint32_t name_id);

  struct Access {
    AccessKind kind;
    AccessSource source;
  };
  // How parameter `index` (UINT16_MAX: unknown) is accessed; nullopt when the
  // signature says it is a number.
  std::optional<Access> access_of(uint32_t name_id, uint16_t index);

 private:
  StringTable& strings_;
  std::unordered_map<uint32_t, uint32_t> demangled_;
  // Per name id: each parameter's access (nullopt: a number), or an empty
  // list without a signature. Parsed once per name: this runs per word.
  struct Parameters {
    bool known = false;
    std::vector<std::optional<Access>> access;
  };
  std::unordered_map<uint32_t, Parameters> parameters_;
};

}  // namespace apptracer
