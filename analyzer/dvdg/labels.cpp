#include "labels.h"

#include <cinttypes>
#include <cstdio>

namespace apptracer::dvdg {

std::string hex_address(int64_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%" PRIx64, static_cast<uint64_t>(address));
  return text;
}

std::string format_bytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double amount = static_cast<double>(bytes);
  int unit = 0;
  while (amount >= 1024 && unit < 4) {
    amount /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0 || amount == static_cast<double>(static_cast<int64_t>(amount))) {
    std::snprintf(text, sizeof text, "%" PRId64 " %s", static_cast<int64_t>(amount), kUnits[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", amount, kUnits[unit]);
  }
  return text;
}

std::string op_name(const Graph& graph, uint32_t op) {
  const Op& record = graph.ops[op];
  switch (record.kind) {
    case OpKind::Copy: return std::string(to_string(record.copy_kind)) + " copy";
    case OpKind::Kernel: {
      auto found = graph.names.find(record.name_id);
      if (found != graph.names.end() && !found->second.empty()) return found->second;
      return "kernel";
    }
    default: return std::string(to_string(record.kind));
  }
}

std::string location_name(const Graph& graph, uint32_t location) {
  const Location& where = graph.locations[location];
  std::string name = where.alloc_id ? "alloc #" + std::to_string(*where.alloc_id) + " "
                                    : std::string("region of ");
  name += where.alloc_kind ? to_string(*where.alloc_kind) : to_string(where.memory);
  if (!where.alloc_kind) name += " memory";
  if (where.device) name += " (device " + std::to_string(*where.device) + ")";
  return name;
}

std::string value_ref(uint32_t value) { return "v" + std::to_string(int64_t{value} + 1); }

std::string value_label(const Graph& graph, uint32_t value, const char* line_break) {
  const Value& record = graph.values[value];
  const Location& where = graph.locations[record.location];
  std::string label = value_ref(value) + ": " + location_name(graph, record.location);
  label += line_break + hex_address(where.address) + ", " + format_bytes(where.bytes);
  label += line_break + std::string("version ") + std::to_string(record.version);
  if (record.read_uninitialized) label += " (read uninitialized)";
  if (record.freed_by_op != Value::kNoOp) label += " (freed)";
  return label;
}

}  // namespace apptracer::dvdg
