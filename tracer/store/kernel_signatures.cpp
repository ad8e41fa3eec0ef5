#include "store/kernel_signatures.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "apptracer/signature.h"

namespace apptracer {

uint32_t KernelSignatures::demangled_id(uint32_t name_id) {
  if (name_id == 0) return 0;
  auto cached = demangled_.find(name_id);
  if (cached != demangled_.end()) return cached->second;
  uint32_t id = name_id;
  std::string mangled = strings_.text(name_id);
  if (!mangled.empty()) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && demangled) id = strings_.intern(demangled.get());
  }
  demangled_[name_id] = id;
  return id;
}

std::optional<KernelSignatures::Access> KernelSignatures::access_of(uint32_t name_id,
                                                                    uint16_t index) {
  auto cached = parameters_.find(name_id);
  if (cached == parameters_.end()) {
    Parameters parameters;
    if (auto types = parameter_types(strings_.text(demangled_id(name_id)))) {
      parameters.known = true;
      for (const std::string& type : *types) {
        if (is_arithmetic(type)) {
          parameters.access.push_back(std::nullopt);
        } else if (is_pointer_to_const(type)) {
          parameters.access.push_back(Access{AccessKind::Read, AccessSource::ConstSignature});
        } else {
          // A non-const pointer, or a pointer inside a struct passed by value.
          parameters.access.push_back(Access{AccessKind::ReadWrite, AccessSource::Assumed});
        }
      }
    }
    cached = parameters_.emplace(name_id, std::move(parameters)).first;
  }
  const Parameters& parameters = cached->second;
  // No signature (extern "C", Triton, JAX) or no layout: a pointer is all we know.
  if (!parameters.known || index >= parameters.access.size()) {
    return Access{AccessKind::ReadWrite, AccessSource::Assumed};
  }
  return parameters.access[index];
}

}  // namespace apptracer
