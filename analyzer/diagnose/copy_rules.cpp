// Rules about copies and memsets as the host issued them: pageable memory,
// latency-bound small copies, synchronous copies and memsets, NUMA placement.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "analyzer/dvdg/labels.h"
#include "analyzer/model/copy_path.h"
#include "analyzer/diagnose/measured_transfer_cost.h"
#include "analyzer/diagnose/rules.h"

namespace apptracer::diagnose {

namespace {

bool host_device_copy(const Transfer& t) {
  return !t.is_memset() && (t.kind() == CopyKind::HtoD || t.kind() == CopyKind::DtoH);
}

// A host buffer: its allocation, or its address when in none.
std::pair<int64_t, int64_t> host_buffer(const Transfer& t) {
  std::optional<int64_t> alloc = t.host_alloc();
  if (alloc) return {*alloc, 0};
  return {-1, (t.kind() == CopyKind::HtoD ? t.src_address() : t.dst_address()).value_or(0)};
}

std::string host_buffer_name(const TraceFacts& facts, const Transfer& t) {
  if (t.host_alloc()) return allocation_name(facts, t.host_alloc());
  auto address = t.kind() == CopyKind::HtoD ? t.src_address() : t.dst_address();
  return "host memory at " + dvdg::hex_address(address.value_or(0));
}

// What making each blocking call asynchronous saves, per thread in call
// order: the time it blocked becomes work queued behind the host, which the
// host's own work after the call (until its next CUDA call) runs under,
// oldest first. Work queued by consecutive such calls carries over (a long
// memset runs under the host work after the short ones that follow it); at
// any other call, or the thread's last, what is still queued is waited for.
// Per call: the time it blocked less what of it is still waited for; alone,
// the host work right after it, at most the time it blocked.
std::vector<int64_t> overlappable_host_time(const TraceFacts& facts,
                                            const std::vector<const HostCall*>& calls) {
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(calls[a]->tid(), calls[a]->start_ns()) <
           std::make_pair(calls[b]->tid(), calls[b]->start_ns());
  });
  std::vector<int64_t> saving(calls.size(), 0);
  std::deque<std::pair<size_t, int64_t>> queued;  // (call, its work still queued)
  for (size_t k = 0; k < order.size(); ++k) {
    const HostCall& call = *calls[order[k]];
    queued.emplace_back(order[k], call.duration());
    const HostCall* next = facts.ops().next_call_on_thread(call);
    int64_t host_work = next ? elapsed_ns(call.end_ns(), next->start_ns()) : 0;
    while (host_work > 0 && !queued.empty()) {
      int64_t ran = std::min(host_work, queued.front().second);
      host_work -= ran;
      queued.front().second -= ran;
      if (queued.front().second == 0) {
        saving[queued.front().first] = calls[queued.front().first]->duration();
        queued.pop_front();
      }
    }
    bool carries = next && k + 1 < order.size() && calls[order[k + 1]]->id() == next->id();
    if (carries) continue;
    for (auto [waited, left] : queued) saving[waited] = calls[waited]->duration() - left;
    queued.clear();
  }
  return saving;
}

// Synchronous copies or memsets: host blocked, grouped by call and direction.
void blocking_transfers(const RuleContext& context, const std::vector<Transfer>& transfers,
                        const char* rule, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  std::vector<const Transfer*> blocking;
  std::vector<const HostCall*> calls;
  for (const Transfer& t : transfers) {
    if (t.is_async() || t.kind() == CopyKind::Prefetch) continue;
    const HostCall* call = facts.ops().call(t.correlation());
    if (!call) continue;
    blocking.push_back(&t);
    calls.push_back(call);
  }
  std::vector<int64_t> overlappable = overlappable_host_time(facts, calls);
  struct Group {
    Finding finding;
    int64_t count = 0, bytes = 0, blocked = 0, overlappable = 0;
  };
  std::map<std::tuple<std::string, int, int>, Group> groups;
  for (size_t i = 0; i < blocking.size(); ++i) {
    const Transfer& t = *blocking[i];
    const HostCall* call = calls[i];
    Group& group = groups[{std::string(call->name), static_cast<int>(t.kind()), static_cast<int>(t.host_memory())}];
    if (group.count == 0) locate(context, group.finding, t.correlation(), call->start_ns());
    ++group.count;
    group.bytes = saturating_add(group.bytes, t.bytes());
    group.blocked = saturating_add(group.blocked, call->duration());
    group.overlappable = saturating_add(group.overlappable, overlappable[i]);
    add_row(context, group.finding, t.is_memset() ? "memsets" : "memcpys", t.id());
    add_name(group.finding, transfer_name(t));
  }
  for (auto& [key, group] : groups) {
    if (group.blocked < context.limits.min_blocked_ns) continue;
    Finding& f = group.finding;
    const std::string& call = std::get<0>(key);
    f.rule = rule;
    f.what = std::to_string(group.count) + " synchronous " + call + " call(s) (" +
             dvdg::format_bytes(group.bytes) + ") blocked the host for " +
             format_ns(group.blocked);
    f.cost_ns = group.blocked;
    f.events = group.count;
    f.saving_ns = group.overlappable;
    f.estimate = "made asynchronous, the time the calls blocked runs under the host's work after "
                 "them and after the blocking calls that follow (" + format_ns(group.overlappable) +
                 "); what is still queued at the host's next other call is waited for";
    bool host_side = std::get<1>(key) == static_cast<int>(CopyKind::HtoD) ||
                     std::get<1>(key) == static_cast<int>(CopyKind::DtoH);
    f.fix = std::string(rule) == "sync_memset"
                ? "use cudaMemsetAsync on the stream that uses the memory and synchronize only "
                  "where the host needs the result"
                : std::string("use cudaMemcpyAsync on a stream") +
                      (host_side ? " with pinned host memory" : "") +
                      " and synchronize only where the host needs the data";
    findings.push_back(std::move(f));
  }
}

}  // namespace

void pageable_copy(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  struct Group {
    Finding finding;
    const Transfer* first = nullptr;
    int64_t count = 0, async = 0, bytes = 0, now = 0;
    double pinned = 0;
    bool known = true;
    std::set<std::pair<int64_t, int64_t>> buffers;
  };
  std::map<std::tuple<int, int64_t, int64_t, int64_t>, Group> groups;
  for (const Transfer& t : facts.ops().copies()) {
    if (!host_device_copy(t) || t.host_memory() != MemoryKind::Pageable || !t.timed() ||
        facts.library_transfer(t))
      continue;
    auto [alloc, address] = host_buffer(t);
    // PyTorch copies a new CPU tensor each step (a DataLoader's batch): the
    // fix is where they are made and copied, so the calling thread is the site.
    bool by_thread = facts.framework == trace::Framework::Pytorch;
    const HostCall* call = facts.ops().call(t.correlation());
    Group& group = groups[{static_cast<int>(t.kind()), by_thread ? -1 : alloc,
                           by_thread ? (call ? call->tid() : 0) : address, t.device().value_or(-1)}];
    group.buffers.emplace(alloc, address);
    if (!group.first) {
      group.first = &t;
      locate(context, group.finding, t.correlation(), t.api_start_ns().value_or(*t.gpu_start_ns()));
    }
    TransferPath pinned = path_of(t);
    pinned.host_memory = MemoryKind::Pinned;
    std::optional<double> predicted = context.cost.time_ns(pinned, t.bytes());
    int64_t now = held_ns(facts, facts.busy_on(t.device().value_or(0)), t);
    if (std::optional<double> staged = context.cost.time_ns(path_of(t), t.bytes()); predicted && staged) {
      // As whatif --pin prices it.
      predicted = model::pinned_copy_ns(*predicted, *staged, static_cast<double>(now));
    }
    group.known = group.known && predicted;
    group.pinned += predicted.value_or(0);
    ++group.count;
    group.async += t.is_async();
    group.bytes = saturating_add(group.bytes, t.bytes());
    group.now = saturating_add(group.now, now);
    add_row(context, group.finding, "memcpys", t.id());
    add_name(group.finding, transfer_name(t));
  }
  for (auto& [key, group] : groups) {
    if (group.now < context.limits.min_cost_ns) continue;
    Finding& f = group.finding;
    const Transfer& t = *group.first;
    bool to_device = t.kind() == CopyKind::HtoD;
    f.rule = "pageable_copy";
    bool pytorch = facts.framework == trace::Framework::Pytorch;
    f.what = std::to_string(group.count) + " " + std::string(to_string(t.kind())) + " copies (" +
             dvdg::format_bytes(group.bytes) + ") " + (to_device ? "from" : "to") + " pageable " +
             (pytorch ? "CPU tensors (" + std::to_string(group.buffers.size()) + " buffer(s))"
                      : host_buffer_name(facts, t)) +
             ": staged through a driver buffer";
    if (group.async > 0) {
      f.what += "; " + std::to_string(group.async) +
                " of them cudaMemcpyAsync, which runs synchronously from pageable memory";
    }
    f.cost_ns = group.now;
    f.events = group.count;
    TransferPath pinned = path_of(t);
    pinned.host_memory = MemoryKind::Pinned;
    set_saving(f, group.now, group.known ? std::optional<double>(group.pinned) : std::nullopt,
               "the copies' time (GPU time, or the staging call's where longer) minus the same "
               "copies pinned: " + context.cost.describe(pinned));
    f.fix = pytorch ? std::string(to_device ? "pin the CPU tensors copied here (DataLoader(pin_memory=True), "
                                              "or tensor.pin_memory()) and copy them with "
                                              ".to(device, non_blocking=True)"
                                            : "copy into a pinned CPU tensor (torch.empty(..., "
                                              "pin_memory=True), .copy_(x, non_blocking=True)) and "
                                              "synchronize only where the host reads it")
                    : "allocate this host buffer with cudaMallocHost (or cudaHostRegister it once) so "
                      "copies DMA straight from it";
    findings.push_back(std::move(f));
  }
}

namespace {

// Small copies are one problem where one batched copy would replace them:
// those that share the buffer the batch would be made in or land in. That is
// the host buffer for copies between host and device (per-step read-backs of
// several scalars into one pinned buffer, uploads cut from one host batch)
// and the destination for copies within or between devices.
std::pair<int64_t, int64_t> batched_buffer(const Transfer& t) {
  if (host_device_copy(t)) return host_buffer(t);
  if (t.dst_alloc()) return {*t.dst_alloc(), 0};
  return {-1, t.dst_address().value_or(0)};
}

// "buffer A", or "3 buffers (A, B, ...)" where the group's copies had several.
std::string buffers_named(const TraceFacts& facts, const std::set<int64_t>& allocs,
                          bool unallocated) {
  size_t count = allocs.size() + (unallocated ? 1 : 0);
  if (count == 1)
    return allocs.empty() ? allocation_name(facts, std::nullopt)
                          : allocation_name(facts, *allocs.begin());
  std::string names;
  size_t shown = 0;
  for (int64_t alloc : allocs) {
    if (shown == 2) break;
    names += (shown++ ? ", " : "") + allocation_name(facts, alloc);
  }
  if (count > shown) names += ", ...";
  return std::to_string(count) + " buffers (" + names + ")";
}

}  // namespace

void small_copies(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  struct Group {
    Finding finding;
    const Transfer* first = nullptr;
    int64_t count = 0, bytes = 0, now = 0;
    std::set<int64_t> sources, destinations;
    bool unallocated_source = false, unallocated_destination = false;
  };
  using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t>;
  std::map<Key, Group> groups;
  for (const Transfer& t : facts.ops().copies()) {
    if (t.kind() == CopyKind::Prefetch || !t.timed() || t.bytes() > context.limits.small_copy_bytes)
      continue;
    auto [alloc, address] = batched_buffer(t);
    Key key{static_cast<int>(t.kind()), static_cast<int>(path_of(t).host_memory),
            t.device().value_or(-1), t.stream().value_or(-1), alloc, address};
    Group& group = groups[key];
    if (!group.first) {
      group.first = &t;
      locate(context, group.finding, t.correlation(), t.api_start_ns().value_or(*t.gpu_start_ns()));
    }
    ++group.count;
    group.bytes = saturating_add(group.bytes, t.bytes());
    group.now = saturating_add(group.now, t.gpu_ns());
    if (t.src_alloc()) group.sources.insert(*t.src_alloc());
    else group.unallocated_source = true;
    if (t.dst_alloc()) group.destinations.insert(*t.dst_alloc());
    else group.unallocated_destination = true;
    add_row(context, group.finding, "memcpys", t.id());
  }
  for (auto& [key, group] : groups) {
    if (group.count < context.limits.small_copy_count || group.now < context.limits.min_cost_ns)
      continue;
    Finding& f = group.finding;
    const Transfer& t = *group.first;
    TransferPath path = path_of(t);
    f.rule = "small_copies";
    f.what = std::to_string(group.count) + " " + std::string(to_string(t.kind())) +
             " copies of at most " + dvdg::format_bytes(context.limits.small_copy_bytes) +
             " each (" + dvdg::format_bytes(group.bytes) + " in all) from " +
             buffers_named(facts, group.sources, group.unallocated_source) + " to " +
             buffers_named(facts, group.destinations, group.unallocated_destination) +
             ": each pays the copy latency";
    f.names.push_back(std::to_string(group.count) + " x " + std::string(to_string(t.kind())) +
                      " copy, " + dvdg::format_bytes(group.bytes / group.count) + " average");
    f.cost_ns = group.now;
    set_saving(f, group.now, context.cost.time_ns(path, group.bytes),
               "one copy of " + dvdg::format_bytes(group.bytes) + ": " +
                   context.cost.describe(path));
    f.fix = "gather the " + std::to_string(group.count) +
            " pieces into one buffer and copy it once (cudaMemcpy2D/3D for strided pieces)";
    findings.push_back(std::move(f));
  }
}

void sync_copy(const RuleContext& context, std::vector<Finding>& findings) {
  std::vector<Transfer> copies;
  for (const Transfer& t : context.facts.ops().copies()) {
    if (t.kind() != CopyKind::Prefetch) copies.push_back(t);
  }
  blocking_transfers(context, copies, "sync_copy", findings);
}

void sync_memset(const RuleContext& context, std::vector<Finding>& findings) {
  blocking_transfers(context, context.facts.ops().memsets(), "sync_memset", findings);
}

void numa_far_host_buffer(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  struct Group {
    Finding finding;
    const Transfer* first = nullptr;
    int64_t count = 0, bytes = 0, now = 0, near = 0;
    double predicted = 0;
    bool known = true;
  };
  std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t>, Group> groups;
  for (const Transfer& t : facts.ops().copies()) {
    if (!host_device_copy(t) || !t.timed()) continue;
    const Device* device = facts.ops().device(t.device());
    std::optional<int64_t> node = t.host_numa();
    if (!device || !device->numa_node() || *device->numa_node() < 0 || !node || *node < 0 ||
        *node == *device->numa_node())
      continue;
    auto [alloc, address] = host_buffer(t);
    Group& group = groups[{static_cast<int>(t.kind()), alloc, address, device->id(), *node}];
    if (!group.first) {
      group.first = &t;
      group.near = *device->numa_node();
      locate(context, group.finding, t.correlation(), t.api_start_ns().value_or(*t.gpu_start_ns()));
    }
    TransferPath near = path_of(t);
    near.numa_node = *device->numa_node();
    std::optional<double> predicted = context.cost.time_ns(near, t.bytes());
    group.known = group.known && predicted;
    group.predicted += predicted.value_or(0);
    ++group.count;
    group.bytes = saturating_add(group.bytes, t.bytes());
    group.now = saturating_add(group.now, t.gpu_ns());
    add_row(context, group.finding, "memcpys", t.id());
    add_name(group.finding, transfer_name(t));
  }
  for (auto& [key, group] : groups) {
    if (group.now < context.limits.min_cost_ns) continue;
    Finding& f = group.finding;
    const Transfer& t = *group.first;
    int64_t node = std::get<4>(key);
    f.rule = "numa_far_host_buffer";
    f.what = std::to_string(group.count) + " " + std::string(to_string(t.kind())) + " copies (" +
             dvdg::format_bytes(group.bytes) + ") between " + host_buffer_name(facts, t) +
             " on NUMA node " + std::to_string(node) + " and device " +
             std::to_string(std::get<3>(key)) + ", whose NUMA node is " +
             std::to_string(group.near);
    f.cost_ns = group.now;
    TransferPath near = path_of(t);
    near.numa_node = group.near;
    set_saving(f, group.now, group.known ? std::optional<double>(group.predicted) : std::nullopt,
               "from NUMA node " + std::to_string(group.near) + ": " + context.cost.describe(near));
    f.fix = "allocate (and first touch) this buffer on NUMA node " + std::to_string(group.near) +
            ": run the thread that fills it under numactl --cpunodebind=" +
            std::to_string(group.near) + " --membind=" + std::to_string(group.near);
    findings.push_back(std::move(f));
  }
}

}  // namespace apptracer::diagnose
