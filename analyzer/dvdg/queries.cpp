#include "analyzer/dvdg/queries.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "apptracer/saturating.h"
#include "analyzer/dvdg/labels.h"
#include "apptracer/text_escape.h"

namespace apptracer::dvdg {

namespace {

std::optional<int64_t> parse_integer(const std::string& text, int base) {
  if (text.empty()) return std::nullopt;
  try {
    size_t used = 0;
    int64_t number = static_cast<int64_t>(std::stoull(text, &used, base));
    if (used == text.size()) return number;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The latest value of a location holding `offset` (any of its values when
// nothing is given).
uint32_t latest_value(const Graph& graph, uint32_t location, std::optional<int64_t> offset) {
  std::optional<uint32_t> latest;
  for (uint32_t value = 0; value < graph.values.size(); ++value) {
    const Value& record = graph.values[value];
    if (record.location != location) continue;
    if (offset && (*offset < record.offset ||
                   *offset >= saturating_add(record.offset, std::max<int64_t>(record.bytes, 1)))) {
      continue;
    }
    latest = value;
  }
  if (!latest) throw std::runtime_error("no operation touched " + location_name(graph, location));
  return *latest;
}

// Finer regions first: unknown regions, then allocations, then sub-allocations.
int fineness(const Location& where) {
  return where.sub_allocation_id ? 2 : where.alloc_id ? 1 : 0;
}

std::string op_line(const Graph& graph, uint32_t op) {
  const Op& record = graph.ops[op];
  std::string name =
      record.kind == OpKind::Kernel ? "kernel " + op_name(graph, op) : op_name(graph, op);
  std::string line = "op " + std::to_string(int64_t{op} + 1) + ": " + name + " at " +
                     std::to_string(graph.origin.since(record.start_ns)) + " ns";
  if (record.stream) line += " (stream " + std::to_string(*record.stream) + ")";
  return terminal_text(line);
}

std::string value_line(const Graph& graph, uint32_t value) {
  return terminal_text(value_label(graph, value, ", "));
}

}  // namespace

std::optional<int64_t> parse_address(const std::string& text) {
  if (text.rfind("0x", 0) != 0 && text.rfind("0X", 0) != 0) return std::nullopt;
  return parse_integer(text.substr(2), 16);
}

std::optional<uint32_t> location_containing(const Graph& graph, int64_t address) {
  std::optional<uint32_t> found;
  for (uint32_t i = 0; i < graph.locations.size(); ++i) {
    const Location& where = graph.locations[i];
    if (address < where.address ||
        address >= saturating_add(where.address, std::max<int64_t>(where.bytes, 1))) {
      continue;
    }
    if (!found) {
      found = i;
      continue;
    }
    // Ids grow in allocation order, so a larger one is a later reuse.
    const Location& best = graph.locations[*found];
    auto id = [](const Location& l) { return l.sub_allocation_id.value_or(l.alloc_id.value_or(0)); };
    if (fineness(where) > fineness(best) ||
        (fineness(where) == fineness(best) && id(where) > id(best))) {
      found = i;
    }
  }
  return found;
}

QueryTarget resolve_target(const Graph& graph, const std::string& text) {
  QueryTarget target;
  if (text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0) {
    std::optional<int64_t> address = parse_address(text);
    if (!address) throw std::runtime_error("'" + text + "' is not an address");
    std::optional<uint32_t> location = location_containing(graph, *address);
    if (!location) throw std::runtime_error("no allocation or copied region contains " + text);
    target.location = *location;
    target.address = address;
    return target;
  }
  if (!text.empty() && (text[0] == 's' || text[0] == 'S')) {
    std::optional<int64_t> id = parse_integer(text.substr(1), 10);
    for (uint32_t i = 0; id && i < graph.locations.size(); ++i) {
      if (graph.locations[i].sub_allocation_id == id) {
        target.location = i;
        return target;
      }
    }
    throw std::runtime_error("no sub-allocation '" + text +
                             "' in the graph (sub-allocations are sN, N a sub_allocations.id)");
  }
  std::string digits = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
  std::optional<int64_t> id = parse_integer(digits, 10);
  if (graph.values.empty()) {
    throw std::runtime_error("no value '" + text + "': the graph has no values (no operation "
                             "read or wrote memory)");
  }
  if (!id || *id < 1 || *id > static_cast<int64_t>(graph.values.size())) {
    throw std::runtime_error("no value '" + text + "' (values are v1..v" +
                             std::to_string(graph.values.size()) +
                             ", sub-allocations sN, or give an address as 0x...)");
  }
  target.value = static_cast<uint32_t>(*id - 1);
  target.location = graph.values[*target.value].location;
  return target;
}

uint32_t resolve_value(const Graph& graph, const std::string& text) {
  QueryTarget target = resolve_target(graph, text);
  if (target.value) return *target.value;
  std::optional<int64_t> offset;
  if (target.address) offset = saturating_sub(*target.address, graph.locations[target.location].address);
  return latest_value(graph, target.location, offset);
}

void print_why(const Graph& graph, uint32_t value, std::ostream& out) {
  out << value_line(graph, value) << "\n";
  // Walk producers backwards: the incoming edges of a value are the edges of
  // the op that wrote it whose destination is that value.
  std::map<uint32_t, std::vector<Edge>> ops_to_edges;
  std::set<uint32_t> visited = {value};
  std::vector<uint32_t> pending = {value};
  while (!pending.empty()) {
    uint32_t current = pending.back();
    pending.pop_back();
    uint32_t producer = graph.values[current].producer_op;
    if (producer == Value::kNoOp || is_lifetime_op(graph.ops[producer].kind)) continue;
    auto& edges = ops_to_edges[producer];
    // Not each of the op's dependences: one with an access set has many.
    graph.for_each_edge_into(producer, current, [&](const Edge& edge) {
      edges.push_back(edge);
      if (visited.insert(edge.src_value).second) pending.push_back(edge.src_value);
    });
  }
  if (ops_to_edges.empty()) {
    const Value& record = graph.values[value];
    if (record.producer_op != Value::kNoOp &&
        !is_lifetime_op(graph.ops[record.producer_op].kind)) {
      out << "written by " << op_line(graph, record.producer_op) << " from no other value\n";
    } else {
      out << "never written: "
          << (record.holds_data ? "as the program left it in host memory"
                                : "uninitialized device memory")
          << "\n";
    }
    return;
  }
  out << "produced by " << ops_to_edges.size() << " operation(s), in program order:\n";
  for (auto& [op, edges] : ops_to_edges) {
    out << "  " << op_line(graph, op) << "\n";
    std::set<uint32_t> written;
    for (const Edge& edge : edges) {
      written.insert(edge.dst_value);
      const char* verb = edge.kind == EdgeKind::Carry       ? "keeps "
                         : edge.kind == EdgeKind::Migration ? "moves "
                                                            : "reads ";
      out << "    " << verb << value_line(graph, edge.src_value);
      if (edge.uninitialized_read) out << "  <- UNINITIALIZED";
      out << "\n";
    }
    for (uint32_t dst : written) out << "    writes " << value_line(graph, dst) << "\n";
  }
}

void print_consumers(const Graph& graph, uint32_t value, std::ostream& out) {
  out << value_line(graph, value) << "\n";
  // Each op that read it, with what that op wrote.
  std::map<uint32_t, std::set<uint32_t>> readers;
  for (uint32_t op = 0; op + 1 < graph.op_reads_begin.size(); ++op) {
    auto begin = graph.op_reads.begin() + graph.op_reads_begin[op];
    auto end = graph.op_reads.begin() + graph.op_reads_begin[op + 1];
    if (std::find(begin, end, value) == end) continue;
    std::set<uint32_t>& written = readers[op];
    for (uint32_t i = graph.op_writes_begin[op]; i < graph.op_writes_begin[op + 1]; ++i)
      written.insert(graph.op_writes[i]);
  }
  if (readers.empty()) {
    out << "read by no operation\n";
  } else {
    out << "read by " << readers.size() << " operation(s), in program order:\n";
    for (const auto& [op, written] : readers) {
      out << "  " << op_line(graph, op) << "\n";
      for (uint32_t dst : written) out << "    writes " << value_line(graph, dst) << "\n";
    }
  }
  uint32_t freed = graph.values[value].freed_by_op;
  if (freed != Value::kNoOp) out << "freed by " << op_line(graph, freed) << "\n";
}

void print_lifetime(const Graph& graph, uint32_t location, std::ostream& out) {
  const Location& where = graph.locations[location];
  out << terminal_text(location_name(graph, location)) << ", " << hex_address(where.address) << ", "
      << format_bytes(where.bytes) << "\n";
  // (op, line) in program order; an op that read several of its values once.
  std::map<uint32_t, std::vector<std::string>> events;
  auto add = [&](uint32_t op, const std::string& what) {
    std::vector<std::string>& lines = events[op];
    if (std::find(lines.begin(), lines.end(), what) == lines.end()) lines.push_back(what);
  };
  std::optional<uint32_t> freed;
  // A sub-allocation's life starts and ends outside any op.
  if (where.sub_allocation_id)
    out << "  allocated   at " << graph.origin.since(where.alloc_ns) << " ns\n";
  for (uint32_t value = 0; value < graph.values.size(); ++value) {
    const Value& record = graph.values[value];
    if (record.location != location) continue;
    if (record.freed_by_op != Value::kNoOp) freed = record.freed_by_op;
    if (record.producer_op == Value::kNoOp) continue;
    OpKind kind = graph.ops[record.producer_op].kind;
    if (is_lifetime_op(kind)) {
      add(record.producer_op, "allocated   " + op_line(graph, record.producer_op));
    } else if (record.version == 0) {
      add(record.producer_op, "first used  " + op_line(graph, record.producer_op));
    } else {
      add(record.producer_op, std::string(kind == OpKind::Migration ? "moved       "
                                                                      : "written     ") +
                                  op_line(graph, record.producer_op) + " -> " +
                                  value_line(graph, value));
    }
  }
  for (uint32_t op = 0; op + 1 < graph.op_reads_begin.size(); ++op) {
    for (uint32_t i = graph.op_reads_begin[op]; i < graph.op_reads_begin[op + 1]; ++i) {
      uint32_t value = graph.op_reads[i];
      if (graph.values[value].location != location) continue;
      add(op, "read        " + op_line(graph, op) + " <- " + value_ref(value) +
                  (graph.values[value].read_uninitialized ? " UNINITIALIZED" : ""));
    }
  }
  if (freed) add(*freed, "freed       " + op_line(graph, *freed));
  for (const auto& [op, lines] : events) {
    for (const std::string& line : lines) out << "  " << line << "\n";
  }
  if (where.free_ns) {
    out << "  freed       at " << graph.origin.since(*where.free_ns) << " ns\n";
  } else if (!freed) {
    out << "  not freed before the trace ended\n";
  }
}

}  // namespace apptracer::dvdg
