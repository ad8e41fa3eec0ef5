#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>

#include <stdexcept>

#include "apptracer/saturating.h"
#include "dvdg.pb.h"
#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/labels.h"

namespace apptracer::dvdg {

namespace {

proto::Op::Kind proto_kind(OpKind kind) {
  switch (kind) {
    case OpKind::Allocation: return proto::Op::ALLOCATION;
    case OpKind::Free: return proto::Op::FREE;
    case OpKind::Copy: return proto::Op::COPY;
    case OpKind::Memset: return proto::Op::MEMSET;
    case OpKind::Kernel: return proto::Op::KERNEL;
    case OpKind::Migration: return proto::Op::MIGRATION;
    case OpKind::HostPhase: return proto::Op::HOST_PHASE;
    case OpKind::Collective: return proto::Op::COLLECTIVE;
    case OpKind::Message: return proto::Op::MESSAGE;
    // Never a graph's ops: a prefetch becomes the migrations it made, and
    // events only order the streams.
    case OpKind::Prefetch:
    case OpKind::EventRecord:
    case OpKind::EventWait: break;
  }
  return proto::Op::KIND_UNSPECIFIED;
}

proto::Edge::Kind proto_kind(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::Data: return proto::Edge::DATA;
    case EdgeKind::Carry: return proto::Edge::CARRY;
    case EdgeKind::Migration: return proto::Edge::MIGRATION;
  }
  return proto::Edge::KIND_UNSPECIFIED;
}

// Writes one element of a repeated message field of Graph. A Graph is just
// its fields one after another on the wire, so writing elements one by one
// gives the same bytes as serializing a whole Graph, without holding a
// million-edge message in memory.
template <typename Message>
void write_element(google::protobuf::io::CodedOutputStream& out, int field,
                   const Message& element) {
  using google::protobuf::internal::WireFormatLite;
  out.WriteTag(WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
  out.WriteVarint32(static_cast<uint32_t>(element.ByteSizeLong()));
  element.SerializeWithCachedSizes(&out);
}

}  // namespace

void write_proto(const Graph& graph, const GraphView& view, std::ostream& out) {
  google::protobuf::io::OstreamOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  for (uint32_t value : view.values) {
    const Value& record = graph.values[value];
    const Location& where = graph.locations[record.location];
    proto::Value item;
    item.set_id(uint64_t{value} + 1);
    if (where.alloc_id) item.set_alloc_id(*where.alloc_id);
    if (where.sub_allocation_id) item.set_sub_allocation_id(*where.sub_allocation_id);
    item.set_region_offset(static_cast<uint64_t>(record.offset));
    item.set_address(static_cast<uint64_t>(saturating_add(where.address, record.offset)));
    item.set_bytes(static_cast<uint64_t>(record.bytes));
    if (where.device) item.set_device(*where.device);
    item.set_memory(std::string(to_string(where.memory)));
    item.set_version(record.version);
    item.set_exchanged(where.exchanged);
    if (record.producer_op != Value::kNoOp)
      item.set_producer_op_id(uint64_t{record.producer_op} + 1);
    if (record.freed_by_op != Value::kNoOp)
      item.set_freed_by_op_id(uint64_t{record.freed_by_op} + 1);
    item.set_freed(record.freed);
    item.set_holds_data(record.holds_data);
    item.set_read_uninitialized(record.read_uninitialized);
    item.set_label(value_label(graph, value, "\n"));
    if (int16_t residency = graph.residency(value); residency != kNoResidency) item.set_location(residency);
    write_element(coded, proto::Graph::kValuesFieldNumber, item);
  }
  for (uint32_t op : view.ops) {
    const Op& record = graph.ops[op];
    proto::Op item;
    item.set_id(uint64_t{op} + 1);
    item.set_kind(proto_kind(record.kind));
    item.set_name(view_op_name(graph, view, op));
    item.set_source_id(static_cast<uint64_t>(record.source_id));
    if (record.device) item.set_device(*record.device);
    if (record.stream) item.set_stream(*record.stream);
    item.set_issue_ns(record.issue_ns);
    item.set_start_ns(record.start_ns);
    item.set_end_ns(record.end_ns);
    item.set_bytes(static_cast<uint64_t>(record.bytes));
    item.set_repeats(view.repeats[op]);
    item.set_reads_uninitialized(record.reads_uninitialized);
    item.set_arguments_unknown(record.arguments_unknown);
    if (record.kind == OpKind::Migration) {
      item.set_from_location(record.from);
      item.set_to_location(record.to);
      item.set_migration_cause(
          std::string(to_string(static_cast<UmMigrationCause>(record.migration_cause))));
      if (record.caused_by != Op::kNoOp) item.set_cause_op_id(uint64_t{record.caused_by} + 1);
    }
    if (record.kind == OpKind::Collective || record.kind == OpKind::Message) {
      item.set_collective_kind(std::string(to_string(record.collective_kind)));
      item.set_ranks_missing(record.ranks_missing);
    }
    if (record.runs_collective != Op::kNoOp)
      item.set_collective_op_id(uint64_t{record.runs_collective} + 1);
    write_element(coded, proto::Graph::kOpsFieldNumber, item);
  }
  for (const ViewEdge& shown : view.edges) {
    const Edge& edge = shown.edge;
    proto::Edge item;
    if (shown.src_value == kAccessSet) item.set_src_is_access_set(true);
    else item.set_src_value_id(uint64_t{shown.src_value} + 1);
    if (shown.dst_value == kAccessSet) item.set_dst_is_access_set(true);
    else item.set_dst_value_id(uint64_t{shown.dst_value} + 1);
    item.set_op_id(uint64_t{edge.op} + 1);
    item.set_kind(proto_kind(edge.kind));
    if (edge.bytes >= 0) item.set_bytes(static_cast<uint64_t>(edge.bytes));
    item.set_uninitialized_read(edge.uninitialized_read);
    write_element(coded, proto::Graph::kEdgesFieldNumber, item);
  }
  for (uint32_t op : view.access_sets) {
    proto::AccessSet item;
    item.set_op_id(uint64_t{op} + 1);
    uint64_t reads = 0;
    for (uint32_t r = graph.op_reads_begin[op]; r < graph.op_reads_begin[op + 1]; ++r)
      reads += graph.op_reads_in_set[r];
    item.set_possible_reads(reads);
    item.set_writes(graph.op_writes_begin[op + 1] - graph.op_writes_begin[op]);
    item.set_label(access_set_label(graph, op, "\n"));
    write_element(coded, proto::Graph::kAccessSetsFieldNumber, item);
  }
  coded.Trim();
  if (coded.HadError()) throw std::runtime_error("cannot write the protobuf graph");
}

}  // namespace apptracer::dvdg
