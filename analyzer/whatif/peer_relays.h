// --peer-copies: data one GPU sends another through host memory (copied
// DtoH into a host buffer, then HtoD from it to the other GPU) sent peer to
// peer instead, as cudaMemcpyPeerAsync does with peer access.
//
// A relay, found from the DVDG (analyzer/dvdg): a DtoH from GPU a and a HtoD
// of as many bytes to GPU b != a, where everything the HtoD read the DtoH
// wrote and nothing else read what the DtoH wrote. In the what-if:
//  * the DtoH is the peer copy a -> b, issued where it was (its call, its
//    stream), priced on PtoP.peer.gpuA.gpuB (PtoP.staged where the system
//    measured no peer access: scenario.cpp), and no longer staged by the
//    host: its call returns at once unless it was a synchronous copy;
//  * the HtoD takes no time and no link, and ends after the peer copy
//    (a data dependency), so what followed it (its stream, events recorded
//    after it, synchronizations that waited for it) follows the peer copy.
// Calls keep their structure: a synchronous copy's call still waits, now for
// the peer copy. Not modeled: what the host did with the staged bytes
// between the two copies (the trace does not say), relays through several
// host buffers or to several GPUs (neither is a relay here).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/dvdg/graph.h"
#include "analyzer/model/link_path.h"
#include "analyzer/model/system_model.h"
#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"

namespace apptracer::whatif {

// A relay's HtoD in the what-if's copies-by-path table: its path and what
// priced it.
inline constexpr const char* kSentPeerToPeer = "none: sent peer to peer";

struct PeerRelayPlan {
  // Per op: a relay's DtoH: the peer path it takes instead.
  std::vector<std::optional<model::LinkPath>> peer_path;
  // Per op: a relay's HtoD: the DtoH (op index) whose peer copy brings its
  // bytes; -1 for every other op.
  std::vector<int32_t> relayed_by;
  size_t relays = 0;
  int64_t bytes = 0;
  // Relays kept as recorded: the system has no peer path between their GPUs.
  size_t unpriced = 0;
  std::set<std::pair<int, int>> unpriced_pairs;  // (from GPU, to GPU)
};

// The relays of a trace whose peer copy `system` can price.
PeerRelayPlan plan_peer_relays(const ReplayInput& input, const dvdg::Graph& graph,
                               const model::SystemModel& system);

// The what-if's graph with the relays: each HtoD after its peer copy; a
// relay's copies block their calls only where they were synchronous.
void apply_peer_relays(const PeerRelayPlan& plan, const ReplayInput& input, GraphOptions& options);

// What --peer-copies did, one line each: the relays replaced and their
// bytes, or that there were none; the relays `system` could not price.
void add_peer_relay_notes(const PeerRelayPlan& plan, const std::string& system, std::vector<std::string>& notes);

}  // namespace apptracer::whatif
