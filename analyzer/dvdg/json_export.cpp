#include <charconv>
#include <string_view>

#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/labels.h"
#include "apptracer/text_escape.h"

namespace apptracer::dvdg {

namespace {

// A JSON writer for flat objects, streamed: a million-edge graph is hundreds
// of megabytes of JSON, too much to build as one document in memory.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) { buffer_.reserve(kFlushBytes + 4096); }
  ~JsonWriter() { flush(); }

  void raw(std::string_view text) {
    buffer_ += text;
    if (buffer_.size() >= kFlushBytes) flush();
  }

  void begin_object() {
    buffer_ += '{';
    first_field_ = true;
  }
  void end_object() { buffer_ += '}'; }

  void field(std::string_view name, int64_t value) {
    key(name);
    char digits[24];
    auto result = std::to_chars(digits, digits + sizeof digits, value);
    buffer_.append(digits, result.ptr);
  }
  void field(std::string_view name, bool value) {
    key(name);
    buffer_ += value ? "true" : "false";
  }
  void field(std::string_view name, std::string_view value) {
    key(name);
    string(value);
  }
  void optional_field(std::string_view name, bool present, int64_t value) {
    if (present) {
      field(name, value);
    } else {
      key(name);
      buffer_ += "null";
    }
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  void key(std::string_view name) {
    if (!first_field_) buffer_ += ',';
    first_field_ = false;
    string(name);
    buffer_ += ':';
  }

  // JSON text is UTF-8: a byte of a name that is not becomes U+FFFD.
  void string(std::string_view text) {
    buffer_ += '"';
    for (char c : valid_utf8(text)) {
      switch (c) {
        case '"': buffer_ += "\\\""; break;
        case '\\': buffer_ += "\\\\"; break;
        case '\n': buffer_ += "\\n"; break;
        case '\t': buffer_ += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            static const char kHex[] = "0123456789abcdef";
            buffer_ += "\\u00";
            buffer_ += kHex[(c >> 4) & 0xf];
            buffer_ += kHex[c & 0xf];
          } else {
            buffer_ += c;
          }
      }
    }
    buffer_ += '"';
  }

  std::ostream& out_;
  std::string buffer_;
  bool first_field_ = true;
};

int64_t op_id(uint32_t op) { return int64_t{op} + 1; }

}  // namespace

// {"values": [...], "ops": [...], "edges": [...], "access_sets": [...] (when there are any)},
// one object per line.
void write_json(const Graph& graph, const GraphView& view, std::ostream& out) {
  JsonWriter json(out);
  json.raw("{\"values\": [");
  const char* separator = "\n";
  for (uint32_t value : view.values) {
    const Value& record = graph.values[value];
    const Location& where = graph.locations[record.location];
    json.raw(separator);
    json.begin_object();
    json.field("id", int64_t{value} + 1);
    json.field("ref", value_ref(value));
    json.field("label", value_label(graph, value, ", "));
    json.optional_field("alloc_id", where.alloc_id.has_value(), where.alloc_id.value_or(0));
    json.optional_field("sub_allocation_id", where.sub_allocation_id.has_value(),
                        where.sub_allocation_id.value_or(0));
    json.field("address", where.address + record.offset);
    json.field("bytes", record.bytes);
    json.field("region_offset", record.offset);
    json.optional_field("device", where.device.has_value(), where.device.value_or(0));
    json.field("memory", to_string(where.memory));
    json.field("version", int64_t{record.version});
    json.optional_field("producer_op", record.producer_op != Value::kNoOp,
                        op_id(record.producer_op));
    json.optional_field("freed_by_op", record.freed_by_op != Value::kNoOp,
                        op_id(record.freed_by_op));
    json.field("freed", record.freed);
    json.field("holds_data", record.holds_data);
    json.field("read_uninitialized", record.read_uninitialized);
    int16_t residency = graph.residency(value);
    json.optional_field("location", residency != kNoResidency, residency);
    if (where.exchanged) json.field("exchanged", true);
    json.end_object();
    separator = ",\n";
  }
  json.raw("\n],\n\"ops\": [");
  separator = "\n";
  for (uint32_t op : view.ops) {
    const Op& record = graph.ops[op];
    json.raw(separator);
    json.begin_object();
    json.field("id", op_id(op));
    json.field("kind", to_string(record.kind));
    if (record.kind == OpKind::Copy) json.field("copy_kind", to_string(record.copy_kind));
    json.field("name", view_op_name(graph, view, op));
    json.field("source_id", record.source_id);
    json.optional_field("device", record.device.has_value(), record.device.value_or(0));
    json.optional_field("stream", record.stream.has_value(), record.stream.value_or(0));
    json.field("issue_ns", record.issue_ns);
    json.field("start_ns", record.start_ns);
    json.field("end_ns", record.end_ns);
    json.field("bytes", record.bytes);
    json.field("repeats", int64_t{view.repeats[op]});
    json.field("reads_uninitialized", record.reads_uninitialized);
    json.field("arguments_unknown", record.arguments_unknown);
    if (record.kind == OpKind::Migration) {
      json.field("from_location", int64_t{record.from});
      json.field("to_location", int64_t{record.to});
      json.field("migration_cause",
                 to_string(static_cast<UmMigrationCause>(record.migration_cause)));
      json.optional_field("cause_op", record.caused_by != Op::kNoOp, op_id(record.caused_by));
    }
    if (record.kind == OpKind::Collective || record.kind == OpKind::Message) {
      json.field("collective_kind", to_string(record.collective_kind));
      json.field("ranks_missing", int64_t{record.ranks_missing});
    }
    json.optional_field("collective_op", record.runs_collective != Op::kNoOp,
                        op_id(record.runs_collective));
    json.end_object();
    separator = ",\n";
  }
  json.raw("\n],\n\"edges\": [");
  separator = "\n";
  for (const ViewEdge& shown : view.edges) {
    const Edge& edge = shown.edge;
    json.raw(separator);
    json.begin_object();
    // An end that is the op's access set is null, and named beside it.
    json.optional_field("src", shown.src_value != kAccessSet, int64_t{shown.src_value} + 1);
    json.optional_field("dst", shown.dst_value != kAccessSet, int64_t{shown.dst_value} + 1);
    if (shown.src_value == kAccessSet) json.field("src_access_set", op_id(edge.op));
    if (shown.dst_value == kAccessSet) json.field("dst_access_set", op_id(edge.op));
    json.field("op", op_id(edge.op));
    json.field("kind", to_string(edge.kind));
    json.optional_field("bytes", edge.bytes >= 0, edge.bytes);
    json.field("uninitialized_read", edge.uninitialized_read);
    json.end_object();
    separator = ",\n";
  }
  json.raw("\n]");
  // Only a graph that has them lists them: one without reads as before they were.
  if (!view.access_sets.empty()) {
    json.raw(",\n\"access_sets\": [");
    separator = "\n";
    for (uint32_t op : view.access_sets) {
      json.raw(separator);
      json.begin_object();
      json.field("id", op_id(op));
      json.field("ref", access_set_ref(op));
      json.field("label", access_set_label(graph, op, ", "));
      json.end_object();
      separator = ",\n";
    }
    json.raw("\n]");
  }
  json.raw("}\n");
}

}  // namespace apptracer::dvdg
