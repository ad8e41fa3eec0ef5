#include "analyzer/trace/remote_kernel_traffic.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzer/trace/exact_accesses.h"
#include "analyzer/trace/trace.h"
#include "apptracer/saturating.h"

namespace apptracer::trace {

namespace {

using model::HostMemory;
using model::LinkKind;
using model::LinkPath;

struct Span {
  int64_t lo = 0;
  int64_t hi = 0;  // one past
  bool approximate = false;
};

// The path of a kernel on `device` loading from or storing into `memory`;
// nullopt for its own GPU's memory.
std::optional<LinkPath> path_to(int device, const Packed<AllocationRow>& memory, bool stores) {
  if (memory_kind_of(memory.kind) == MemoryKind::Pinned) {
    int node = static_cast<int>(memory.numa_node.value_or(-1));
    return LinkPath{stores ? LinkKind::DtoH : LinkKind::HtoD, HostMemory::Pinned, node, device, -1};
  }
  int owner = static_cast<int>(*memory.device);
  if (owner == device) return std::nullopt;
  return stores ? LinkPath{LinkKind::PeerDirect, HostMemory::None, -1, device, owner}
                : LinkPath{LinkKind::PeerDirect, HostMemory::None, -1, owner, device};
}

// Bytes in the union of `spans` (sorted here).
int64_t covered_bytes(std::vector<Span>& spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  int64_t bytes = 0, reached = INT64_MIN;
  for (const Span& span : spans) {
    int64_t from = std::max(span.lo, reached);
    if (span.hi > from) bytes = saturating_add(bytes, span.hi - from);
    reached = std::max(reached, span.hi);
  }
  return bytes;
}

// One kernel's spans in memory reached over a link, per allocation and way.
class KernelSpans {
 public:
  explicit KernelSpans(const std::unordered_map<int64_t, const Packed<AllocationRow>*>& reachable)
      : reachable_(reachable) {}

  // A kernel on `device` starts.
  void start(int device) {
    spans_.clear();
    device_ = device;
  }

  // Addresses [lo, hi) of allocation `alloc_id`, clamped to it. An access
  // of unknown kind may be either (the DVDG assumes read-write). The
  // kernel's own GPU's memory is left out here, not after its spans are
  // gathered: it is nearly every argument of nearly every kernel.
  void add(int64_t alloc_id, AccessKind access, int64_t lo, int64_t hi, bool approximate) {
    auto found = reachable_.find(alloc_id);
    if (found == reachable_.end()) return;
    const Packed<AllocationRow>& memory = *found->second;
    if (!path_to(device_, memory, false)) return;
    Span span{std::max(lo, memory.address), std::min(hi, saturating_add(memory.address, memory.bytes)),
              approximate};
    if (span.hi <= span.lo) return;
    if (access != AccessKind::Write) spans_[{alloc_id, false}].push_back(span);
    if (access != AccessKind::Read) spans_[{alloc_id, true}].push_back(span);
  }

  // The kernel's traffic per path and way.
  void emit(int64_t kernel_id, int device, bool exact, std::vector<RemoteTraffic>& out) {
    size_t first = out.size();
    for (auto& [key, spans] : spans_) {
      auto [alloc_id, stores] = key;
      std::optional<LinkPath> path = path_to(device, *reachable_.at(alloc_id), stores);
      if (!path) continue;
      bool approximate = std::any_of(spans.begin(), spans.end(), [](const Span& s) { return s.approximate; });
      int64_t bytes = covered_bytes(spans);
      auto same = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                               [&](const RemoteTraffic& t) { return t.path == *path && t.stores == stores; });
      if (same == out.end()) {
        out.push_back({kernel_id, *path, stores, 0, exact});
        same = out.end() - 1;
      }
      same->bytes = saturating_add(same->bytes, bytes);
      same->exact = same->exact && !approximate;
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
              [](const RemoteTraffic& a, const RemoteTraffic& b) {
                return std::make_pair(a.path.name(), a.stores) < std::make_pair(b.path.name(), b.stores);
              });
  }

 private:
  const std::unordered_map<int64_t, const Packed<AllocationRow>*>& reachable_;
  std::map<std::pair<int64_t, bool>, std::vector<Span>> spans_;  // by (allocation, stores)
  int device_ = 0;
};

}  // namespace

std::vector<RemoteTraffic> remote_kernel_traffic(Trace& trace) {
  // Memory some kernel may reach only over a link: GPU memory (another
  // GPU's, for some kernels) and pinned host memory.
  std::unordered_map<int64_t, const Packed<AllocationRow>*> reachable;
  for (const Packed<AllocationRow>& row : trace.rows<AllocationRow>()) {
    MemoryKind memory = memory_kind_of(row.kind);
    if ((memory == MemoryKind::Device && row.device) || memory == MemoryKind::Pinned) reachable.emplace(row.id, &row);
  }
  std::vector<RemoteTraffic> out;
  if (reachable.empty()) return out;
  const KernelArguments& arguments = trace.kernel_arguments();
  ExactAccesses exact = ExactAccesses::read(trace);
  KernelSpans spans(reachable);
  for (const Packed<KernelRow>& kernel : trace.rows<KernelRow>()) {
    if (!kernel.device) continue;
    spans.start(static_cast<int>(*kernel.device));
    const KernelExact* recorded = exact.of(kernel.id);
    // A launch the sanitizer may have missed accesses of (TMA) keeps its
    // arguments' reach too, as in the DVDG.
    bool complete = recorded && recorded->incomplete == ExactGap::None;
    if (recorded) {
      for (const ExactAccess& access : recorded->accesses) {
        if (access.alloc_id) spans.add(*access.alloc_id, access.access, access.lo, access.hi, access.approximate);
      }
    }
    if (!complete) {
      for (const KernelWord& word : arguments.of(kernel)) {
        if (!word.alloc_id) continue;
        auto found = reachable.find(*word.alloc_id);
        if (found == reachable.end()) continue;
        const Packed<AllocationRow>& memory = *found->second;
        int64_t from = saturating_add(memory.address, std::max<int64_t>(0, word.alloc_offset));
        spans.add(*word.alloc_id, word.access, from, saturating_add(memory.address, memory.bytes), false);
      }
    }
    spans.emit(kernel.id, static_cast<int>(*kernel.device), complete, out);
  }
  return out;
}

std::string traffic_kind(const RemoteTraffic& traffic) {
  bool peer = traffic.path.kind == LinkKind::PeerDirect;
  return std::string("kernel ") + (peer ? "peer " : "host ") + (traffic.stores ? "stores" : "loads");
}

std::vector<TrafficTotal> traffic_by_path(const std::vector<RemoteTraffic>& traffic) {
  std::map<std::tuple<std::string, std::string, bool>, TrafficTotal> groups;
  for (const RemoteTraffic& t : traffic) {
    std::string path = t.path.name();
    std::string kind = traffic_kind(t);
    TrafficTotal& total = groups[{path, kind, t.exact}];
    total.path = path;
    total.kind = kind;
    total.exact = t.exact;
    ++total.kernels;
    total.bytes = saturating_add(total.bytes, t.bytes);
  }
  std::vector<TrafficTotal> out;
  out.reserve(groups.size());
  for (auto& [key, total] : groups) out.push_back(std::move(total));
  return out;
}

const char* bytes_are(bool exact) { return exact ? "exact" : "bound"; }

}  // namespace apptracer::trace
