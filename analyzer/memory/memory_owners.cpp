#include "analyzer/memory/memory_owners.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "analyzer/trace/framework.h"
#include "analyzer/trace/intervals.h"
#include "apptracer/saturating.h"

namespace apptracer::memory {

namespace {

using trace::Packed;

std::string allocator_short_name(std::optional<SubAllocator> allocator) {
  if (!allocator) return "framework";
  switch (*allocator) {
    case SubAllocator::PytorchCaching: return "pytorch";
    case SubAllocator::CupyPool: return "cupy";
  }
  return "framework";
}

}  // namespace

std::string owner_name(Owner owner, std::optional<SubAllocator> allocator) {
  switch (owner) {
    case Owner::Program: return "program";
    case Owner::Xla: return "xla";
    case Owner::Managed: return "managed";
    case Owner::FrameworkTensors: return allocator_short_name(allocator) + " tensors";
    case Owner::FrameworkCache: return allocator_short_name(allocator) + " cache";
    case Owner::GraphPool: return allocator_short_name(allocator) + " CUDA graph pool";
    case Owner::Communication: return "nccl/mpi";
    case Owner::Library: return "library workspace";
    case Owner::CublasWorkspace: return "cuBLAS workspace";
    case Owner::CudnnWorkspace: return "cuDNN workspace";
    case Owner::PinnedHost: return "pinned host";
    case Owner::MappedHost: return "mapped host";
  }
  return "?";
}

bool is_library_memory(Owner owner) {
  return owner == Owner::Library || owner == Owner::CublasWorkspace || owner == Owner::CudnnWorkspace ||
         owner == Owner::Communication;
}

CommunicationCalls::CommunicationCalls(trace::Trace& trace) {
  for (const Packed<CollectiveRow>& row : trace.rows<CollectiveRow>())
    calls_[row.tid].emplace_back(row.api_start_ns, row.api_end_ns);
  // NCCL allocates its buffers while an init runs, before any collective.
  for (const Packed<CommunicatorRow>& row : trace.rows<CommunicatorRow>()) {
    if (row.call_tid && row.call_start_ns && row.call_end_ns)
      calls_[*row.call_tid].emplace_back(*row.call_start_ns, *row.call_end_ns);
  }
  if (trace.db().has_table(NcclGroupRow::kTable)) {
    for (const Packed<NcclGroupRow>& row : trace.rows<NcclGroupRow>())
      calls_[row.tid].emplace_back(row.start_ns, row.end_ns);
  }
  for (auto& [tid, calls] : calls_) std::stable_sort(calls.begin(), calls.end());
  adopt_helper_threads(trace);
}

// NCCL does part of a call's work on threads it starts inside it (setting up
// connections, it creates their buffers there and maps them in the calling
// thread): a thread first seen inside another thread's call works for that
// call until it returns.
void CommunicationCalls::adopt_helper_threads(trace::Trace& trace) {
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> adopted;
  for (const Packed<ThreadRow>& thread : trace.rows<ThreadRow>()) {
    if (!thread.first_seen_ns || calls_.count(thread.tid)) continue;
    for (const auto& [tid, calls] : calls_) {
      auto after = std::upper_bound(calls.begin(), calls.end(), *thread.first_seen_ns,
                                    [](int64_t ns, const std::pair<int64_t, int64_t>& c) { return ns < c.first; });
      if (after != calls.begin() && std::prev(after)->second >= *thread.first_seen_ns)
        adopted[thread.tid].push_back(*std::prev(after));
    }
  }
  for (auto& [tid, calls] : adopted) {
    std::sort(calls.begin(), calls.end());
    calls_[tid] = std::move(calls);
  }
}

bool CommunicationCalls::contains(int64_t tid, int64_t start_ns, int64_t end_ns) const {
  auto thread = calls_.find(tid);
  return thread != calls_.end() && trace::one_holds(thread->second, start_ns, end_ns);
}

FrameworkSegments::FrameworkSegments(trace::Trace& trace) {
  // Merged as they come: a caching allocator hands out the same blocks step
  // after step, so millions of blocks fall in a few hundred spans, and most
  // lie in one already seen (no sort of them all).
  std::map<std::pair<trace::ProcessId, SubAllocator>, std::map<int64_t, int64_t>> merged;  // start -> end
  for (const Packed<SubAllocationRow>& row : trace.rows<SubAllocationRow>()) {
    std::map<int64_t, int64_t>& spans = merged[{row.process, row.allocator}];
    int64_t start = row.address, end = saturating_add(row.address, row.bytes);
    auto next = spans.upper_bound(start);
    if (next != spans.begin() && std::prev(next)->second >= end) continue;  // inside one
    // Spans that touch or overlap [start, end) join it.
    if (next != spans.begin() && std::prev(next)->second >= start) {
      --next;
      start = next->first;
    }
    while (next != spans.end() && next->first <= end) {
      end = std::max(end, next->second);
      next = spans.erase(next);
    }
    spans[start] = end;
  }
  for (const auto& [key, spans] : merged) spans_[key].assign(spans.begin(), spans.end());
}

bool FrameworkSegments::framework_process(trace::ProcessId process) const {
  auto found = spans_.lower_bound({process, SubAllocator{}});
  return found != spans_.end() && found->first.first == process;
}

std::optional<SubAllocator> FrameworkSegments::holder(trace::ProcessId process, int64_t address,
                                                      int64_t bytes) const {
  int64_t end = saturating_add(address, bytes);
  for (auto it = spans_.lower_bound({process, SubAllocator{}});
       it != spans_.end() && it->first.first == process; ++it) {
    const auto& spans = it->second;
    // The first span ending after `address`: it overlaps when it starts before `end`.
    auto found = std::upper_bound(spans.begin(), spans.end(), address,
                                  [](int64_t at, const std::pair<int64_t, int64_t>& s) { return at < s.second; });
    if (found != spans.end() && found->first < end) return it->first.second;
  }
  return std::nullopt;
}

CompilerRanges::CompilerRanges(trace::Trace& trace) {
  // XLA names a range per thunk run, millions in a long run, from few names.
  std::unordered_map<int64_t, bool> compiler_name;
  for (const Packed<NvtxRangeRow>& row : trace.rows<NvtxRangeRow>()) {
    if (!row.tid || !row.end_ns || !row.name_id) continue;
    auto [named, added] = compiler_name.try_emplace(*row.name_id);
    if (added) named->second = trace::is_compiler_range_name(trace.string(row.name_id, ""));
    if (!named->second) continue;
    ranges_[*row.tid].emplace_back(row.start_ns, *row.end_ns);
    processes_.insert(row.process);
  }
  // A pass's range lies inside its compile's: merged, the latest to start
  // before a call is the only one that can hold it.
  for (auto& [tid, ranges] : ranges_) trace::merge_intervals(ranges);
}

bool CompilerRanges::contains(int64_t tid, int64_t start_ns, int64_t end_ns) const {
  auto thread = ranges_.find(tid);
  return thread != ranges_.end() && trace::one_holds(thread->second, start_ns, end_ns);
}

std::optional<Owner> library_owner(AllocKind kind, bool made_in_communication_call, bool made_while_compiling,
                                   bool framework_process, bool holds_framework_blocks) {
  if (made_in_communication_call) return Owner::Communication;
  if (!(framework_process || made_while_compiling) || holds_framework_blocks) return std::nullopt;
  switch (kind) {
    case AllocKind::Device:
    case AllocKind::VmmMapping:
    case AllocKind::MappedHost: return Owner::Library;
    default: return std::nullopt;
  }
}

}  // namespace apptracer::memory
