#include "analyzer/whatif/peer_relays.h"

#include "apptracer/saturating.h"
#include "analyzer/dvdg/labels.h"
#include "analyzer/whatif/op_index.h"

namespace apptracer::whatif {

namespace {

using model::HostMemory;
using model::LinkKind;
using model::LinkPath;

constexpr uint32_t kNoReader = UINT32_MAX;
constexpr uint32_t kManyReaders = UINT32_MAX - 1;

// Per value: the one graph op that read it, kNoReader or kManyReaders.
std::vector<uint32_t> sole_readers(const dvdg::Graph& graph) {
  std::vector<uint32_t> reader(graph.values.size(), kNoReader);
  for (uint32_t g = 0; g < graph.ops.size(); ++g) {
    for (uint32_t r = graph.op_reads_begin[g]; r < graph.op_reads_begin[g + 1]; ++r) {
      uint32_t& sole = reader[graph.op_reads[r]];
      sole = sole == kNoReader ? g : kManyReaders;  // an op lists a value it read once
    }
  }
  return reader;
}

bool is_copy(const dvdg::Op& op, CopyKind kind) { return op.kind == OpKind::Copy && op.copy_kind == kind; }

// The DtoH (graph op) that wrote everything HtoD `htod` read, when one did
// and nothing else read what it wrote.
std::optional<uint32_t> relay_source(const dvdg::Graph& graph, uint32_t htod, const std::vector<uint32_t>& reader) {
  uint32_t begin = graph.op_reads_begin[htod], end = graph.op_reads_begin[htod + 1];
  if (begin == end) return std::nullopt;
  uint32_t source = graph.values[graph.op_reads[begin]].producer_op;
  if (source == dvdg::Value::kNoOp || !is_copy(graph.ops[source], CopyKind::DtoH)) return std::nullopt;
  for (uint32_t r = begin; r < end; ++r) {
    if (graph.values[graph.op_reads[r]].producer_op != source) return std::nullopt;
  }
  for (uint32_t w = graph.op_writes_begin[source]; w < graph.op_writes_begin[source + 1]; ++w) {
    if (reader[graph.op_writes[w]] != htod) return std::nullopt;
  }
  return source;
}

// Whether the system prices a peer copy over `path`, directly or staged.
bool priced(const model::SystemModel& system, LinkPath path) {
  if (system.resolve(path).path) return true;
  path.kind = LinkKind::PeerStaged;
  return system.resolve(path).path != nullptr;
}

}  // namespace

PeerRelayPlan plan_peer_relays(const ReplayInput& input, const dvdg::Graph& graph,
                               const model::SystemModel& system) {
  PeerRelayPlan plan;
  plan.peer_path.resize(input.ops.size());
  plan.relayed_by.assign(input.ops.size(), -1);
  OpIndex index(input);
  std::vector<uint32_t> reader = sole_readers(graph);
  for (uint32_t g = 0; g < graph.ops.size(); ++g) {
    if (!is_copy(graph.ops[g], CopyKind::HtoD)) continue;
    std::optional<uint32_t> source = relay_source(graph, g, reader);
    if (!source) continue;
    std::optional<uint32_t> to = index.find(graph.ops[g]);
    std::optional<uint32_t> from = index.find(graph.ops[*source]);
    if (!to || !from) continue;
    const ReplayOp& htod = input.ops[*to];
    const ReplayOp& dtoh = input.ops[*from];
    if (!dtoh.src_device || !htod.dst_device || *dtoh.src_device == *htod.dst_device || dtoh.bytes != htod.bytes) {
      continue;
    }
    LinkPath peer{LinkKind::PeerDirect, HostMemory::None, -1, static_cast<int>(*dtoh.src_device),
                  static_cast<int>(*htod.dst_device)};
    if (!priced(system, peer)) {
      ++plan.unpriced;
      plan.unpriced_pairs.emplace(peer.device, peer.peer);
      continue;
    }
    plan.peer_path[*from] = peer;
    plan.relayed_by[*to] = static_cast<int32_t>(*from);
    ++plan.relays;
    plan.bytes = saturating_add(plan.bytes, htod.bytes);
  }
  return plan;
}

void apply_peer_relays(const PeerRelayPlan& plan, const ReplayInput& input, GraphOptions& options) {
  options.data.resize(input.ops.size());
  options.blocking.resize(input.ops.size(), false);
  for (uint32_t i = 0; i < input.ops.size(); ++i) {
    int32_t from = plan.relayed_by[i];
    if (from < 0) continue;
    options.data[i].push_back(static_cast<uint32_t>(from));
    // Not staged by the host any more: a call waits only where its copy was synchronous.
    options.blocking[i] = !input.ops[i].is_async;
    options.blocking[from] = !input.ops[from].is_async;
  }
}

void add_peer_relay_notes(const PeerRelayPlan& plan, const std::string& system, std::vector<std::string>& notes) {
  if (plan.relays == 0 && plan.unpriced == 0) {
    notes.push_back("--peer-copies: no data went from one GPU to another through host memory in this trace "
                    "(a copy to the host whose bytes a copy to another GPU took on, and nothing else read)");
    return;
  }
  if (plan.relays > 0) {
    notes.push_back("--peer-copies: " + std::to_string(plan.relays) + " relay(s) through host memory (" +
                    dvdg::format_bytes(plan.bytes) + ") became peer copies; their copies to the GPU take no time");
  }
  if (plan.unpriced > 0) {
    std::string pairs;
    for (const auto& [from, to] : plan.unpriced_pairs) {
      pairs += (pairs.empty() ? "" : ", ") + ("GPU " + std::to_string(from) + " to " + std::to_string(to));
    }
    notes.push_back("--peer-copies: " + std::to_string(plan.unpriced) + " relay(s) kept as recorded: " + system +
                    " has no PtoP path from " + pairs);
  }
}

}  // namespace apptracer::whatif
