// Reading a demangled kernel signature, e.g.
//   "ns::axpy<float>(float const*, float*, at::Array<char*, 2>, int)",
// for what it says about each parameter: is it a pointer, and is what it
// points to const (so the kernel only reads through it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apptracer {

// The parameter types, in order; nullopt when `demangled` has no parameter
// list (an extern "C" name, a Triton or JAX kernel).
std::optional<std::vector<std::string>> parameter_types(std::string_view demangled);

// "float*", "float const*", "int* __restrict__" are data pointers; references,
// function pointers and structs passed by value are not.
bool is_data_pointer(std::string_view type);

// A data pointer whose pointee is const: "float const*", "const float*".
bool is_pointer_to_const(std::string_view type);

// A pointer to data pointers through which the kernel may write ("char**",
// "float* const*"; not "float const* const*"): it reaches memory that its own
// value does not point at (PyTorch passes arrays of tensor pointers this way).
bool points_to_writable_pointers(std::string_view type);

// A built-in arithmetic type ("int", "unsigned long", "float", "bool"...):
// a value of it is never a pointer, whatever it happens to equal.
bool is_arithmetic(std::string_view type);

}  // namespace apptracer
