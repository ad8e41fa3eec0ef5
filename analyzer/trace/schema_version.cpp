#include "analyzer/trace/schema_version.h"

#include <cctype>

#include "analyzer/trace/trace_file.h"

namespace apptracer {

std::optional<int> parse_version(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty() || text.size() > 6) return std::nullopt;
  int number = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    number = number * 10 + (c - '0');
  }
  return number;
}

std::optional<int> trace_schema_version(Database& db) {
  return parse_version(trace_meta(db, "schema_version"));
}

}  // namespace apptracer
