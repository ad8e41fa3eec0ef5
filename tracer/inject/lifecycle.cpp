// Starting and stopping the tracer inside the program.
//
// Two routes inject us: LD_PRELOAD (the constructor below runs at load) and
// CUDA_INJECTION64_PATH (the driver calls InitializeInjection during cuInit).
// Whichever fires first starts the tracer; the other finds it started.
// A third route is in-process capture (apptracer_capture_start/stop below,
// the Python package's apptracer.capture): the library is loaded by the
// program itself and attaches late, once, to a process already running CUDA.
// Finishing happens once, at exit() or _exit() of the process that started
// it; a fatal signal gets one last flush; a forked child starts over with
// its own trace file.
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include <cupti.h>

#include "base/self_cost.h"
#include "apptracer/output_path.h"
#include "apptracer/schema.h"
#include "apptracer/version.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/inside_tracer.h"
#include "base/driver.h"
#include "base/log.h"
#include "base/signal_sets.h"
#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "capture/activity_flusher.h"
#include "capture/capture.h"
#include "capture/live_cuda_queries.h"
#include "frameworks/sub_allocation_events.h"
#include "exact/exact.h"
#include "collectives/collective_capture.h"
#include "host/host_allocator.h"
#include "host/host_blocks.h"
#include "store/writer.h"
#include "translate/api_dispatch.h"
#include "translate/nvtx_injection.h"

namespace apptracer {

namespace {

RecordBuffers* buffers_instance = nullptr;
Writer* writer_instance = nullptr;
ActivityFlusher* activity_flusher = nullptr;
CaptureContext* capture_context = nullptr;
std::atomic<bool> started{false};
std::atomic<bool> finished{false};
std::atomic<bool> final_write_done{false};  // finish() has written the trace's end
std::atomic<pid_t> owner_pid{0};
bool callbacks_active = false;
// CUPTI's activity machinery does not survive fork: in a child, flushing it
// waits forever for a worker thread that only the parent has (seen on the
// H100). Children record API calls; their GPU times are not available.
bool activity_usable = false;
// Whether the program's malloc calls reach host_allocator.cpp (preloaded).
bool allocator_hooked = false;
// --exact is recording (tracer/exact/).
bool exact_active = false;
// Started by apptracer_capture_start rather than at load or cuInit.
bool attached_late = false;
// Why start() left the process untraced, for apptracer_capture_start to say.
std::string not_tracing_reason;

// The signals a crash raises: chained to whatever handler is there.
const int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// SIGTERM only where it still kills the process (its default action):
// multiprocessing's Pool and PyTorch's DataLoader end their workers with it,
// and a worker killed before the writer's next pass lost its last GPU work
// (seen on the H100: every pool worker's trace incomplete, kernels without
// GPU times). The process still dies of SIGTERM, after the flush. Not
// SIGINT: Python installs its KeyboardInterrupt handler only where SIGINT is
// at its default. A program that installs its own handler later replaces
// ours (Python's signal.getsignal never sees ours: it reads dispositions at
// startup), and then ends as it chooses.
const int kTerminationSignals[] = {SIGTERM};
struct sigaction previous_actions[NSIG];

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

void record_process_meta(const Config& config) {
  Writer& w = *writer_instance;
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
  bool unavailable = config.host_allocations != HostAllocations::Off && !allocator_hooked;
  const char* why_unavailable =
      attached_late ? "unavailable: the allocator is not interposed (capture started in-process; "
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
// that gets such a signal meanwhile waits for the write (on_fatal_signal).
void finish(const char* status) {
  if (!started || getpid() != owner_pid.load()) return;  // a vfork child shares our memory
  if (finished.exchange(true)) return;
  SignalsBlocked held(termination_signals());
  InsideTracer inside;  // the final write may open the trace on this thread
  uint64_t finish_start = now_ns();
  if (exact_active) exact::finish_exact();
  if (activity_flusher) activity_flusher->stop();
  if (activity_usable) flush_activity();
  // What exiting costs a program is part of what tracing costs it.
  writer_instance->set_meta("finish.activity_ms", std::to_string((now_ns() - finish_start) / 1000000));
  host_blocks::disable();
  writer_instance->set_meta("host_alloc_histogram", host_blocks::histogram_json());
  writer_instance->set_meta("host_blocks_stored", std::to_string(host_blocks::stored_blocks()));
  writer_instance->set_meta("host_blocks_not_kept", std::to_string(host_blocks::not_kept_blocks()));
  writer_instance->set_meta("host_block_lookups_cut", std::to_string(host_blocks::lookups_cut()));
  if (self_cost::enabled)
    writer_instance->set_meta("self_cost", self_cost::json(writer_instance->thread_cpu_ns()));
  writer_instance->finish(status);
  final_write_done = true;
}

void finish_at_exit() { finish(kStatusComplete); }

// Flushes what was recorded, then does what would have happened without us:
// the handler that was there before ours runs, or the default action.
void on_fatal_signal(int signal_number, siginfo_t* info, void* context) {
  if (getpid() == owner_pid.load()) {
    if (!finished.load()) {
      writer_instance->flush_from_signal(signal_number);
    } else {
      wait_in_handler(final_write_done, 5000);  // the final write, indexes included
    }
  }
  const struct sigaction& previous = previous_actions[signal_number];
  sigaction(signal_number, &previous, nullptr);
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal_number, info, context);
  } else if (previous.sa_handler == SIG_DFL) {
    raise(signal_number);
  } else if (previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal_number);
  }
}

// Chained: the program's (or Python's faulthandler's) handlers stay in
// force, before ours (installed earlier) or after (they find ours and call it).
// Installed at the first CUDA context, not at load: a runtime that reads the
// dispositions when it starts (Python's signal.getsignal) still sees its own,
// and before a context there is no GPU activity a crash could lose. A forked
// child that goes on tracing installs them at once (after_fork_in_child).
std::atomic<bool> signal_handlers_installed{false};

void install_signal_handlers_once() {
  if (signal_handlers_installed.exchange(true)) return;
  struct sigaction ours {};
  ours.sa_sigaction = on_fatal_signal;
  sigemptyset(&ours.sa_mask);
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  for (int signal_number : kFatalSignals) {
    sigaction(signal_number, &ours, &previous_actions[signal_number]);
  }
  for (int signal_number : kTerminationSignals) {
    struct sigaction current {};
    sigaction(signal_number, nullptr, &current);
    bool kills = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (kills) sigaction(signal_number, &ours, &previous_actions[signal_number]);
  }
}

// Per forking thread: another thread may finish the trace meanwhile.
thread_local bool writer_held_for_fork = false;
// The writer stayed inside SQLite for the whole fork wait: the child may
// inherit SQLite's global locks held, so it must not use SQLite at all.
thread_local bool fork_without_writer = false;
// The forking thread holds the allocation registry and the string table, so
// that no other thread's change to them is copied into the child half done.
thread_local bool tables_held_for_fork = false;

void before_fork() {
  fork_without_writer = false;
  writer_held_for_fork = started && !finished;
  if (!writer_held_for_fork) return;
  auto limit = std::chrono::milliseconds(Config::from_environment().fork_wait_ms);
  if (!writer_instance->hold_for_fork(limit)) {
    writer_held_for_fork = false;
    fork_without_writer = true;
  }
  // After the gate: the writer takes these inside it, briefly, and never
  // waits for the forking thread while holding them.
  allocations().lock_all_shards();
  strings().lock_for_fork();
  tables_held_for_fork = true;
}

void after_fork_in_parent() {
  if (tables_held_for_fork) {
    strings().unlock_after_fork_in_parent();
    allocations().unlock_all_shards();
  }
  tables_held_for_fork = false;
  if (writer_held_for_fork) writer_instance->release_after_fork_in_parent();
  writer_held_for_fork = false;
}

// The child of a fork that could not wait for the writer: nothing it
// records is kept, and it says so once.
void leave_child_untraced() {
  host_blocks::disable();
  buffers_instance->reset_after_fork();
  allocations().reset_after_fork();
  strings().reset_after_fork();
  buffers_instance->close();
  finished = true;
  final_write_done = true;
  log_warn("pid {}: forked while the trace writer was inside SQLite for over {} ms; this "
           "process is not traced (APPTRACER_FORK_WAIT_MS sets the wait)",
           getpid(), Config::from_environment().fork_wait_ms);
}

void after_fork_in_child() {
  writer_held_for_fork = false;
  tables_held_for_fork = false;  // their mutexes are made anew below
  if (!started) return;
  owner_pid = getpid();
  if (activity_flusher) activity_flusher->forget_after_fork();
  if (fork_without_writer) return leave_child_untraced();
  finished = false;
  final_write_done = false;
  activity_usable = false;
  buffers_instance->reset_after_fork();
  allocations().reset_after_fork();
  collectives_after_fork();
  strings().reset_after_fork();
  // CUPTI's activity machinery stayed in the parent: flushing it here hangs.
  writer_instance->set_activity_request(nullptr);
  writer_instance->set_gpu_activity(false);
  writer_instance->restart_after_fork();
  record_process_meta(Config::from_environment());
  writer_instance->set_meta("gpu_activity", "unavailable: CUPTI activity does not survive fork");
  // Not waiting for the child's first context: a child that records host
  // memory only never has one, and its pool's SIGTERM then left its trace
  // unflushed. The program's runtime read its dispositions long ago.
  // Handlers the parent installed are inherited, and left as they are.
  install_signal_handlers_once();
}

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
  install_signal_handlers_once();
  for (const DeviceInfo& device : driver_devices()) writer_instance->add_device(device);
  writer_instance->set_meta("cuda_driver_version", std::to_string(driver_version()));
  writer_instance->set_meta("cuda_runtime_version", runtime_version());
}

void set_meta(const std::string& key, const std::string& value) {
  writer_instance->set_meta(key, value);
}

// --exact: the sanitizer subscribes after CUPTI (the order its coexistence
// was probed in, record --exact). Unavailable: one line, normal recording.
bool start_exact_mode(const Config& config) {
  bool sanitizer_only = config.exact == ExactMode::SanitizerOnly;
  exact::ExactOptions options;
  options.with_capture = !sanitizer_only;
  options.pool.slots = config.exact_slots;
  options.pool.capacity = config.exact_pages;
  exact::ExactHooks hooks{*buffers_instance, strings(), allocations(), now_ns,
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
  return capture_context->cuda.stream_id(context, static_cast<CUstream>(const_cast<void*>(stream)),
                                         false);
}

int32_t current_device() {
  return capture_context->cuda.device_of(static_cast<CUcontext>(driver_current_context()));
}

void start_collectives() {
  set_collective_capture(new CollectiveCapture{*buffers_instance, strings(), now_ns,
                                               current_stream_id, current_device, set_meta});
  serve_nccl_profiler();
}

// The watchdog's one line: producers found the writer stuck (RecordBuffers).
void report_writer_stall(uint64_t waited_ns) {
  InsideTracer inside;  // formatting allocates: ours, not the program's
  log_warn("the trace writer has made no progress for {:.1f} s (it is {}); records are dropped "
           "and counted (meta dropped_records) until it does",
           static_cast<double>(waited_ns) / 1e9, buffers_instance->consumer_stage());
}

// What a capture that attaches to a running process cannot see, in its meta.
constexpr const char* kLateAttachMisses =
    "late: started in-process (apptracer_capture_start) after the program began; not recorded: "
    "allocations made before the start (copies, memsets and kernel arguments in them name no "
    "allocation, so the DVDG sees their regions as unknown), host blocks (no LD_PRELOAD), "
    "framework allocators' blocks carved before the start, NVTX instances initialised before it, "
    "and API calls and GPU work before it";

void start(const Config& given) {
  if (started.exchange(true)) return;
  // Where the process is now: a later chdir moves nothing.
  Config config = given;
  config.output = absolute_output_path(given.output);
  init_logging(config.log_level);
  self_cost::enabled = config.self_cost;
  owner_pid = getpid();
  bool sanitizer_only = config.exact == ExactMode::SanitizerOnly;
  buffers_instance =
      new RecordBuffers(config.buffer_bytes, uint64_t{config.stall_ms} * 1'000'000);
  buffers_instance->set_stall_reporter(report_writer_stall);
  writer_instance = new Writer(
      *buffers_instance, allocations(), strings(), config,
      HostBlockResolution{&host_blocks::registry(), host_blocks::promote_for_writer,
                          host_blocks::forget_freed_before});
  // SQLite's allocations on the writer thread are ours, not the program's.
  writer_instance->set_thread_start(mark_tracer_thread);
  auto* queries = new LiveCudaQueries(strings());
  capture_context = new CaptureContext{*buffers_instance, allocations(), strings(), *queries, now_ns,
                                       nullptr};
  CaptureHooks hooks{on_context_created, set_meta, (new std::string(config.unified_memory))->c_str()};
  std::string why_not = "CUPTI is not used in the sanitizer-only run of --exact";
  if (!sanitizer_only) callbacks_active = subscribe_callbacks(*capture_context, hooks, why_not);
  if (config.exact != ExactMode::Off && (callbacks_active || sanitizer_only)) {
    exact_active = start_exact_mode(config);
  }
  // Without CUDA capture only --host-allocations=all has anything to record.
  bool host_only =
      !callbacks_active && !exact_active && config.host_allocations == HostAllocations::All;
  if (!callbacks_active && !exact_active && !host_only) {
    log_warn("{}; apptracer is not tracing this process", why_not);
    not_tracing_reason = why_not;
    finished = true;  // nothing will be recorded; leave the program alone
    final_write_done = true;
    return;
  }
  if (host_only) log_info("{}; apptracer records host memory only", why_not);
  if (sanitizer_only) {
    writer_instance->set_gpu_activity(false);
    writer_instance->set_meta("capture", "sanitizer only: allocations and --exact launches, no "
                                         "CUPTI (the second run of --exact's two-run scheme)");
  }
  set_nvtx_context(capture_context);
  become_nvtx_injection();
  activity_usable = callbacks_active && enable_activity(*capture_context, hooks);
  // Rows waiting for their GPU times ask CUPTI for the records it holds
  // (completed ones only: the program's work is not disturbed), through a
  // thread of its own (capture/activity_flusher.h says why).
  if (activity_usable) {
    activity_flusher = new ActivityFlusher(
        [](bool forced) { cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0); },
        mark_tracer_thread);
    writer_instance->set_activity_request([](bool forced) { activity_flusher->request(forced); });
  }
  allocator_hooked = allocator_interposed();
  record_process_meta(config);
  // Framework allocators' blocks, once the Python bootstrap attaches to them.
  if (callbacks_active) frameworks::start_recording({buffers_instance, now_ns, set_meta});
  if (host_only) writer_instance->set_meta("capture", "host memory only: CUDA capture unavailable");
  if (config.host_allocations != HostAllocations::Off && allocator_hooked) {
    host_blocks::enable({config.host_min_bytes, config.host_allocations == HostAllocations::All},
                        *buffers_instance);
    capture_context->host_blocks = &host_blocks::address_regions;
  }
  // A host-only trace, and a capture's file, is wanted even if nothing reaches it.
  if (config.host_allocations == HostAllocations::All || attached_late) {
    writer_instance->create_file_eagerly();
  }
  if (attached_late) {
    writer_instance->set_meta("attach", kLateAttachMisses);
    // The program's contexts exist already: their creation callback has passed.
    if (callbacks_active && !driver_devices().empty()) {
      on_context_created();
      prepare_activity_for_contexts();
    }
  }
  // Every setenv before the writer thread starts: it reads the environment
  // (SQLite's getenv when it opens the trace) and a setenv that moves the
  // environment under it crashed the process (--host-allocations=all opens
  // the file at once: 1 run in 6 under load).
  start_collectives();
  writer_instance->start();
  if (activity_flusher) activity_flusher->start();
  std::atexit(finish_at_exit);
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  log_debug("tracing pid {} into {}", getpid(), config.output);
}

__attribute__((constructor)) void start_when_preloaded() {
  // Only when preloaded: a library dlopen()ed through CUDA_INJECTION64_PATH
  // waits for InitializeInjection.
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::string(preload).find("libapptracer") != std::string::npos) {
    // Children started from another directory write where this process does.
    Config config = Config::from_environment();
    config.output = absolute_output_path(config.output);
    setenv("APPTRACER_OUTPUT", config.output.c_str(), 1);
    start(config);
  }
}

}  // namespace

}  // namespace apptracer

// CUDA_INJECTION64_PATH entry point, called by the driver during cuInit.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  apptracer::start(apptracer::Config::from_environment());
  return 1;
}

namespace {

std::mutex capture_mutex;

int capture_error(char* message, size_t message_bytes, const std::string& text) {
  if (message && message_bytes > 0) snprintf(message, message_bytes, "%s", text.c_str());
  return 1;
}

}  // namespace

// In-process capture, for a program that loads this library itself (the
// Python package's apptracer.capture, through ctypes) rather than being
// preloaded. Starts recording into `path` (which must not exist) now: CUPTI
// subscription, activity, writer and file. Once per process: CUPTI's
// subscriber, the record buffers and the writer are not restarted after a
// stop. Returns 0, or 1 with one line in `message` saying why not.
extern "C" __attribute__((visibility("default"))) int apptracer_capture_start(
    const char* path, char* message, size_t message_bytes) {
  using namespace apptracer;
  std::lock_guard<std::mutex> lock(capture_mutex);
  if (started) {
    if (!not_tracing_reason.empty()) return capture_error(message, message_bytes, not_tracing_reason);
    if (attached_late) {
      return capture_error(message, message_bytes,
                           "a capture already ran in this process (one per process)");
    }
    return capture_error(message, message_bytes,
                         "this process is already traced (apptracer record or LD_PRELOAD): "
                         "its whole run is in that trace");
  }
  if (!path || !*path) return capture_error(message, message_bytes, "no output path given");
  if (access(path, F_OK) == 0) {
    return capture_error(message, message_bytes, std::string(path) + " exists");
  }
  Config config = Config::from_environment();
  config.output = path;
  attached_late = true;
  start(config);
  if (finished) return capture_error(message, message_bytes, not_tracing_reason);
  return 0;
}

// Ends the capture apptracer_capture_start began: flushes what CUPTI holds
// (forced), finishes the file (status complete, one file), then stops the
// callbacks and activity so the rest of the program runs untraced.
extern "C" __attribute__((visibility("default"))) int apptracer_capture_stop(char* message,
                                                                              size_t message_bytes) {
  using namespace apptracer;
  std::lock_guard<std::mutex> lock(capture_mutex);
  if (!attached_late) return capture_error(message, message_bytes, "no capture was started");
  if (finished) return capture_error(message, message_bytes, "the capture has already stopped");
  finish(kStatusComplete);
  unsubscribe_callbacks();
  if (activity_usable) disable_activity();
  return 0;
}


// NVTX_INJECTION64_PATH entry point, called by each NVTX instance at its first call.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  return apptracer::initialize_nvtx_injection(get_export_table);
}

// _exit skips atexit handlers, and exec replaces the image without running
// them: finish the trace first so it is complete. (The exec'd program, if
// still preloaded, starts a trace of its own.)
extern "C" __attribute__((visibility("default"))) void _exit(int status) {
  apptracer::finish(apptracer::kStatusComplete);
  using ExitFunction = void (*)(int);
  static auto real_exit = reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, "_exit"));
  real_exit(status);
  __builtin_unreachable();
}

namespace {

using ExecFunction = int (*)(const char*, char* const[], char* const[]);
using ExecPathFunction = int (*)(const char*, char* const[]);

// A vfork'd child (posix_spawn, subprocess) runs in our memory until it
// execs: only the process that owns the trace finishes it.
void finish_before_exec() {
  using namespace apptracer;
  if (!started || finished || getpid() != owner_pid.load()) return;
  writer_instance->set_meta("end_reason", "exec");
  finish(kStatusComplete);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                             char* const envp[]) {
  static auto real = reinterpret_cast<ExecFunction>(dlsym(RTLD_NEXT, "execve"));
  finish_before_exec();
  return real(path, argv, envp);
}

extern "C" __attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  static auto real = reinterpret_cast<ExecPathFunction>(dlsym(RTLD_NEXT, "execv"));
  finish_before_exec();
  return real(path, argv);
}

extern "C" __attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  static auto real = reinterpret_cast<ExecPathFunction>(dlsym(RTLD_NEXT, "execvp"));
  finish_before_exec();
  return real(file, argv);
}

// The variadic forms reach glibc's execve without passing through ours.
namespace {

constexpr int kMaxExecArguments = 4096;

// Collects execl-style arguments (up to the terminating null) into `argv`.
int collect_arguments(const char* first, va_list& rest, char* argv[]) {
  int count = 0;
  argv[count++] = const_cast<char*>(first);
  while (argv[count - 1] != nullptr && count < kMaxExecArguments) {
    argv[count++] = va_arg(rest, char*);
  }
  if (argv[count - 1] != nullptr) {
    errno = E2BIG;
    return -1;
  }
  return count;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArguments];
  va_list rest;
  va_start(rest, arg);
  int count = collect_arguments(arg, rest, argv);
  va_end(rest);
  return count < 0 ? -1 : execv(path, argv);
}

extern "C" __attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  char* argv[kMaxExecArguments];
  va_list rest;
  va_start(rest, arg);
  int count = collect_arguments(arg, rest, argv);
  va_end(rest);
  return count < 0 ? -1 : execvp(file, argv);
}

extern "C" __attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArguments];
  va_list rest;
  va_start(rest, arg);
  int count = collect_arguments(arg, rest, argv);
  char* const* envp = count < 0 ? nullptr : va_arg(rest, char* const*);
  va_end(rest);
  return count < 0 ? -1 : execve(path, argv, envp);
}

extern "C" __attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                              char* const envp[]) {
  static auto real = reinterpret_cast<ExecFunction>(dlsym(RTLD_NEXT, "execvpe"));
  finish_before_exec();
  return real(file, argv, envp);
}
