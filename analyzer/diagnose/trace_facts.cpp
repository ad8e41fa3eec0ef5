#include "analyzer/trace/trace.h"
#include "analyzer/diagnose/trace_facts.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>

#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/labels.h"

namespace apptracer::diagnose {

namespace {

using trace::Packed;

class Reader {
 public:
  Reader(trace::Trace& trace, TraceFacts& facts) : trace_(trace), facts_(facts) {}

  void read(Progress* progress) {
    show_phase(progress, "reading the trace");
    read_calls();
    read_copies();
    read_memsets();
    read_kernels();
    read_syncs();
    read_allocations();
    read_framework_blocks();
    read_communication_calls();
    read_annotations();
    facts_.origin = trace_.origin();
    read_steps();
    facts_.framework = trace::detect_framework(trace_);
    facts_.tracing_level = model::tracing_level_of(trace_.meta("options"));
    facts_.um = trace_.unified_memory();
    facts_.um_migrations_not_recorded = uses_managed_memory() && migrations_not_asked_for();
    facts_.graph = dvdg::build_graph_from_trace(trace_, dvdg::KernelAccesses::Exact, progress);
    show_phase(progress, "memory");
    facts_.memory_model = memory::build_memory_model(trace_, facts_.graph);
    facts_.producers = std::make_shared<memory::Producers>(trace_);
    facts_.stragglers = ranks::find_stragglers(trace_, ranks::kStragglerMinLateNs).late;
  }

 private:
  void read_steps() {
    const trace::StepWindow* window = trace_.window();
    if (window) facts_.step_window = window->describe();
    for (const trace::ProcessSteps& process : trace_.steps().processes) {
      std::optional<int64_t> end = process.startup_end_ns();
      if (!end) continue;
      facts_.startup_end_ns = std::min(facts_.startup_end_ns.value_or(*end), *end);
      size_t first = process.first_steady();
      facts_.startups.push_back({process.process, process.start_ns, *end,
                                 process.steps[first].number, process.how_found()});
      for (size_t i = 0; i < process.steps.size(); ++i) {
        const trace::Step& step = process.steps[i];
        bool covered = window ? window->holds(process.process, step.start_ns) : i >= first;
        if (covered) facts_.steps.push_back({process.process, step.number, step.start_ns, step.end_ns});
      }
    }
  }

  // A name's text, held once by the facts; `fallback` when there is none.
  std::string_view name(NullableInt id, std::string_view fallback) {
    if (!id) return fallback;
    auto [it, added] = facts_.names.try_emplace(*id);
    if (added) it->second = trace_.string(id, fallback);
    return it->second;
  }

  void widen(NullableInt ns, int64_t process) {
    if (!ns || *ns <= 0) return;
    if (facts_.start_ns == 0 || *ns < facts_.start_ns) facts_.start_ns = *ns;
    facts_.end_ns = std::max(facts_.end_ns, *ns);
    auto [span, added] = facts_.process_spans.try_emplace(process, *ns, *ns);
    if (added) return;
    span->second.first = std::min(span->second.first, *ns);
    span->second.second = std::max(span->second.second, *ns);
  }

  // Runtime calls, and driver calls no runtime call made (CUDA 13 gives a
  // driver call inside a runtime call the runtime call's correlation id).
  void read_calls() {
    std::vector<const Packed<ApiCallRow>*> made;
    for (const Packed<ApiCallRow>& row : trace_.rows<ApiCallRow>()) {
      if (row.domain == ApiDomain::Runtime ||
          (row.domain == ApiDomain::Driver && !row.parent_correlation_id))
        made.push_back(&row);
    }
    std::stable_sort(made.begin(), made.end(), [](const auto* a, const auto* b) {
      return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->id < b->id;
    });
    facts_.all_calls.reserve(made.size());
    runtime_.reserve(made.size());
    for (const Packed<ApiCallRow>* row : made) {
      runtime_.push_back(row->domain == ApiDomain::Runtime);
      HostCall call{row->id, name(row->name_id, "?"), row->tid, row->start_ns, row->end_ns};
      auto index = static_cast<uint32_t>(facts_.all_calls.size());
      facts_.calls_by_thread[call.tid].push_back(index);
      facts_.calls.emplace_back(row->correlation_id, index);
      facts_.all_calls.push_back(call);
      widen(call.start_ns, row->process);
      widen(call.end_ns, row->process);
    }
    // By correlation id, the runtime call first where a driver call shares it.
    std::stable_sort(facts_.calls.begin(), facts_.calls.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return is_runtime(a.second) && !is_runtime(b.second);
    });
    facts_.calls.erase(std::unique(facts_.calls.begin(), facts_.calls.end(),
                                   [](const auto& a, const auto& b) { return a.first == b.first; }),
                       facts_.calls.end());
    runtime_.clear();
  }

  bool is_runtime(uint32_t call) const { return runtime_[call]; }

  // What a copy and a memset share: the stream and call that issued it, and
  // its times.
  template <typename Row>
  void read_issue_and_times(const Packed<Row>& row, Transfer& t) {
    t.stream = row.stream;
    t.is_async = row.is_async != 0;
    t.correlation = row.call_correlation_id;
    t.api_start_ns = row.api_start_ns;
    t.gpu_start_ns = row.gpu_start_ns;
    t.gpu_end_ns = row.gpu_end_ns;
    widen(t.gpu_start_ns, row.process);
    widen(t.gpu_end_ns, row.process);
  }

  bool uses_managed_memory() const {
    return std::any_of(facts_.allocations.begin(), facts_.allocations.end(),
                       [](const Allocation& a) { return a.kind == AllocKind::Managed; });
  }

  // meta um_counters: "enabled: ...; unsupported: ...; not asked for: bytes HtoD, ...".
  bool migrations_not_asked_for() {
    std::string counters = trace_.meta("um_counters");
    size_t not_asked = counters.find("not asked for:");
    return not_asked != std::string::npos &&
           counters.find(to_string(UmCounterKind::BytesHtoD), not_asked) != std::string::npos;
  }

  void read_copies() {
    for (const Packed<MemcpyRow>& row : trace_.rows<MemcpyRow>()) {
      Transfer t;
      t.id = row.id;
      t.kind = row.kind;
      t.bytes = row.bytes;
      t.src_memory = row.src_memory;
      t.dst_memory = row.dst_memory;
      t.src_alloc = row.src_alloc_id;
      t.dst_alloc = row.dst_alloc_id;
      t.src_address = row.src_address;
      t.dst_address = row.dst_address;
      t.src_offset = row.src_offset;
      t.dst_offset = row.dst_offset;
      t.src_numa = row.src_numa_node;
      t.dst_numa = row.dst_numa_node;
      t.device = trace::copy_device(row);
      read_issue_and_times(row, t);
      facts_.copies.push_back(t);
    }
  }

  void read_memsets() {
    for (const Packed<MemsetRow>& row : trace_.rows<MemsetRow>()) {
      Transfer t;
      t.is_memset = true;
      t.id = row.id;
      t.bytes = row.bytes;
      t.src_memory = t.dst_memory = row.memory;
      t.dst_alloc = row.alloc_id;
      t.dst_address = row.address;
      t.dst_offset = row.alloc_offset;
      t.device = row.device;
      read_issue_and_times(row, t);
      facts_.memsets.push_back(t);
    }
  }

  void read_kernels() {
    facts_.kernels.reserve(trace_.rows<KernelRow>().size());
    const trace::FrameworkContexts& contexts = trace_.framework_contexts();
    for (const Packed<KernelRow>& row : trace_.rows<KernelRow>()) {
      Kernel& kernel = facts_.kernels.emplace_back();
      kernel.row = &row;
      kernel.name = name(row.demangled_id ? row.demangled_id : row.name_id, "kernel");
      if (contexts.recorded()) {
        trace::FrameworkContext context = contexts.of_call(row.process, row.call_correlation_id);
        if (context.module_id) kernel.module = name(context.module_id, "");
        kernel.module_phase = context.phase;
      }
      widen(row.gpu_start_ns, row.process);
      widen(row.gpu_end_ns, row.process);
    }
  }

  void read_syncs() {
    for (const Packed<SyncRow>& row : trace_.rows<SyncRow>()) {
      facts_.syncs.push_back({row.id, row.kind, row.device, row.stream, row.call_correlation_id,
                              row.tid, row.start_ns, row.end_ns, row.process});
      widen(row.start_ns, row.process);
      widen(row.end_ns, row.process);
    }
    std::stable_sort(facts_.syncs.begin(), facts_.syncs.end(),
                     [](const Sync& a, const Sync& b) { return a.start_ns < b.start_ns; });
  }

  void read_allocations() {
    for (const Packed<AllocationRow>& row : trace_.rows<AllocationRow>()) {
      facts_.allocations.push_back({row.id, row.kind, row.address, row.bytes, row.device,
                                    row.numa_node, row.alloc_correlation_id,
                                    row.free_correlation_id, row.alloc_ns, row.free_ns,
                                    row.process});
      widen(row.alloc_ns, row.process);
      widen(row.free_ns, row.process);
    }
  }

  // An allocation holds framework blocks when any block's bytes overlap it.
  void read_framework_blocks() {
    facts_.framework_segments = memory::FrameworkSegments(trace_);
    for (Allocation& alloc : facts_.allocations) {
      alloc.holds_framework_blocks =
          facts_.framework_segments.holder(alloc.process, alloc.address, alloc.bytes).has_value();
    }
  }

  void read_communication_calls() { facts_.communication_calls = memory::CommunicationCalls(trace_); }

  void read_annotations() {
    for (const Packed<NvtxRangeRow>& row : trace_.rows<NvtxRangeRow>()) {
      facts_.nvtx.push_back({name(row.name_id, "?"), row.tid, row.start_ns,
                             row.end_ns.value_or(row.start_ns), row.depth.value_or(0)});
    }
    std::stable_sort(facts_.nvtx.begin(), facts_.nvtx.end(), [](const NvtxRange& a, const NvtxRange& b) {
      return a.start_ns < b.start_ns;
    });
    for (const Packed<MemAdviceRow>& row : trace_.rows<MemAdviceRow>())
      facts_.advice.push_back({row.id, row.advice, row.alloc_id, row.ns});
    std::stable_sort(facts_.advice.begin(), facts_.advice.end(),
                     [](const Advice& a, const Advice& b) { return a.ns < b.ns; });
    for (const Packed<DeviceRow>& row : trace_.rows<DeviceRow>())
      facts_.devices.push_back({row.id, std::string(trace_.text(row.name)), row.numa_node,
                                row.cc_major, row.cc_minor});
  }

  trace::Trace& trace_;
  TraceFacts& facts_;
  std::vector<bool> runtime_;  // per call in all_calls, while the calls are read
};

int64_t id_of(const Kernel& kernel) { return kernel.row->id; }
template <typename Fact>
int64_t id_of(const Fact& fact) {
  return fact.id;
}

template <typename Rows>
const typename Rows::value_type* by_id(const Rows& rows, int64_t id) {
  auto found = std::lower_bound(rows.begin(), rows.end(), id,
                                [](const auto& row, int64_t wanted) { return id_of(row) < wanted; });
  return found != rows.end() && id_of(*found) == id ? &*found : nullptr;
}

}  // namespace

MemoryKind Transfer::host_memory() const {
  if (kind == CopyKind::HtoD) return src_memory;
  if (kind == CopyKind::DtoH) return dst_memory;
  return MemoryKind::Unknown;
}

NullableInt Transfer::host_numa() const {
  if (kind == CopyKind::HtoD) return src_numa;
  if (kind == CopyKind::DtoH) return dst_numa;
  return {};
}

NullableInt Transfer::host_alloc() const {
  if (kind == CopyKind::HtoD) return src_alloc;
  if (kind == CopyKind::DtoH) return dst_alloc;
  return {};
}

const HostCall* TraceFacts::call(NullableInt correlation) const {
  if (!correlation) return nullptr;
  auto found = std::lower_bound(calls.begin(), calls.end(), std::make_pair(*correlation, uint32_t{0}));
  return found != calls.end() && found->first == *correlation ? &all_calls[found->second] : nullptr;
}

bool TraceFacts::inside_communication_call(NullableInt correlation) const {
  const HostCall* made = call(correlation);
  return made && communication_calls.contains(made->tid, made->start_ns, made->end_ns);
}

bool TraceFacts::library_memory(const Allocation& alloc) const {
  return memory::library_owner(alloc.kind, inside_communication_call(alloc.alloc_correlation),
                               framework_segments.framework_process(alloc.process),
                               alloc.holds_framework_blocks)
      .has_value();
}

bool TraceFacts::library_transfer(const Transfer& transfer) const {
  if (inside_communication_call(transfer.correlation)) return true;
  for (NullableInt id : {transfer.src_alloc, transfer.dst_alloc}) {
    const Allocation* alloc = allocation(id);
    if (alloc && library_memory(*alloc)) return true;
  }
  return false;
}

const Allocation* TraceFacts::allocation(NullableInt id) const {
  return id ? by_id(allocations, *id) : nullptr;
}

const Kernel* TraceFacts::kernel(int64_t id) const { return by_id(kernels, id); }
const Transfer* TraceFacts::copy(int64_t id) const { return by_id(copies, id); }

const Device* TraceFacts::device(NullableInt id) const {
  return id ? by_id(devices, *id) : nullptr;
}

const HostCall* TraceFacts::next_call_on_thread(const HostCall& call) const {
  auto thread = calls_by_thread.find(call.tid);
  if (thread == calls_by_thread.end()) return nullptr;
  const std::vector<uint32_t>& order = thread->second;
  auto after = std::upper_bound(order.begin(), order.end(), call, [&](const HostCall& c, uint32_t i) {
    const HostCall& other = all_calls[i];
    return c.start_ns != other.start_ns ? c.start_ns < other.start_ns : c.id < other.id;
  });
  return after == order.end() ? nullptr : &all_calls[*after];
}

std::string TraceFacts::nvtx_at(NullableInt tid, int64_t ns) const {
  const NvtxRange* innermost = nullptr;
  for (const NvtxRange& range : nvtx) {
    if (range.start_ns > ns) break;
    if (range.end_ns < ns) continue;
    if (tid && range.tid && *range.tid != *tid) continue;
    // Ranges are sorted by start: a later start inside is a nested one.
    innermost = &range;
  }
  return innermost ? std::string(innermost->name) : std::string();
}

std::string TraceFacts::call_site(NullableInt correlation) const {
  const HostCall* found = call(correlation);
  if (!found) return "";
  return std::string(found->name) + " (thread " + std::to_string(found->tid) + ")";
}

std::unordered_map<int64_t, Intervals> TraceFacts::busy_by_device() const {
  std::unordered_map<int64_t, Intervals> busy;
  auto add = [&](NullableInt device, NullableInt start, NullableInt end) {
    if (!start || !end || *end < *start) return;
    busy[device.value_or(0)].emplace_back(*start, *end);
  };
  for (const Kernel& k : kernels) add(k.row->device, k.row->gpu_start_ns, k.row->gpu_end_ns);
  for (const Transfer& t : copies) add(t.device, t.gpu_start_ns, t.gpu_end_ns);
  for (const Transfer& t : memsets) add(t.device, t.gpu_start_ns, t.gpu_end_ns);
  for (auto& [device, intervals] : busy) merge_intervals(intervals);
  return busy;
}

int64_t TraceFacts::step_count() const {
  std::unordered_map<int64_t, int64_t> per_process;
  int64_t most = 0;
  for (const StepSpan& step : steps) most = std::max(most, ++per_process[step.process]);
  return most;
}

int64_t TraceFacts::run_ns() const {
  Intervals spans;
  for (const auto& [process, span] : process_spans) spans.push_back(span);
  merge_intervals(spans);
  return covered_ns(spans, INT64_MIN, INT64_MAX);
}

int64_t TraceFacts::process_end_ns(int64_t process) const {
  auto found = process_spans.find(process);
  return found == process_spans.end() ? end_ns : found->second.second;
}

TraceFacts read_trace_facts(trace::Trace& trace, Progress* progress) {
  TraceFacts facts;
  Reader(trace, facts).read(progress);
  return facts;
}

void merge_intervals(Intervals& intervals) {
  std::sort(intervals.begin(), intervals.end());
  size_t kept = 0;
  for (const auto& interval : intervals) {
    if (kept > 0 && interval.first <= intervals[kept - 1].second) {
      intervals[kept - 1].second = std::max(intervals[kept - 1].second, interval.second);
    } else {
      intervals[kept++] = interval;
    }
  }
  intervals.resize(kept);
}

int64_t covered_ns(const Intervals& merged, int64_t from, int64_t to) {
  // Merged intervals are sorted and apart: the first that ends after `from`
  // is found, not scanned for (a long run has millions; rules ask thousands
  // of times).
  auto first = std::upper_bound(merged.begin(), merged.end(), from,
                                [](int64_t at, const std::pair<int64_t, int64_t>& interval) {
                                  return at < interval.second;
                                });
  int64_t total = 0;
  for (auto it = first; it != merged.end() && it->first < to; ++it)
    total = saturating_add(total, elapsed_ns(std::max(it->first, from), std::min(it->second, to)));
  return total;
}

std::string transfer_name(const Transfer& transfer) {
  if (transfer.is_memset) return "memset of " + dvdg::format_bytes(transfer.bytes);
  return std::string(to_string(transfer.kind)) + " copy of " + dvdg::format_bytes(transfer.bytes);
}

std::string allocation_name(const TraceFacts& facts, NullableInt alloc_id) {
  const Allocation* found = facts.allocation(alloc_id);
  if (!found) return "memory in no known allocation";
  std::string name = "alloc #" + std::to_string(found->id) + " (" +
                     std::string(to_string(found->kind)) + ", " +
                     dvdg::format_bytes(found->bytes);
  if (found->device) name += ", device " + std::to_string(*found->device);
  return name + ")";
}

std::string format_ns(int64_t ns) {
  char text[32];
  double value = static_cast<double>(ns);
  if (ns >= 1'000'000'000) {
    std::snprintf(text, sizeof text, "%.2f s", value / 1e9);
  } else if (ns >= 1'000'000) {
    std::snprintf(text, sizeof text, "%.2f ms", value / 1e6);
  } else if (ns >= 1'000) {
    std::snprintf(text, sizeof text, "%.1f us", value / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%" PRId64 " ns", ns);
  }
  return text;
}

}  // namespace apptracer::diagnose
