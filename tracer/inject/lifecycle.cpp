// Starting and finishing the tracer inside the program: start() sets up
// every stage once, whichever injection route comes first
// (injection_routes.cpp); finish() writes the trace's end once, at exit() or
// _exit() of the process that started it (exit_exec.cpp), or when a capture
// stops.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>

#include <cupti.h>

#include "apptracer/output_path.h"
#include "apptracer/schema.h"
#include "apptracer/version.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/driver.h"
#include "base/inside_tracer.h"
#include "base/log.h"
#include "base/self_cost.h"
#include "base/signal_sets.h"
#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "capture/activity_flusher.h"
#include "capture/capture.h"
#include "capture/live_cuda_queries.h"
#include "collectives/collective_capture.h"
#include "exact/exact.h"
#include "frameworks/sub_allocation_events.h"
#include "host/host_allocator.h"
#include "host/host_blocks.h"
#include "inject/lifecycle.h"
#include "store/writer.h"
#include "translate/api_dispatch.h"
#include "translate/nvtx_injection.h"

namespace apptracer::inject {

__constinit TracerState state;

namespace {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

}  // namespace

void record_process_meta(const Config& config) {
  Writer& w = *state.writer;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  int cupti_version = 0;
  // The sanitizer-only run of --exact keeps CUPTI out of the process entirely.
  if (config.exact != ExactMode::SanitizerOnly) {
    cuptiGetVersion(reinterpret_cast<uint32_t*>(&cupti_version));
  }
  auto utc_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  w.set_meta("tracer_version", kVersion);
  w.set_meta("pid", std::to_string(getpid()));
  w.set_meta("ppid", std::to_string(getppid()));
  w.set_meta("host", host);
  w.set_meta("command_line", command_line());
  w.set_meta("start_time_utc_ns", std::to_string(utc_ns));
  w.set_meta("start_ns", std::to_string(now_ns()));
  w.set_meta("cupti_api_version", std::to_string(cupti_version));
  w.set_meta("options", config.describe());
  bool unavailable = config.host_allocations != HostAllocations::Off && !state.allocator_hooked;
  const char* why_unavailable =
      state.attached_late ? "unavailable: the allocator is not interposed (capture started in-process; "
                      "preload with LD_PRELOAD or apptracer record)"
                    : "unavailable: the allocator is not interposed (injected through "
                      "CUDA_INJECTION64_PATH; preload with LD_PRELOAD or apptracer record)";
  w.set_meta("host_allocations", unavailable ? why_unavailable : to_string(config.host_allocations));
}

// Termination signals wait on this thread until the trace's end is
// written: a pool worker that was exiting when its pool's SIGTERM came died
// inside this write, its trace left without its end (multiprocessing
// forkserver workers). An exiting process then exits as it was about to;
// otherwise the signal arrives once the mask is restored. Another thread
// that gets such a signal meanwhile leaves it held, and it is sent again
// once the end is written (fatal_signals.cpp).
void finish(const char* status) {
  // A vfork child shares our memory.
  if (!state.started || getpid() != state.owner_pid.load()) return;
  if (state.finished.exchange(true)) return;
  SignalsBlocked held(termination_signals());
  InsideTracer inside;  // the final write may open the trace on this thread
  uint64_t finish_start = now_ns();
  if (state.exact_active) exact::finish_exact();
  if (state.activity_flusher) state.activity_flusher->stop();
  if (state.activity_usable) flush_activity();
  // What exiting costs a program is part of what tracing costs it.
  state.writer->set_meta("finish.activity_ms", std::to_string((now_ns() - finish_start) / 1000000));
  host_blocks::disable();
  state.writer->set_meta("host_alloc_histogram", host_blocks::histogram_json());
  state.writer->set_meta("host_blocks_stored", std::to_string(host_blocks::stored_blocks()));
  state.writer->set_meta("host_blocks_not_kept", std::to_string(host_blocks::not_kept_blocks()));
  state.writer->set_meta("host_block_lookups", std::to_string(host_blocks::lookups()));
  state.writer->set_meta("host_block_lookups_cut", std::to_string(host_blocks::lookups_cut()));
  state.writer->finish(status);
  state.final_write_done = true;
  resend_held_signal();
}

namespace {

// The runtime's version is only visible when the program loads cudart as a
// shared library (PyTorch, CuPy); nvcc links it statically by default.
std::string runtime_version() {
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion"));
  int version = 0;
  if (get && get(&version) == 0) return std::to_string(version);
  return "unknown (cudart linked statically, or driver API only)";
}

void on_context_created() {
  for (const DeviceInfo& device : driver_devices()) state.writer->add_device(device);
  state.writer->set_meta("cuda_driver_version", std::to_string(driver_version()));
  state.writer->set_meta("cuda_runtime_version", runtime_version());
}

void set_meta(const std::string& key, const std::string& value) {
  state.writer->set_meta(key, value);
}

// --exact: the sanitizer subscribes after CUPTI (the order its coexistence
// was probed in, record --exact). Unavailable: one line, normal recording.
bool start_exact_mode(const Config& config) {
  bool sanitizer_only = config.exact == ExactMode::SanitizerOnly;
  exact::ExactOptions options;
  options.with_capture = !sanitizer_only;
  options.pool.slots = config.exact_slots;
  options.pool.capacity = config.exact_pages;
  exact::ExactHooks hooks{*state.buffers, strings(), allocations(), now_ns,
                          sanitizer_only ? nullptr : current_outer_correlation_id, set_meta};
  std::string why_not;
  if (!exact::start_exact(options, hooks, why_not)) {
    log_warn("--exact unavailable: {}; recording in normal mode", why_not);
    set_meta("exact", "unavailable: " + why_not);
    return false;
  }
  const char* path = sanitizer_only ? "sanitizer run (the second of two)" : "one run";
  log_info("--exact: {}", path);
  set_meta("exact", "on");
  set_meta("exact_path", path);
  return true;
}

// Each NVTX instance finds its tool in NVTX_INJECTION64_PATH at its first
// call: name this library, unless another tool (Nsight Systems) holds it.
// CUPTI, which some images name there, gives way to us.
void become_nvtx_injection() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&become_nvtx_injection), &self) || !self.dli_fname) return;
  const char* current = std::getenv("NVTX_INJECTION64_PATH");
  std::string named = current ? current : "";
  if (!named.empty() && named != self.dli_fname) {
    if (named.find("libcupti") == std::string::npos) {
      log_warn("NVTX_INJECTION64_PATH names {}: NVTX ranges are left to it, not recorded", named);
      return;
    }
    log_info("NVTX_INJECTION64_PATH named {}; apptracer records NVTX ranges instead", named);
  }
  setenv("NVTX_INJECTION64_PATH", self.dli_fname, 1);
}

std::string this_library_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&this_library_path), &info) || !info.dli_fname) return "";
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
}

// NCCL loads its profiler plugin from the path NCCL_PROFILER_PLUGIN names, at
// the first communicator's creation: this library serves it
// (collectives/nccl_profiler.h). A program's own plugin keeps its place; the
// NCCL API is still recorded through interposition.
void serve_nccl_profiler() {
  std::string self = this_library_path();
  if (self.empty()) return;
  const char* existing = std::getenv("NCCL_PROFILER_PLUGIN");
  if (existing && self != existing) {
    log_warn(
        "NCCL_PROFILER_PLUGIN is set ({}): NCCL's profiler stays the program's; collectives are "
        "recorded from the NCCL API only (no kernel times, algorithms or NCCL sequence numbers)",
        existing);
    return;
  }
  setenv("NCCL_PROFILER_PLUGIN", self.c_str(), 1);
}

// What the collectives stage asks of the live process.
int64_t current_stream_id(const void* stream) {
  auto context = static_cast<CUcontext>(driver_current_context());
  return state.capture_context->cuda.stream_id(context, static_cast<CUstream>(const_cast<void*>(stream)),
                                         false);
}

int32_t current_device() {
  return state.capture_context->cuda.device_of(static_cast<CUcontext>(driver_current_context()));
}

void start_collectives() {
  set_collective_capture(new CollectiveCapture{*state.buffers, strings(), now_ns,
                                               current_stream_id, current_device, set_meta});
  serve_nccl_profiler();
}

// The watchdog's one line: producers found the writer stuck (RecordBuffers).
void report_writer_stall(uint64_t waited_ns) {
  InsideTracer inside;  // formatting allocates: ours, not the program's
  log_warn("the trace writer has made no progress for {:.1f} s (it is {}); records are dropped "
           "and counted (meta dropped_records) until it does",
           static_cast<double>(waited_ns) / 1e9, state.buffers->consumer_stage());
}

void finish_at_exit() { finish(kStatusComplete); }

// What a capture that attaches to a running process cannot see, in its meta.
constexpr const char* kLateAttachMisses =
    "late: started in-process (apptracer_capture_start) after the program began; not recorded: "
    "allocations made before the start (copies, memsets and kernel arguments in them name no "
    "allocation, so the DVDG sees their regions as unknown), host blocks (no LD_PRELOAD), "
    "framework allocators' blocks carved before the start, NVTX instances initialised before it, "
    "and API calls and GPU work before it";

}  // namespace

// The order matters:
//  1. Once: the first route to come starts; the others find it started.
//  2. Logging, the owner pid, the record buffers and the writer (its thread
//     not yet running), and the context capture records through.
//  3. CUPTI's callbacks, then --exact's sanitizer (which subscribes after
//     CUPTI, the order record --exact probed). With neither, and no host
//     allocations to record, the process is left alone, marked finished.
//  4. NVTX, then CUPTI activity (only with callbacks) and its flusher.
//  5. The process's meta, which says whether the allocator is interposed;
//     framework allocators' and host blocks.
//  6. Files created eagerly; a late attach replays the contexts it missed.
//  7. Every setenv (NCCL's profiler plugin among them) before the writer
//     thread starts: it reads the environment.
//  8. The writer and flusher threads, then the exit, fork and signal
//     handlers, which act on a running writer.
void start(const Config& given) {
  if (state.started.exchange(true)) return;
  // Where the process is now: a later chdir moves nothing.
  Config config = given;
  config.output = absolute_output_path(given.output);
  init_logging(config.log_level);
  self_cost::every_call = config.self_cost;
  state.owner_pid = getpid();
  bool sanitizer_only = config.exact == ExactMode::SanitizerOnly;
  state.buffers =
      new RecordBuffers(config.buffer_bytes, uint64_t{config.stall_ms} * 1'000'000);
  state.buffers->set_stall_reporter(report_writer_stall);
  state.writer = new Writer(
      *state.buffers, allocations(), strings(), config,
      HostBlockResolution{&host_blocks::registry(), host_blocks::promote_for_writer,
                          host_blocks::forget_freed_before});
  // SQLite's allocations on the writer thread are ours, not the program's.
  state.writer->set_thread_start(mark_tracer_thread);
  auto* queries = new LiveCudaQueries(strings());
  state.capture_context = new CaptureContext{*state.buffers, allocations(), strings(), *queries, now_ns,
                                       nullptr, config.kernel_arguments};
  CaptureHooks hooks{on_context_created, set_meta, (new std::string(config.unified_memory))->c_str()};
  std::string why_not = "CUPTI is not used in the sanitizer-only run of --exact";
  if (!sanitizer_only) state.callbacks_active = subscribe_callbacks(*state.capture_context, hooks, why_not);
  if (config.exact != ExactMode::Off && (state.callbacks_active || sanitizer_only)) {
    state.exact_active = start_exact_mode(config);
  }
  // Without CUDA capture only --host-allocations=all has anything to record.
  bool host_only =
      !state.callbacks_active && !state.exact_active && config.host_allocations == HostAllocations::All;
  if (!state.callbacks_active && !state.exact_active && !host_only) {
    if (first_in_run_to_say(config.run_dir, why_not)) {
      log_warn("{}; apptracer is not tracing this process", why_not);
    } else {
      log_info("{}; apptracer is not tracing this process", why_not);
    }
    state.not_tracing_reason = (new std::string(why_not))->c_str();
    state.finished = true;  // nothing will be recorded; leave the program alone
    state.final_write_done = true;
    return;
  }
  if (host_only) log_info("{}; apptracer records host memory only", why_not);
  if (sanitizer_only) {
    state.writer->set_gpu_activity(false);
    state.writer->set_meta("capture", "sanitizer only: allocations and --exact launches, no "
                                         "CUPTI (the second run of --exact's two-run scheme)");
  }
  set_nvtx_context(state.capture_context);
  become_nvtx_injection();
  state.activity_usable = state.callbacks_active && enable_activity(*state.capture_context, hooks);
  // Rows waiting for their GPU times ask CUPTI for the records it holds
  // (completed ones only: the program's work is not disturbed), through a
  // thread of its own (capture/activity_flusher.h says why).
  if (state.activity_usable) {
    state.activity_flusher = new ActivityFlusher(
        [](bool forced) { cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0); },
        mark_tracer_thread);
    state.writer->set_activity_request([](bool forced) { state.activity_flusher->request(forced); });
  }
  state.allocator_hooked = allocator_interposed();
  record_process_meta(config);
  // Framework allocators' blocks and framework ranges (modules, ops), once
  // the Python bootstrap attaches to them.
  if (state.callbacks_active) {
    frameworks::start_recording(
        {state.buffers, now_ns, set_meta, &strings(), config.every_framework_range,
         config.op_sample_every, config.op_sample_after, config.framework_context});
  }
  if (host_only) state.writer->set_meta("capture", "host memory only: CUDA capture unavailable");
  if (config.host_allocations != HostAllocations::Off && state.allocator_hooked) {
    host_blocks::enable({config.host_min_bytes, config.host_allocations == HostAllocations::All},
                        *state.buffers);
    state.capture_context->host_blocks = &host_blocks::address_regions;
  }
  // A host-only trace, and a capture's file, is wanted even if nothing reaches it.
  if (config.host_allocations == HostAllocations::All || state.attached_late) {
    state.writer->create_file_eagerly();
  }
  if (state.attached_late) {
    state.writer->set_meta("attach", kLateAttachMisses);
    // The program's contexts exist already: their creation callback has passed.
    if (state.callbacks_active && !driver_devices().empty()) {
      on_context_created();
      prepare_activity_for_contexts();
    }
  }
  // Every setenv before the writer thread starts: it reads the environment
  // (SQLite's getenv when it opens the trace) and a setenv that moves the
  // environment under it crashed the process (--host-allocations=all opens
  // the file at once: 1 run in 6 under load).
  start_collectives();
  state.writer->start();
  if (state.activity_flusher) state.activity_flusher->start();
  std::atexit(finish_at_exit);
  at_quick_exit(finish_at_exit);
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  install_signal_handlers_once();
  log_debug("tracing pid {} into {}", getpid(), config.output);
}

}  // namespace apptracer::inject
