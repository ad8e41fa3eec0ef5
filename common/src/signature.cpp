#include "apptracer/signature.h"

namespace apptracer {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Drops qualifiers that apply to the pointer itself ("float* const").
std::string_view strip_trailing_qualifiers(std::string_view type) {
  type = trim(type);
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view q : {" const", " volatile", " __restrict__", " __restrict", " restrict"}) {
      if (ends_with(type, q)) {
        type = trim(type.substr(0, type.size() - q.size()));
        stripped = true;
      }
    }
  }
  return type;
}

}  // namespace

std::optional<std::vector<std::string>> parameter_types(std::string_view demangled) {
  std::string_view s = trim(demangled);
  if (s.empty() || s.back() != ')') return std::nullopt;
  // Walk back to the '(' that opens the final parameter list.
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = s.size(); i-- > 0;) {
    char c = s[i];
    if (c == ')' || c == '>' || c == ']') ++depth;
    if (c == '(' || c == '<' || c == '[') --depth;
    if (depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos || s[open] != '(' || open == 0) return std::nullopt;
  std::string_view inside = s.substr(open + 1, s.size() - open - 2);
  std::vector<std::string> types;
  if (trim(inside).empty() || trim(inside) == "void") return types;
  depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= inside.size(); ++i) {
    char c = i < inside.size() ? inside[i] : ',';
    if (c == '(' || c == '<' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      types.emplace_back(trim(inside.substr(start, i - start)));
      start = i + 1;
    }
  }
  return types;
}

bool is_data_pointer(std::string_view type) {
  std::string_view t = strip_trailing_qualifiers(type);
  return !t.empty() && t.back() == '*' && !ends_with(t, "(*)") && !ends_with(t, ")*");
}

bool is_pointer_to_const(std::string_view type) {
  if (!is_data_pointer(type)) return false;
  std::string_view t = strip_trailing_qualifiers(type);
  std::string_view pointee = trim(t.substr(0, t.size() - 1));
  if (ends_with(pointee, " const") || pointee == "const") return true;
  // "const float*": a leading const binds to the innermost type only when no
  // other pointer level sits between it and the last '*'.
  return starts_with(pointee, "const ") && pointee.find('*') == std::string_view::npos;
}

bool points_to_writable_pointers(std::string_view type) {
  if (!is_data_pointer(type)) return false;
  std::string_view t = strip_trailing_qualifiers(type);
  std::string_view pointee = trim(t.substr(0, t.size() - 1));
  return is_data_pointer(pointee) && !is_pointer_to_const(pointee);
}

bool is_arithmetic(std::string_view type) {
  std::string_view t = trim(type);
  if (starts_with(t, "const ")) t = t.substr(6);
  if (ends_with(t, " const")) t = t.substr(0, t.size() - 6);
  for (std::string_view word : {"bool", "char", "signed char", "unsigned char", "short",
                                "unsigned short", "int", "unsigned int", "long", "unsigned long",
                                "long long", "unsigned long long", "float", "double", "long double",
                                "__int128", "unsigned __int128", "wchar_t", "char16_t", "char32_t",
                                "__half", "__nv_bfloat16"}) {
    if (t == word) return true;
  }
  return false;
}

}  // namespace apptracer
