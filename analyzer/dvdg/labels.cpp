#include "analyzer/dvdg/labels.h"

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

std::string residency_name(int64_t residency) {
  return residency == kHostResidency ? "host" : "device " + std::to_string(residency);
}

std::string op_name(const Graph& graph, uint32_t op) {
  const Op& record = graph.ops[op];
  switch (record.kind) {
    case OpKind::Migration:
      // A migration no other op caused is a prefetch's.
      return std::string(record.caused_by == Op::kNoOp ? "prefetch " : "migration ") +
             residency_name(record.from) + " -> " + residency_name(record.to);
    case OpKind::Copy: return std::string(to_string(record.copy_kind)) + " copy";
    case OpKind::Kernel: {
      auto found = graph.names.find(record.name_id);
      if (found != graph.names.end() && !found->second.empty()) return found->second;
      return "kernel";
    }
    case OpKind::Collective: {
      std::string name(to_string(record.collective_kind));
      if (record.ranks_missing == 0) return name;
      return name + " (" + std::to_string(record.ranks_missing) +
             (record.ranks_missing == 1 ? " rank" : " ranks") + " not in the trace)";
    }
    case OpKind::Message:
      if (record.ranks_missing == 0) return "Send/Recv";
      return record.collective_kind == CollectiveKind::Send ? "Send (receiver not in the trace)"
                                                            : "Recv (sender not in the trace)";
    default: return std::string(to_string(record.kind));
  }
}

std::string migration_detail(const Graph& graph, const Edge& edge) {
  const Op& op = graph.ops[edge.op];
  return format_bytes(edge.bytes) + ", " +
         std::string(to_string(static_cast<UmMigrationCause>(op.migration_cause)));
}

std::string location_name(const Graph& graph, uint32_t location) {
  const Location& where = graph.locations[location];
  std::string name;
  if (where.exchanged) return "data a collective exchanged (no memory)";
  if (where.sub_allocation_id) {
    name = "sub-allocation #" + std::to_string(*where.sub_allocation_id) + " (" +
           std::string(where.allocator ? to_string(*where.allocator) : "framework allocator") +
           ")";
    if (where.alloc_id) name += " of alloc #" + std::to_string(*where.alloc_id);
  } else if (where.alloc_id) {
    name = "alloc #" + std::to_string(*where.alloc_id) + " " +
           std::string(where.alloc_kind ? to_string(*where.alloc_kind) : to_string(where.memory));
  } else if (!is_device_memory(where.memory) && where.memory != MemoryKind::Managed) {
    // No allocation the tracer saw holds it (stack, static data, another
    // allocator's memory, a block below the size threshold): said as such.
    name = "unknown host region";
  } else {
    name = "unknown " + std::string(to_string(where.memory)) + " region";
  }
  if (where.device) name += " (device " + std::to_string(*where.device) + ")";
  return name;
}

std::string value_ref(uint32_t value) { return "v" + std::to_string(int64_t{value} + 1); }

std::string access_set_ref(uint32_t op) { return "a" + std::to_string(int64_t{op} + 1); }

std::string end_ref(uint32_t value, uint32_t op) {
  return value == kAccessSet ? access_set_ref(op) : value_ref(value);
}

std::string access_set_label(const Graph& graph, uint32_t op, const char* line_break) {
  size_t reads = 0;
  for (uint32_t r = graph.op_reads_begin[op]; r < graph.op_reads_begin[op + 1]; ++r)
    reads += graph.op_reads_in_set[r];
  size_t writes = graph.op_writes_begin[op + 1] - graph.op_writes_begin[op];
  return access_set_ref(op) + ": access set of op " + std::to_string(int64_t{op} + 1) + line_break +
         std::to_string(reads) + " possible reads, " + std::to_string(writes) + " writes";
}

std::string value_label(const Graph& graph, uint32_t value, const char* line_break) {
  const Value& record = graph.values[value];
  const Location& where = graph.locations[record.location];
  std::string label = value_ref(value) + ": " + location_name(graph, record.location);
  if (where.exchanged) return label + line_break + format_bytes(record.bytes);
  label += line_break + hex_address(where.address + record.offset) + ", " +
           format_bytes(record.bytes);
  // Part of its region: which part.
  if (record.offset != 0 || record.bytes != where.bytes) {
    label += " (bytes " + std::to_string(record.offset) + ".." +
             std::to_string(record.offset + record.bytes) + " of " + format_bytes(where.bytes) +
             ")";
  }
  label += line_break + std::string("version ") + std::to_string(record.version);
  if (int16_t residency = graph.residency(value); residency != kNoResidency)
    label += " on " + residency_name(residency);
  if (record.read_uninitialized) label += " (read uninitialized)";
  if (record.freed) label += " (freed)";
  return label;
}

}  // namespace apptracer::dvdg
