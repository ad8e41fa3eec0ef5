#include "analyzer/trace/xla_range_names.h"

#include <vector>

namespace apptracer::trace {

namespace {

// The value of `key=` in "#key=value,key=value#", up to the next `,next=`
// (a value may hold commas of its own: a primitive's parameters).
std::string_view field(std::string_view fields, std::string_view key, std::string_view next) {
  size_t at = fields.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view value = fields.substr(at + key.size());
  size_t end = next.empty() ? std::string_view::npos : value.rfind(next);
  if (end == std::string_view::npos) end = value.find(',');
  return value.substr(0, end);
}

// A source path's parts, split at the slashes outside parentheses and brackets.
std::vector<std::string_view> parts(std::string_view path) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (c == '/' && depth == 0) {
      out.push_back(path.substr(from, i - from));
      from = i + 1;
    }
  }
  out.push_back(path.substr(from));
  return out;
}

// "jvp(CNN)" -> ("jvp", "CNN"); a plain name -> ("", name).
std::pair<std::string_view, std::string_view> wrapped(std::string_view part) {
  size_t open = part.find('(');
  if (open == std::string_view::npos || part.back() != ')') return {"", part};
  return {part.substr(0, open), part.substr(open + 1, part.size() - open - 2)};
}

}  // namespace

std::optional<XlaRange> parse_xla_range(std::string_view name) {
  auto strip = [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
    std::string_view fields = name.substr(prefix.size());
    if (!fields.empty() && fields.back() == '#') fields.remove_suffix(1);
    return fields;
  };
  XlaRange range;
  if (std::optional<std::string_view> fields = strip("XlaModule:#")) {
    range.kind = XlaRange::Kind::Executable;
    range.name = field(*fields, "hlo_module=", ",program_id=");
    return range.name.empty() ? std::nullopt : std::optional(range);
  }
  std::optional<std::string_view> fields = strip("Thunk:#");
  if (!fields) return std::nullopt;
  std::string_view path = fields->substr(0, 5) == "name=" ? field(*fields, "name=", ",hlo_op=") : "";
  std::string_view hlo_op = field(*fields, "hlo_op=", ",unique_hlo_op_id=");
  if (path.empty()) {
    range.name = hlo_op;
    return range.name.empty() ? std::nullopt : std::optional(range);
  }
  // jit(...) parts are functions, not modules; jvp(M) and transpose(jvp(M))
  // wrap a module M in its forward and backward passes; the last part is
  // the primitive.
  std::vector<std::string_view> all = parts(path);
  range.name = all.size() > 1 ? all.back() : hlo_op;
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    auto [wrapper, inner] = wrapped(all[i]);
    if (wrapper == "jit" || wrapper == "pjit") continue;
    if (wrapper == "transpose") {
      range.phase = ModulePhase::Backward;
      inner = wrapped(inner).second;
    } else if (wrapper == "jvp" && range.phase == ModulePhase::None) {
      range.phase = ModulePhase::Forward;
    } else if (!wrapper.empty()) {
      continue;  // vmap, remat, cond, ...: no module of their own
    }
    if (inner.empty()) continue;
    if (!range.module.empty()) range.module += "/";
    range.module += inner;
  }
  if (range.name.empty()) range.name = hlo_op;
  return range;
}

}  // namespace apptracer::trace
