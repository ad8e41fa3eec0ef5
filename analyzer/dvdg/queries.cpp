#include "queries.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "labels.h"

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

uint32_t latest_value(const Graph& graph, uint32_t location) {
  std::optional<uint32_t> latest;
  for (uint32_t value = 0; value < graph.values.size(); ++value) {
    if (graph.values[value].location == location) latest = value;
  }
  if (!latest) throw std::runtime_error("no operation touched " + location_name(graph, location));
  return *latest;
}

std::string op_line(const Graph& graph, uint32_t op) {
  const Op& record = graph.ops[op];
  std::string name =
      record.kind == OpKind::Kernel ? "kernel " + op_name(graph, op) : op_name(graph, op);
  std::string line = "op " + std::to_string(int64_t{op} + 1) + ": " + name + " at " +
                     std::to_string(record.start_ns) + " ns";
  if (record.stream) line += " (stream " + std::to_string(*record.stream) + ")";
  return line;
}

std::string value_line(const Graph& graph, uint32_t value) {
  return value_label(graph, value, ", ");
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
    if (address < where.address || address >= where.address + std::max<int64_t>(where.bytes, 1))
      continue;
    // Allocations are read in id order, so a later one is a later reuse.
    if (!found || (where.alloc_id && graph.locations[*found].alloc_id &&
                   *where.alloc_id > *graph.locations[*found].alloc_id)) {
      found = i;
    }
  }
  return found;
}

uint32_t resolve_value(const Graph& graph, const std::string& text) {
  if (text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0) {
    std::optional<int64_t> address = parse_address(text);
    if (!address) throw std::runtime_error("'" + text + "' is not an address");
    std::optional<uint32_t> location = location_containing(graph, *address);
    if (!location) throw std::runtime_error("no allocation or copied region contains " + text);
    return latest_value(graph, *location);
  }
  std::string digits = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
  std::optional<int64_t> id = parse_integer(digits, 10);
  if (!id || *id < 1 || *id > static_cast<int64_t>(graph.values.size())) {
    throw std::runtime_error("no value '" + text + "' (values are v1..v" +
                             std::to_string(graph.values.size()) +
                             ", or give an address as 0x...)");
  }
  return static_cast<uint32_t>(*id - 1);
}

void print_why(const Graph& graph, uint32_t value, std::ostream& out) {
  out << value_line(graph, value) << "\n";
  // Walk producers backwards: the incoming edges of a value are the edges of
  // the op that wrote it whose destination is that value.
  std::map<uint32_t, std::vector<uint32_t>> ops_to_edges;
  std::set<uint32_t> visited = {value};
  std::vector<uint32_t> pending = {value};
  while (!pending.empty()) {
    uint32_t current = pending.back();
    pending.pop_back();
    uint32_t producer = graph.values[current].producer_op;
    if (producer == Value::kNoOp || graph.ops[producer].kind == OpKind::Allocation) continue;
    auto& edges = ops_to_edges[producer];
    for (uint32_t e = graph.op_edges[producer]; e < graph.op_edges[producer + 1]; ++e) {
      if (graph.edges[e].dst_value != current) continue;
      edges.push_back(e);
      if (visited.insert(graph.edges[e].src_value).second)
        pending.push_back(graph.edges[e].src_value);
    }
  }
  if (ops_to_edges.empty()) {
    const Value& record = graph.values[value];
    if (record.producer_op != Value::kNoOp &&
        graph.ops[record.producer_op].kind != OpKind::Allocation) {
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
    for (uint32_t e : edges) {
      const Edge& edge = graph.edges[e];
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
  std::map<uint32_t, std::set<uint32_t>> readers;
  for (const Edge& edge : graph.edges) {
    if (edge.src_value == value) readers[edge.op].insert(edge.dst_value);
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

}  // namespace apptracer::dvdg
