// Kernel names as people read them in a list: C++ demangled names run to
// thousands of characters of template arguments and parameter types
// ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor
// <int>, ...>(int, ...)"), which hide the name. Shown, the return type and
// parameters are dropped and each template's arguments reduced to the one
// that tells its instances apart: the innermost function object, or the
// function a lambda was written in, without namespaces
// ("at::native::vectorized_elementwise_kernel<FillFunctor<int>>"); numbers
// and number types alone are elided ("softmax_warp_forward<...>"). JSON and
// stored tables keep the whole name.
#pragma once

#include <string>
#include <string_view>

namespace apptracer::trace {

// The shortened name, at most `max_chars` long (longer: cut, ending in "...").
std::string short_kernel_name(std::string_view name, size_t max_chars = 128);
// The same, to fit a table's text cell (Table::text_forms).
std::string short_kernel_name_cell(std::string_view name);

}  // namespace apptracer::trace
