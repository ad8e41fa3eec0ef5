// Kernel names as people read them in a list: C++ demangled names run to
// thousands of characters of template arguments and parameter types
// ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor
// <int>, ...>(int, ...)"), which hide the name. Shown, the template
// arguments are elided and the return type and parameters dropped
// ("at::native::vectorized_elementwise_kernel<...>"); JSON and stored
// tables keep the whole name.
#pragma once

#include <string>
#include <string_view>

namespace apptracer::trace {

// The shortened name, at most `max_chars` long (longer: cut, ending in "...").
std::string short_kernel_name(std::string_view name, size_t max_chars = 96);

}  // namespace apptracer::trace
