#include "analyzer/trace/short_names.h"

#include <array>
#include <vector>

namespace apptracer::trace {

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";
constexpr std::string_view kLambda = "::{lambda";
// An argument's own template arguments are kept when this short
// ("FillFunctor<float>"), else elided ("MeanOps<...>").
constexpr size_t kInnerArgumentsKept = 24;

// The position just past the bracket closing the one at `open` ('<' or '('),
// counting both kinds; name.size() when it is never closed.
size_t past_closing(std::string_view name, size_t open) {
  int depth = 0;
  for (size_t i = open; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<' || c == '(' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return name.size();
}

// The position of the bracket opening the one closing at `close`; npos when
// it is never opened.
size_t opening(std::string_view name, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    char c = name[i];
    if (c == '>' || c == ')' || c == '}') ++depth;
    if (c == '<' || c == '(' || c == '{') {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// The top-level arguments of the list opened at `open`.
std::vector<std::string_view> arguments(std::string_view name, size_t open) {
  std::vector<std::string_view> out;
  size_t end = past_closing(name, open);
  if (end == 0 || end > name.size()) return out;
  size_t start = open + 1, close = end - 1;
  for (size_t i = start; i < close;) {
    char c = name[i];
    if (c == '<' || c == '(' || c == '{') {
      i = past_closing(name, i);
    } else if (c == ',') {
      out.push_back(trimmed(name.substr(start, i - start)));
      start = ++i;
    } else {
      ++i;
    }
  }
  if (close > start) out.push_back(trimmed(name.substr(start, close - start)));
  return out;
}

// The first top-level '<' of a qualified name, npos when it has none.
size_t template_open(std::string_view type) {
  for (size_t i = 0; i < type.size();) {
    if (type.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size();
    } else if (type[i] == '<') {
      return i;
    } else if (type[i] == '(' || type[i] == '{') {
      i = past_closing(type, i);
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

// The last component of a qualified name, without its template arguments:
// "FillFunctor" for "at::native::FillFunctor<int>".
std::string_view last_component(std::string_view type) {
  size_t open = template_open(type);
  std::string_view base = type.substr(0, open);
  size_t colons = base.rfind("::");
  return colons == std::string_view::npos ? base : base.substr(colons + 2);
}

// A number, a boolean, a cast constant ("(cudnnKernelDataType_t)0").
bool is_literal(std::string_view arg) {
  if (arg.empty()) return true;
  char c = arg.front();
  return (c >= '0' && c <= '9') || c == '-' || c == '(' || arg == "true" || arg == "false" ||
         arg == "nullptr";
}

// A type that says how, not what: a number type (int, c10::BFloat16,
// __nv_bfloat16), or a pointer or reference.
bool is_plain_type(std::string_view arg) {
  if (!arg.empty() && (arg.back() == '*' || arg.back() == '&')) return true;
  static constexpr std::array<std::string_view, 28> kNumbers = {
      "void",      "bool",     "char",       "short",      "int",         "long",       "float",
      "double",    "unsigned", "signed",     "half",       "__half",      "Half",       "BFloat16",
      "__nv_bfloat16", "__nv_half", "nv_bfloat16", "half_t",   "bfloat16_t",  "tfloat32_t", "size_t",
      "int8_t",    "uint8_t",  "int16_t",    "int32_t",    "int64_t",     "uint32_t",   "uint64_t"};
  std::string_view last = last_component(arg);
  size_t space = last.rfind(' ');  // "unsigned int", "long long"
  if (space != std::string_view::npos) last = last.substr(space + 1);
  for (std::string_view number : kNumbers) {
    if (last == number) return true;
  }
  return last.rfind("Float8_", 0) == 0 || last.rfind("float_e", 0) == 0 || last == "complex";
}

bool is_telling(std::string_view arg) { return !is_literal(arg) && !is_plain_type(arg); }

// What the code does rather than how it is laid out: a lambda or a function
// object ("FillFunctor", "MeanOps", "sum_functor").
bool names_an_operation(std::string_view arg) {
  if (arg.find(kLambda) != std::string_view::npos) return true;
  std::string_view last = last_component(arg);
  auto ends_with = [&](std::string_view end) {
    return last.size() >= end.size() && last.substr(last.size() - end.size()) == end;
  };
  return last.find("Functor") != std::string_view::npos || last.find("functor") != std::string_view::npos ||
         ends_with("Op") || ends_with("Ops") || ends_with("_op");
}

// The telling argument of a list: the first that names an operation, else
// the first telling one; empty when none is.
std::string_view telling_argument(const std::vector<std::string_view>& args) {
  std::string_view first;
  for (std::string_view arg : args) {
    if (!is_telling(arg)) continue;
    if (names_an_operation(arg)) return arg;
    if (first.empty()) first = arg;
  }
  return first;
}

// Where "::{lambda" opens outside any bracket of `arg`: the lambda `arg`
// is, rather than one inside its arguments; npos when it is none.
size_t outer_lambda(std::string_view arg) {
  for (size_t i = 0; i < arg.size();) {
    if (arg.substr(i, kLambda.size()) == kLambda) return i;
    char c = arg[i];
    i = c == '<' || c == '(' || c == '{' ? past_closing(arg, i) : i + 1;
  }
  return std::string_view::npos;
}

std::string telling_part(std::string_view arg);

// What tells a lambda apart, from the function it was written in (`home`,
// the text before its "::{lambda"): that function's telling template
// argument ("MulFunctor<float>" for gpu_kernel_impl_nocast<BUnaryFunctor<...,
// MulFunctor<float> > >(...)::{lambda(int)#1}), else its name
// ("bfloat16_copy_kernel_cuda", the class for an operator(): "sum_functor").
std::string lambda_home(std::string_view home) {
  if (!home.empty() && home.back() == ')') {
    size_t open = opening(home, home.size() - 1);
    if (open != std::string_view::npos) home = home.substr(0, open);
  }
  constexpr std::string_view kCall = "::operator()";
  if (home.size() >= kCall.size() && home.substr(home.size() - kCall.size()) == kCall)
    home.remove_suffix(kCall.size());
  if (!home.empty() && home.back() == '>') {
    size_t open = opening(home, home.size() - 1);
    if (open != std::string_view::npos) {
      std::string_view telling = telling_argument(arguments(home, open));
      if (!telling.empty()) return telling_part(telling);
      home = home.substr(0, open);
    }
  }
  size_t start = home.find_last_of(":<, ");
  std::string_view name = start == std::string_view::npos ? home : home.substr(start + 1);
  return name.empty() ? std::string("lambda") : std::string(name);
}

// The innermost telling part of an argument: a lambda's (lambda_home), else
// the type without namespaces, with its own telling argument in its place
// ("MeanOps<...>" for "ReduceOp<c10::BFloat16, at::native::MeanOps<...>,
// unsigned int, ...>") or, short, its type arguments ("FillFunctor<int>").
std::string telling_part(std::string_view arg) {
  size_t lambda = outer_lambda(arg);
  if (lambda != std::string_view::npos) return lambda_home(arg.substr(0, lambda));
  size_t open = template_open(arg);
  std::string_view name = last_component(arg);
  if (open == std::string_view::npos) return std::string(name);
  std::vector<std::string_view> args = arguments(arg, open);
  std::string_view inner = telling_argument(args);
  if (!inner.empty()) return telling_part(inner);
  // Its types (FillFunctor<int> is not FillFunctor<float>); numbers seldom tell.
  std::string kept;
  for (std::string_view a : args) {
    if (!is_literal(a)) kept += (kept.empty() ? "" : ", ") + std::string(last_component(a));
  }
  if (kept.empty()) return std::string(name);
  return std::string(name) + "<" + (kept.size() <= kInnerArgumentsKept ? kept : "...") + ">";
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
      std::string_view telling = telling_argument(arguments(name, i));
      out += "<" + (telling.empty() ? std::string("...") : telling_part(telling)) + ">";
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

std::string short_kernel_name_cell(std::string_view name) { return short_kernel_name(name, 100); }

}  // namespace apptracer::trace
