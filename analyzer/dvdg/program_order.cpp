#include "analyzer/dvdg/program_order.h"

#include <algorithm>
#include <map>
#include <queue>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace apptracer::dvdg {

namespace {

using StreamEvent = trace::Packed<StreamEventRow>;
using trace::Sync;

// Lane `blocked` may not run its operation at `position` before lane
// `after` has run `count` operations.
struct Constraint {
  size_t position;
  uint32_t after;
  size_t count;
};

// The operations of one stream (or of a process's host: allocations, frees
// and work without a stream), in issue order; or one MPI operation, which
// each rank's call orders against that rank's lanes (add_rank_calls).
struct Lane {
  ProcessId process = trace::kSingleProcess;
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
  bool rank_op = false;
  std::vector<uint32_t> ops;
  std::vector<int64_t> issue_ns;  // parallel to ops, ascending
  std::vector<Constraint> constraints;
  size_t next = 0;
  size_t next_constraint = 0;
};

class Orderer {
 public:
  explicit Orderer(const OpAccesses& trace) : trace_(trace) {}

  ProgramOrder run() {
    build_lanes();
    add_event_waits();
    add_syncs();
    add_rank_calls();
    for (Lane& lane : lanes_) {
      std::stable_sort(
          lane.constraints.begin(), lane.constraints.end(),
          [](const Constraint& a, const Constraint& b) { return a.position < b.position; });
    }
    std::vector<uint32_t> merged = merge();
    return {place_caused_migrations(std::move(merged)), broken_};
  }

 private:
  void build_lanes() {
    using LaneKey = std::tuple<ProcessId, std::optional<int64_t>, std::optional<int64_t>>;
    std::map<LaneKey, uint32_t> index;
    for (uint32_t op = 0; op < trace_.ops.size(); ++op) {
      const Op& record = trace_.ops[op];
      if (record.caused_by != Op::kNoOp) {
        ++caused_migrations_;
        continue;
      }
      bool joins_ranks = record.kind == OpKind::Collective || record.kind == OpKind::Message;
      if (joins_ranks && !record.stream) {
        lanes_.emplace_back();
        lanes_.back().process = record.process;
        lanes_.back().rank_op = true;
        lanes_.back().ops.push_back(op);
        continue;
      }
      bool on_stream = record.stream && !is_lifetime_op(record.kind);
      LaneKey key = on_stream ? LaneKey(record.process, record.device.optional(), record.stream.optional())
                              : LaneKey(record.process, std::nullopt, std::nullopt);
      auto [it, inserted] = index.emplace(key, static_cast<uint32_t>(lanes_.size()));
      if (inserted) {
        lanes_.emplace_back();
        lanes_.back().process = record.process;
        lanes_.back().device = std::get<1>(key);
        lanes_.back().stream = std::get<2>(key);
      }
      lanes_[it->second].ops.push_back(op);
    }
    for (Lane& lane : lanes_) {
      // Issue order; operations issued at the same instant (the work of one
      // graph launch) in the order they ran, else in trace order.
      std::stable_sort(lane.ops.begin(), lane.ops.end(), [&](uint32_t a, uint32_t b) {
        const Op& x = trace_.ops[a];
        const Op& y = trace_.ops[b];
        return x.issue_ns != y.issue_ns ? x.issue_ns < y.issue_ns : x.start_ns < y.start_ns;
      });
      lane.issue_ns.reserve(lane.ops.size());
      for (uint32_t op : lane.ops) lane.issue_ns.push_back(trace_.ops[op].issue_ns);
    }
  }

  // How many of the lane's operations were issued at or before `ns`.
  static size_t issued_by(const Lane& lane, int64_t ns) {
    return static_cast<size_t>(std::upper_bound(lane.issue_ns.begin(), lane.issue_ns.end(), ns) -
                               lane.issue_ns.begin());
  }

  std::vector<uint32_t> lanes_of(ProcessId process, std::optional<int64_t> stream,
                                 std::optional<int64_t> device) const {
    std::vector<uint32_t> found;
    for (uint32_t i = 0; i < lanes_.size(); ++i) {
      const Lane& lane = lanes_[i];
      if (lane.process != process || !lane.stream || lane.stream != stream) continue;
      if (device && lane.device && lane.device != device) continue;
      found.push_back(i);
    }
    return found;
  }

  // Work in `blocked` issued after `blocked_ns` comes after work in `after`
  // issued up to `after_ns`.
  // Every constraint points forward in time (a damaged trace's backward
  // sync times are clamped), which is what makes the constraints acyclic.
  void order(uint32_t after, int64_t after_ns, uint32_t blocked, int64_t blocked_ns) {
    if (after == blocked) return;
    blocked_ns = std::max(blocked_ns, after_ns);
    size_t count = issued_by(lanes_[after], after_ns);
    size_t position = issued_by(lanes_[blocked], blocked_ns);
    if (count == 0 || position >= lanes_[blocked].ops.size()) return;
    // A constraint that blocks no earlier and asks for no more than the
    // previous one between the same lanes is implied by it.
    Constraint& latest = latest_[(uint64_t{after} << 32) | blocked];
    if (latest.count > 0 && latest.position <= position && latest.count >= count) return;
    latest = {position, after, count};
    lanes_[blocked].constraints.push_back(latest);
  }

  // The record an event wait or event sync at `ns` refers to: the latest
  // record of that event issued before it.
  const StreamEvent* record_before(ProcessId process, int64_t handle, int64_t ns) const {
    auto found = records_.find({process, handle});
    if (found == records_.end()) return nullptr;
    const auto& records = found->second;
    auto after =
        std::upper_bound(records.begin(), records.end(), ns,
                         [](int64_t t, const StreamEvent* record) { return t < record->ns; });
    return after == records.begin() ? nullptr : *(after - 1);
  }

  void add_event_waits() {
    for (const StreamEvent& event : *trace_.stream_events) {
      if (event.kind == StreamEventKind::Record)
        records_[{event.process, event.event_handle}].push_back(&event);
    }
    for (auto& [handle, records] : records_) {
      std::stable_sort(records.begin(), records.end(),
                       [](const StreamEvent* a, const StreamEvent* b) { return a->ns < b->ns; });
    }
    for (const StreamEvent& wait : *trace_.stream_events) {
      if (wait.kind != StreamEventKind::Wait) continue;
      const StreamEvent* record = record_before(wait.process, wait.event_handle, wait.ns);
      if (!record) continue;
      for (uint32_t after : lanes_of(record->process, record->stream, record->device)) {
        for (uint32_t blocked : lanes_of(wait.process, wait.stream, wait.device)) {
          order(after, record->ns, blocked, wait.ns);
        }
      }
    }
  }

  // After a synchronization returns, the host issues new work only once the
  // awaited work has finished (its own process's: other ranks go on).
  void add_syncs() {
    std::map<ProcessId, std::vector<uint32_t>> processes;
    for (uint32_t i = 0; i < lanes_.size(); ++i) processes[lanes_[i].process].push_back(i);
    std::vector<const Sync*> syncs;
    for (const Sync& sync : *trace_.syncs) syncs.push_back(&sync);
    // By end, then in trace order.
    std::sort(syncs.begin(), syncs.end(), [](const Sync* a, const Sync* b) {
      return a->end_ns() != b->end_ns() ? a->end_ns() < b->end_ns() : a->id() < b->id();
    });
    for (const Sync* sync : syncs) {
      const std::vector<uint32_t>& all = processes[sync->process()];
      std::vector<uint32_t> awaited;
      int64_t awaited_ns = sync->start_ns();
      switch (sync->kind()) {
        case SyncKind::Device:
        case SyncKind::Context: awaited = all; break;
        case SyncKind::Stream: awaited = lanes_of(sync->process(), sync->stream(), sync->device()); break;
        case SyncKind::Event: {
          const StreamEvent* record =
              sync->event_handle() ? record_before(sync->process(), *sync->event_handle(), sync->start_ns())
                                 : nullptr;
          if (!record) break;
          awaited = lanes_of(record->process, record->stream, record->device);
          awaited_ns = record->ns;
          break;
        }
      }
      for (uint32_t after : awaited) {
        for (uint32_t blocked : all) order(after, awaited_ns, blocked, sync->end_ns());
      }
    }
  }

  // A collective or message joins the lanes of its ranks. On streams (NCCL)
  // its op, in its first rank's lane, waits for what each other rank issued
  // to its lane up to its call (its NCCL kernel included), and what that
  // rank issued after waits for the op. On the host (MPI) the op has a lane of its own and every rank's
  // call orders it against all of that rank's lanes: after what the rank
  // issued before the call, and, where the rank receives, before what it
  // issued once the call was done. Work issued while a nonblocking call was
  // in flight is left free, and a sender's later work does not wait for its
  // receiver: an eager send returns before the receive, so with that
  // constraint two ranks exchanging messages would wait for each other.
  // Ranks' clocks differ, so this is what puts the op between each rank's
  // producers and consumers, not time.
  void add_rank_calls() {
    if (trace_.rank_calls.empty()) return;
    std::unordered_map<uint32_t, std::pair<uint32_t, size_t>> placed;  // op -> (lane, position)
    for (uint32_t i = 0; i < lanes_.size(); ++i) {
      for (size_t p = 0; p < lanes_[i].ops.size(); ++p) {
        if (trace_.ops[lanes_[i].ops[p]].kind == OpKind::Collective ||
            trace_.ops[lanes_[i].ops[p]].kind == OpKind::Message)
          placed[lanes_[i].ops[p]] = {i, p};
      }
    }
    for (const RankCall& call : trace_.rank_calls) {
      auto [lane, position] = placed.at(call.op);
      bool on_host = lanes_[lane].rank_op;
      std::vector<uint32_t> others =
          on_host ? process_lanes(call.process) : lanes_of(call.process, call.stream, call.device);
      if (others.empty()) others = host_lanes(call.process);
      for (uint32_t other : others) {
        if (other == lane) continue;
        const Lane& rank = lanes_[other];
        size_t before = static_cast<size_t>(
            std::lower_bound(rank.issue_ns.begin(), rank.issue_ns.end(), call.issue_ns) -
            rank.issue_ns.begin());
        // Through the rank's NCCL kernel, issued inside the call: event waits
        // issued before the call constrain that kernel (the first op after
        // them), not the op.
        auto returned = rank.ops.begin() +
                        static_cast<std::ptrdiff_t>(std::max(before, issued_by(rank, call.host_done_ns)));
        auto kernel = std::find(rank.ops.begin() + static_cast<std::ptrdiff_t>(before), returned, call.kernel);
        if (call.kernel != Op::kNoOp && kernel != returned)
          before = static_cast<size_t>(kernel - rank.ops.begin()) + 1;
        if (before > 0) lanes_[lane].constraints.push_back({position, other, before});
        size_t after = before;
        if (on_host) {
          if (!call.receives) continue;
          after = static_cast<size_t>(
              std::upper_bound(rank.issue_ns.begin(), rank.issue_ns.end(), call.host_done_ns) -
              rank.issue_ns.begin());
        }
        if (after < rank.ops.size()) lanes_[other].constraints.push_back({after, lane, position + 1});
      }
    }
  }

  // A process's lanes other than those of single MPI operations.
  std::vector<uint32_t> process_lanes(ProcessId process) const {
    std::vector<uint32_t> found;
    for (uint32_t i = 0; i < lanes_.size(); ++i) {
      if (lanes_[i].process == process && !lanes_[i].rank_op) found.push_back(i);
    }
    return found;
  }

  std::vector<uint32_t> host_lanes(ProcessId process) const {
    std::vector<uint32_t> found;
    for (uint32_t i : process_lanes(process)) {
      if (!lanes_[i].stream) found.push_back(i);
    }
    return found;
  }

  int64_t head_time(const Lane& lane) const { return trace_.ops[lane.ops[lane.next]].start_ns; }

  std::vector<uint32_t> merge() {
    using Ready = std::tuple<int64_t, uint32_t>;  // head start time, lane
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
    std::vector<std::vector<uint32_t>> waiting(lanes_.size());

    // Queues the lane if its head may run, else parks it on the lane it waits for.
    auto try_ready = [&](uint32_t index) {
      Lane& lane = lanes_[index];
      if (lane.next >= lane.ops.size()) return;
      while (lane.next_constraint < lane.constraints.size() &&
             lane.constraints[lane.next_constraint].position <= lane.next) {
        const Constraint& constraint = lane.constraints[lane.next_constraint];
        if (lanes_[constraint.after].next < constraint.count) {
          waiting[constraint.after].push_back(index);
          return;
        }
        ++lane.next_constraint;
      }
      ready.emplace(head_time(lane), index);
    };

    // Constraints point forward in time, so on one clock they form no cycle.
    // Across ranks they point forward on clocks the merge aligned only
    // approximately: where they wait for each other, the earliest waiting
    // operation goes first, and the constraint it broke is counted.
    auto break_cycle = [&]() {
      std::optional<uint32_t> earliest;
      for (uint32_t i = 0; i < lanes_.size(); ++i) {
        if (lanes_[i].next < lanes_[i].ops.size() &&
            (!earliest || head_time(lanes_[i]) < head_time(lanes_[*earliest])))
          earliest = i;
      }
      if (!earliest) return false;
      for (std::vector<uint32_t>& parked : waiting)
        parked.erase(std::remove(parked.begin(), parked.end(), *earliest), parked.end());
      ++lanes_[*earliest].next_constraint;
      ++broken_;
      try_ready(*earliest);
      return true;
    };

    for (uint32_t i = 0; i < lanes_.size(); ++i) try_ready(i);
    std::vector<uint32_t> order;
    order.reserve(trace_.ops.size());
    while (!ready.empty() || break_cycle()) {
      if (ready.empty()) continue;
      uint32_t index = std::get<1>(ready.top());
      ready.pop();
      Lane& lane = lanes_[index];
      order.push_back(lane.ops[lane.next++]);
      try_ready(index);
      if (!waiting[index].empty()) {
        std::vector<uint32_t> woken;
        woken.swap(waiting[index]);
        for (uint32_t other : woken) try_ready(other);
      }
    }
    return order;
  }

  // A migration GPU work or a host phase caused happened while that op ran,
  // but its data had to arrive before the op used it: it goes right before.
  std::vector<uint32_t> place_caused_migrations(std::vector<uint32_t> order) const {
    if (caused_migrations_ == 0) return order;
    std::unordered_map<uint32_t, std::vector<uint32_t>> before;
    for (uint32_t op = 0; op < trace_.ops.size(); ++op) {
      if (trace_.ops[op].caused_by != Op::kNoOp) before[trace_.ops[op].caused_by].push_back(op);
    }
    std::vector<uint32_t> placed;
    placed.reserve(trace_.ops.size());
    for (uint32_t op : order) {
      auto found = before.find(op);
      if (found != before.end())
        placed.insert(placed.end(), found->second.begin(), found->second.end());
      placed.push_back(op);
    }
    return placed;
  }

  const OpAccesses& trace_;
  size_t caused_migrations_ = 0;  // left out of the lanes, placed before their cause
  size_t broken_ = 0;             // constraints broken to end a cycle
  std::vector<Lane> lanes_;
  std::map<std::pair<ProcessId, int64_t>, std::vector<const StreamEvent*>> records_;  // by (process, handle)
  // Per (after, blocked) lane pair: the last constraint added between them.
  std::unordered_map<uint64_t, Constraint> latest_;
};

}  // namespace

ProgramOrder program_order(const OpAccesses& trace) { return Orderer(trace).run(); }

}  // namespace apptracer::dvdg
