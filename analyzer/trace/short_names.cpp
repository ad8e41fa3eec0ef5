#include "analyzer/trace/short_names.h"

namespace apptracer::trace {

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";

// The position just past the bracket closing the one at `open` ('<' or '('),
// counting both kinds; name.size() when it is never closed.
size_t past_closing(std::string_view name, size_t open) {
  int depth = 0;
  for (size_t i = open; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') {
      if (--depth == 0) return i + 1;
    }
  }
  return name.size();
}

}  // namespace

std::string short_kernel_name(std::string_view name, size_t max_chars) {
  // Not a C++ signature ("HtoD copy of 4 MiB", a plain C name): as it is.
  bool signature = name.find_first_of("<(") != std::string_view::npos;
  std::string out;
  size_t name_start = 0;  // in `out`: past the return type
  for (size_t i = 0; i < name.size();) {
    char c = name[i];
    if (name.substr(i, kAnonymous.size()) == kAnonymous) {
      out += kAnonymous;
      i += kAnonymous.size();
    } else if (c == '<') {
      out += "<...>";
      i = past_closing(name, i);
    } else if (c == '(') {
      break;  // the parameter list
    } else if (c == ' ' && signature) {
      // A space outside brackets ends a return type or qualifier ("void ").
      name_start = out.size() + 1;
      out += c;
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  out.erase(0, name_start);
  if (out.empty()) out = std::string(name);
  if (out.size() > max_chars) out = out.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
  return out;
}

}  // namespace apptracer::trace
