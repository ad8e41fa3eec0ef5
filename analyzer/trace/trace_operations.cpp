#include "analyzer/trace/trace_operations.h"

#include <algorithm>
#include <tuple>

#include "analyzer/trace/step_window.h"
#include "analyzer/trace/trace.h"

namespace apptracer::trace {

namespace {

// The bytes a copy's endpoint spans from its first byte: the copy's bytes,
// or for a 2D/3D copy its rows at their pitch.
int64_t span_of(int64_t bytes, NullableInt width, NullableInt height, NullableInt pitch) {
  if (!width || !height || !pitch || *height <= 0) return bytes;
  return std::max(bytes, (*height - 1) * *pitch + *width);
}

template <typename View>
const View* by_id(const std::vector<View>& views, int64_t id) {
  auto found = std::lower_bound(views.begin(), views.end(), id,
                                [](const View& view, int64_t wanted) { return view.id() < wanted; });
  return found != views.end() && found->id() == id ? &*found : nullptr;
}

}  // namespace

Endpoint Transfer::source() const {
  if (memset_) return destination();
  return {copy_->src_alloc_id, copy_->src_address,  copy_->src_offset, copy_->src_device,
          copy_->src_numa_node, copy_->src_memory,
          span_of(copy_->bytes, copy_->width, copy_->height, copy_->src_pitch)};
}

Endpoint Transfer::destination() const {
  if (memset_) {
    return {memset_->alloc_id, memset_->address, memset_->alloc_offset, memset_->device, {},
            memset_->memory,   memset_->bytes};
  }
  return {copy_->dst_alloc_id, copy_->dst_address,  copy_->dst_offset, copy_->dst_device,
          copy_->dst_numa_node, copy_->dst_memory,
          span_of(copy_->bytes, copy_->width, copy_->height, copy_->dst_pitch)};
}

MemoryKind Transfer::host_memory() const {
  if (kind() == CopyKind::HtoD) return src_memory();
  if (kind() == CopyKind::DtoH) return dst_memory();
  return MemoryKind::Unknown;
}

NullableInt Transfer::host_numa() const {
  if (kind() == CopyKind::HtoD) return src_numa();
  if (kind() == CopyKind::DtoH) return dst_numa();
  return {};
}

NullableInt Transfer::host_alloc() const {
  if (kind() == CopyKind::HtoD) return src_alloc();
  if (kind() == CopyKind::DtoH) return dst_alloc();
  return {};
}

const std::vector<Transfer>& TraceOperations::copies() const {
  if (!copies_) {
    const Rows<MemcpyRow>& rows = trace_->rows<MemcpyRow>();
    copies_.emplace(rows.begin(), rows.end());
  }
  return *copies_;
}

const std::vector<Transfer>& TraceOperations::memsets() const {
  if (!memsets_) {
    const Rows<MemsetRow>& rows = trace_->rows<MemsetRow>();
    memsets_.emplace(rows.begin(), rows.end());
  }
  return *memsets_;
}

const std::vector<Kernel>& TraceOperations::kernels() const {
  if (!kernels_) {
    const Rows<KernelRow>& rows = trace_->rows<KernelRow>();
    kernels_.emplace();
    kernels_->reserve(rows.size());
    for (const Packed<KernelRow>& row : rows)
      kernels_->push_back({&row, string(row.demangled_id ? row.demangled_id : row.name_id, "kernel")});
  }
  return *kernels_;
}

const std::vector<Sync>& TraceOperations::syncs() const {
  if (!syncs_) {
    const Rows<SyncRow>& rows = trace_->rows<SyncRow>();
    syncs_.emplace(rows.begin(), rows.end());
    std::stable_sort(syncs_->begin(), syncs_->end(),
                     [](const Sync& a, const Sync& b) { return a.start_ns() < b.start_ns(); });
  }
  return *syncs_;
}

const std::vector<Allocation>& TraceOperations::allocations() const {
  if (!allocations_) {
    const Rows<AllocationRow>& rows = trace_->rows<AllocationRow>();
    allocations_.emplace(rows.begin(), rows.end());
  }
  return *allocations_;
}

const std::vector<HostCall>& TraceOperations::calls() const {
  if (!calls_) find_calls();
  return *calls_;
}

void TraceOperations::find_calls() const {
  // By correlation id, the runtime call first where a driver call shares it,
  // then by start (the index).
  struct Correlated {
    int64_t correlation_id;
    bool driver;
    uint32_t index;
  };
  std::vector<Correlated> correlated;
  calls_.emplace();
  calls_->reserve(static_cast<size_t>(std::max<int64_t>(0, trace_->row_count(ApiCallRow::kTable))));
  correlated.reserve(calls_->capacity());
  trace_->stream_columns<ApiCallRow>(
      {"id", "correlation_id", "parent_correlation_id", "domain", "name_id", "tid", "start_ns", "end_ns"}, "",
      [&](const Packed<ApiCallRow>& row) {
        if (row.domain != ApiDomain::Runtime && (row.domain != ApiDomain::Driver || row.parent_correlation_id))
          return;
        // Its position once sorted by start, below.
        correlated.push_back({row.correlation_id, row.domain != ApiDomain::Runtime,
                              static_cast<uint32_t>(calls_->size())});
        calls_->emplace_back(row, string(row.name_id, "?"));
      });
  // Ids are unique: any sort gives this order. A thread records its calls
  // as it makes them, so each thread's come in order (sorted where one does
  // not): merged, they take a pass, where sorting them all took a third of
  // a second at 1.2M calls.
  auto before = [&](uint32_t a, uint32_t b) {
    const HostCall &x = (*calls_)[a], &y = (*calls_)[b];
    return x.start_ns() != y.start_ns() ? x.start_ns() < y.start_ns() : x.id() < y.id();
  };
  std::unordered_map<int64_t, std::vector<uint32_t>> of_thread;
  for (uint32_t i = 0; i < calls_->size(); ++i) of_thread[(*calls_)[i].tid()].push_back(i);
  std::vector<uint32_t> order;
  order.reserve(calls_->size());
  std::vector<size_t> runs{0};  // where each thread's run starts in `order`, and its end
  for (auto& [tid, run] : of_thread) {
    if (!std::is_sorted(run.begin(), run.end(), before)) std::sort(run.begin(), run.end(), before);
    order.insert(order.end(), run.begin(), run.end());
    runs.push_back(order.size());
    std::vector<uint32_t>().swap(run);
  }
  of_thread.clear();
  // Merged two by two: log(threads) passes.
  while (runs.size() > 2) {
    std::vector<size_t> merged{0};
    size_t r = 0;
    for (; r + 2 < runs.size(); r += 2) {
      std::inplace_merge(order.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                         order.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]),
                         order.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]), before);
      merged.push_back(runs[r + 2]);
    }
    if (r + 1 < runs.size()) merged.push_back(runs[r + 1]);
    runs.swap(merged);
  }
  std::vector<uint32_t> position(order.size());
  for (uint32_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  std::vector<uint32_t>().swap(order);
  for (Correlated& call : correlated) call.index = position[call.index];
  // Moved into place by swaps, one cycle of the order at a time: a sorted
  // copy would hold the calls twice (66 MB more at 1.2M calls).
  for (uint32_t at = 0; at < position.size(); ++at) {
    while (position[at] != at) {
      uint32_t to = position[at];
      std::swap((*calls_)[at], (*calls_)[to]);
      std::swap(position[at], position[to]);
    }
  }
  index_calls_by_thread();
  std::sort(correlated.begin(), correlated.end(), [](const Correlated& a, const Correlated& b) {
    return std::tie(a.correlation_id, a.driver, a.index) < std::tie(b.correlation_id, b.driver, b.index);
  });
  call_correlations_.reserve(correlated.size());
  call_of_correlation_.reserve(correlated.size());
  for (const Correlated& call : correlated) {
    if (call_correlations_.empty() || call_correlations_.back() != call.correlation_id) {
      call_correlations_.push_back(call.correlation_id);
      call_of_correlation_.push_back(call.index);
    }
  }
  call_correlations_.shrink_to_fit();
  call_of_correlation_.shrink_to_fit();
}

void TraceOperations::index_calls_by_thread() const {
  for (uint32_t index = 0; index < calls_->size(); ++index) calls_by_thread_[(*calls_)[index].tid()].push_back(index);
}

std::optional<TraceOperations::Calls> TraceOperations::release_calls() {
  if (!calls_) return std::nullopt;
  Calls made{std::move(*calls_), std::move(call_correlations_), std::move(call_of_correlation_)};
  calls_.reset();
  calls_by_thread_.clear();
  return made;
}

void TraceOperations::keep_calls(Calls whole, const StepWindow& window) {
  // In place, in order: the calls stay by start, the ids ascending.
  constexpr uint32_t kDropped = UINT32_MAX;
  std::vector<uint32_t> kept_as(whole.calls.size(), kDropped);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < whole.calls.size(); ++i) {
    const HostCall& call = whole.calls[i];
    if (!window.holds(call.process(), call.start_ns())) continue;
    kept_as[i] = kept;
    whole.calls[kept++] = call;
  }
  whole.calls.erase(whole.calls.begin() + kept, whole.calls.end());
  size_t lookups = 0;
  for (size_t i = 0; i < whole.correlations.size(); ++i) {
    uint32_t at = kept_as[whole.of_correlation[i]];
    if (at == kDropped) continue;
    whole.correlations[lookups] = whole.correlations[i];
    whole.of_correlation[lookups++] = at;
  }
  whole.correlations.resize(lookups);
  whole.of_correlation.resize(lookups);
  calls_ = std::move(whole.calls);
  call_correlations_ = std::move(whole.correlations);
  call_of_correlation_ = std::move(whole.of_correlation);
  calls_by_thread_.clear();
  index_calls_by_thread();
}

const std::vector<NvtxRange>& TraceOperations::nvtx() const {
  if (!nvtx_) {
    nvtx_.emplace();
    for (const Packed<NvtxRangeRow>& row : trace_->rows<NvtxRangeRow>()) nvtx_->push_back({&row, string(row.name_id, "?")});
    std::stable_sort(nvtx_->begin(), nvtx_->end(),
                     [](const NvtxRange& a, const NvtxRange& b) { return a.start_ns() < b.start_ns(); });
  }
  return *nvtx_;
}

const std::vector<Device>& TraceOperations::devices() const {
  if (!devices_) {
    devices_.emplace();
    for (const Packed<DeviceRow>& row : trace_->rows<DeviceRow>()) devices_->push_back({&row, trace_->text(row.name)});
  }
  return *devices_;
}

const Transfer* TraceOperations::copy(int64_t id) const { return by_id(copies(), id); }

const Transfer* TraceOperations::memset(int64_t id) const { return by_id(memsets(), id); }

const Kernel* TraceOperations::kernel(int64_t id) const {
  const std::vector<Kernel>& all = kernels();
  auto found = std::lower_bound(all.begin(), all.end(), id,
                                [](const Kernel& kernel, int64_t wanted) { return kernel.row->id < wanted; });
  return found != all.end() && found->row->id == id ? &*found : nullptr;
}

const Allocation* TraceOperations::allocation(NullableInt id) const {
  return id ? by_id(allocations(), *id) : nullptr;
}

const Device* TraceOperations::device(NullableInt id) const { return id ? by_id(devices(), *id) : nullptr; }

const HostCall* TraceOperations::call(NullableInt correlation) const {
  if (!correlation) return nullptr;
  const std::vector<HostCall>& all = calls();
  auto found = std::lower_bound(call_correlations_.begin(), call_correlations_.end(), *correlation);
  if (found == call_correlations_.end() || *found != *correlation) return nullptr;
  return &all[call_of_correlation_[static_cast<size_t>(found - call_correlations_.begin())]];
}

const HostCall* TraceOperations::next_call_on_thread(const HostCall& call) const {
  const std::vector<HostCall>& all = calls();
  auto thread = calls_by_thread_.find(call.tid());
  if (thread == calls_by_thread_.end()) return nullptr;
  const std::vector<uint32_t>& order = thread->second;
  auto after = std::upper_bound(order.begin(), order.end(), call, [&](const HostCall& c, uint32_t i) {
    const HostCall& other = all[i];
    return c.start_ns() != other.start_ns() ? c.start_ns() < other.start_ns() : c.id() < other.id();
  });
  return after == order.end() ? nullptr : &all[*after];
}

std::string TraceOperations::call_site(NullableInt correlation) const {
  const HostCall* found = call(correlation);
  if (!found) return "";
  return std::string(found->name) + " (thread " + std::to_string(found->tid()) + ")";
}

std::string TraceOperations::nvtx_at(NullableInt tid, int64_t ns) const {
  const NvtxRange* innermost = nullptr;
  for (const NvtxRange& range : nvtx()) {
    if (range.start_ns() > ns) break;
    if (range.end_ns() < ns) continue;
    if (tid && range.tid() && *range.tid() != *tid) continue;
    // Ranges are sorted by start: a later start inside is a nested one.
    innermost = &range;
  }
  return innermost ? std::string(innermost->name) : std::string();
}

FrameworkContext TraceOperations::framework_context(const Kernel& kernel) const {
  return framework_context(kernel.row->process, kernel.row->call_correlation_id);
}

FrameworkContext TraceOperations::framework_context(ProcessId process, NullableInt correlation) const {
  const FrameworkContexts& contexts = trace_->framework_contexts();
  if (!contexts.recorded()) return {};
  return contexts.of_call(process, correlation);
}

int64_t TraceOperations::time_in_scopes(ProcessId process, int64_t tid, int64_t from, int64_t to,
                                        std::string_view prefix) const {
  const FrameworkContexts& contexts = trace_->framework_contexts();
  if (!contexts.recorded()) return 0;
  return contexts.time_in_scopes(process, tid, from, to,
                                 [&](int64_t name_id) { return string(name_id, "").substr(0, prefix.size()) == prefix; });
}

std::string TraceOperations::framework_label(const FrameworkContext& context) const {
  std::string module = context.module_id ? module_label(string(context.module_id, "?"), context.phase) : "";
  std::string op = context.op_id ? std::string(string(context.op_id, "?")) : "";
  if (module.empty()) return op.empty() ? "" : "op " + op;
  return "module " + module + (op.empty() ? "" : ", op " + op);
}

std::optional<int64_t> TraceOperations::step_of(const Operation& op) const { return trace_->steps().step_of(op); }

std::string_view TraceOperations::string(NullableInt id, std::string_view fallback) const {
  return trace_->string(id.optional(), fallback);
}

const TraceSpan& TraceOperations::span() const {
  if (span_) return *span_;
  span_.emplace();
  TraceSpan& span = *span_;
  auto widen = [&](NullableInt ns, int64_t process) {
    if (!ns || *ns <= 0) return;
    if (span.start_ns == 0 || *ns < span.start_ns) span.start_ns = *ns;
    span.end_ns = std::max(span.end_ns, *ns);
    auto [at, added] = span.processes.try_emplace(process, *ns, *ns);
    if (added) return;
    at->second.first = std::min(at->second.first, *ns);
    at->second.second = std::max(at->second.second, *ns);
  };
  for (const HostCall& call : calls()) {
    widen(call.start_ns(), call.process());
    widen(call.end_ns(), call.process());
  }
  for (const auto* transfers : {&copies(), &memsets()}) {
    for (const Transfer& t : *transfers) {
      widen(t.gpu_start_ns(), t.process());
      widen(t.gpu_end_ns(), t.process());
    }
  }
  for (const Kernel& k : kernels()) {
    widen(k.row->gpu_start_ns, k.row->process);
    widen(k.row->gpu_end_ns, k.row->process);
  }
  for (const Sync& sync : syncs()) {
    widen(sync.start_ns(), sync.process());
    widen(sync.end_ns(), sync.process());
  }
  for (const Allocation& alloc : allocations()) {
    widen(alloc.alloc_ns(), alloc.process());
    widen(alloc.free_ns(), alloc.process());
  }
  return span;
}

const std::vector<StepSpan>& TraceOperations::steps() const {
  if (!steps_) find_steps();
  return *steps_;
}

const std::vector<StartUp>& TraceOperations::startups() const {
  if (!steps_) find_steps();
  return startups_;
}

std::optional<int64_t> TraceOperations::startup_end_ns() const {
  if (!steps_) find_steps();
  return startup_end_ns_;
}

void TraceOperations::find_steps() const {
  steps_.emplace();
  const StepWindow* window = trace_->window();
  for (const ProcessSteps& process : trace_->steps().processes) {
    std::optional<int64_t> end = process.startup_end_ns();
    if (!end) continue;
    startup_end_ns_ = std::min(startup_end_ns_.value_or(*end), *end);
    size_t first = process.first_steady();
    startups_.push_back({process.process, process.start_ns, *end, process.steps[first].number, process.how_found()});
    for (size_t i = 0; i < process.steps.size(); ++i) {
      const Step& step = process.steps[i];
      bool covered = window ? window->holds(process.process, step.start_ns) : i >= first;
      if (covered) steps_->push_back({process.process, step.number, step.start_ns, step.end_ns});
    }
  }
}

}  // namespace apptracer::trace
