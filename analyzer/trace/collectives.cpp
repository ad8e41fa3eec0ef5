#include "analyzer/trace/collectives.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/trace/trace.h"

namespace apptracer::trace {

namespace {

std::optional<BufferRange> buffer(NullableInt address, NullableInt bytes, NullableInt alloc_id,
                                  NullableInt offset) {
  if (!address || !bytes) return std::nullopt;
  return BufferRange{*address, *bytes, alloc_id, offset};
}

// The kernel a launch made, by the launch's correlation id (the first, when
// a launch ran several): correlation ids are unique in a merged trace, but
// the process is matched all the same.
class LaunchedKernels {
 public:
  explicit LaunchedKernels(const Rows<KernelRow>& kernels) {
    for (const Packed<KernelRow>& kernel : kernels) {
      if (kernel.call_correlation_id)
        launches_.emplace_back(kernel.process, *kernel.call_correlation_id, kernel.id);
    }
    std::sort(launches_.begin(), launches_.end());
  }

  std::optional<int64_t> of(ProcessId process, NullableInt correlation) const {
    if (!correlation) return std::nullopt;
    auto found = std::lower_bound(launches_.begin(), launches_.end(),
                                  std::make_tuple(process, *correlation, INT64_MIN));
    if (found == launches_.end() || std::get<0>(*found) != process ||
        std::get<1>(*found) != *correlation)
      return std::nullopt;
    return std::get<2>(*found);
  }

 private:
  std::vector<std::tuple<ProcessId, int64_t, int64_t>> launches_;
};

}  // namespace

std::vector<std::vector<CollectiveCall>> read_collective_operations(Trace& trace) {
  std::vector<std::vector<CollectiveCall>> operations;
  const Rows<CollectiveRow>& collectives = trace.rows<CollectiveRow>();
  if (collectives.empty()) return operations;
  std::unordered_map<int64_t, int64_t> ranks;  // communicators.id -> nranks
  for (const Packed<CommunicatorRow>& communicator : trace.rows<CommunicatorRow>())
    ranks.emplace(communicator.id, communicator.nranks);
  std::unordered_map<int64_t, int64_t> matches;  // collectives.id -> match_id
  for (const Packed<CollectiveMatchRow>& match : trace.rows<CollectiveMatchRow>())
    matches.emplace(match.collective_id, match.match_id);
  LaunchedKernels kernels(trace.rows<KernelRow>());

  std::map<int64_t, size_t> by_match;  // match_id -> position in operations
  for (const Packed<CollectiveRow>& row : collectives) {
    auto nranks = ranks.find(row.communicator_id);
    if (nranks == ranks.end()) continue;  // a call of no known communicator
    CollectiveCall call;
    call.id = row.id;
    call.kind = row.kind;
    call.nranks = nranks->second;
    call.send = buffer(row.send_address, row.send_bytes, row.send_alloc_id, row.send_offset);
    call.recv = buffer(row.recv_address, row.recv_bytes, row.recv_alloc_id, row.recv_offset);
    call.device = row.device;
    call.stream = row.stream;
    call.api_start_ns = row.api_start_ns;
    call.host_done_ns = row.nonblocking && row.complete_ns ? *row.complete_ns : row.api_end_ns;
    call.gpu_start_ns = row.gpu_start_ns;
    call.gpu_end_ns = row.gpu_end_ns;
    call.kernel_id = kernels.of(row.process, row.launch_correlation_id);
    call.process = row.process;
    auto match = matches.find(row.id);
    if (match == matches.end()) {
      operations.push_back({call});
      continue;
    }
    auto [found, added] = by_match.emplace(match->second, operations.size());
    if (added) operations.emplace_back();
    operations[found->second].push_back(call);
  }
  // A message reads on the sender's side first.
  for (std::vector<CollectiveCall>& calls : operations) {
    std::stable_sort(calls.begin(), calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
      return a.kind == CollectiveKind::Send && b.kind == CollectiveKind::Recv;
    });
  }
  return operations;
}

}  // namespace apptracer::trace
