// Tracer options, read once from the environment (`apptracer record` sets them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace apptracer {

// Which host blocks (malloc family, anonymous mmap) become allocation rows.
enum class HostAllocations {
  Touched,  // those CUDA touches (copy endpoint, registration, kernel argument)
  All,      // every block at or above the size threshold, CUDA or not
  Off,      // none: the allocator is not watched at all
};

// "touched", "all", "off": the values APPTRACER_HOST_ALLOCATIONS takes.
const char* to_string(HostAllocations mode);

// --exact (tracer/exact/): kernels' real accesses through the Compute Sanitizer.
enum class ExactMode {
  Off,
  WithCapture,    // APPTRACER_EXACT=1: with the normal CUPTI capture, one run
  SanitizerOnly,  // APPTRACER_EXACT=sanitizer-only: no CUPTI (the second of two runs)
};

// "0", "1", "sanitizer-only": the values APPTRACER_EXACT takes.
const char* to_string(ExactMode mode);

struct Config {
  std::string output = "apptracer-%p.db";  // APPTRACER_OUTPUT; %p pid, %h host, %% percent
  // APPTRACER_FORCE=1: the run replaces an existing trace. Only the first
  // traced process takes it: preloaded, it removes the trace at its output
  // path, resolved in the directory it starts in (and the files beside it),
  // when the library loads, before main, and sets APPTRACER_FORCE=0 for its
  // children and the programs it execs, so no process of the run ever
  // replaces another's trace or a file elsewhere. (Loaded later, through
  // CUDA_INJECTION64_PATH, changing the environment is not safe: there force
  // has no effect.)
  bool force = false;
  std::string log_level = "warn";          // APPTRACER_LOG: trace|debug|info|warn|error|off
  size_t buffer_bytes = 64u << 20;         // APPTRACER_BUFFER_MB: cap on records in flight
  int flush_period_ms = 200;               // APPTRACER_FLUSH_MS: writer period (SIGKILL loses at most this)
  // APPTRACER_STALL_MS: how long the writer may make no progress before
  // producers at the memory cap stop waiting for it and drop (and count)
  // records instead: the program is never held longer because of us.
  uint32_t stall_ms = 5000;
  // APPTRACER_FORK_WAIT_MS: how long fork() may wait for the writer to leave
  // SQLite; past it the child runs untraced (it could not use SQLite safely).
  uint32_t fork_wait_ms = 1000;
  // APPTRACER_UNIFIED_MEMORY: the unified-memory counters recorded, a list of
  // groups (capture/cupti_requests.h); empty for the default.
  std::string unified_memory;
  HostAllocations host_allocations = HostAllocations::Touched;  // APPTRACER_HOST_ALLOCATIONS
  uint64_t host_min_bytes = 4096;  // APPTRACER_HOST_MIN_BYTES: smaller host blocks are only counted
  // APPTRACER_KERNEL_ARGUMENTS=off: launches' arguments are not read (no
  // kernel_args rows: kernels are timed, what they touch is unknown).
  bool kernel_arguments = true;
  // APPTRACER_FRAMEWORK_CONTEXT: which PyTorch module and op issued each
  // launch (off, modules, sampled, on, all). Sampled by default: module
  // ranges and 1 in 16 ops cost a real training step about 3% where every op
  // costs 17-48% (bench/RESULTS.md), and the analyzer names the other ops
  // from other steps. The Python bootstrap asks this value through
  // apptracer_framework_context rather than keeping a default of its own.
  // A string literal: the frameworks' sink keeps the pointer, and a sink
  // with a std::string in it would be built by a static constructor the
  // tracer's start can run before.
  const char* framework_context = "sampled";
  // APPTRACER_FRAMEWORK_CONTEXT=all: every framework range is recorded, also
  // those in which the thread recorded nothing else (frameworks/framework_ranges.h).
  bool every_framework_range = false;
  // APPTRACER_FRAMEWORK_CONTEXT=sampled: 1 in this many of PyTorch's ops and
  // backward nodes is recorded (APPTRACER_OP_SAMPLE_EVERY, 16 unless set);
  // 1 records every one. torch then skips its per-op callback path on the
  // others, which is what recording ops costs.
  uint32_t op_sample_every = 1;
  // Sampled: the first this many ops and nodes are each recorded, then 1 in
  // op_sample_every (APPTRACER_OP_SAMPLE_AFTER, 8192 unless set; 0: sampled
  // from the first).
  uint32_t op_sample_after = 0;
  bool self_cost = false;  // APPTRACER_SELF_COST=1: the tracer times its own sites (base/self_cost.h)
  std::string run_dir;  // APPTRACER_RUN_DIR (set by `apptracer record`): where each trace is announced
  ExactMode exact = ExactMode::Off;    // APPTRACER_EXACT
  uint32_t exact_slots = 8;            // APPTRACER_EXACT_SLOTS: launches in flight per context
  uint32_t exact_pages = 1u << 18;     // APPTRACER_EXACT_PAGES: 4 KiB pages per launch's table

  static Config from_environment();
  // "key=value ..." of the options in force, for meta.options.
  std::string describe() const;
};

// Expands %p, %h and %% in an output template.
std::string expand_output_path(const std::string& pattern, int pid, const std::string& host);

// The file a process claimed for its trace: its name, and which file it is
// (SQLite must open that very file, not one put there since).
struct ClaimedOutput {
  std::string path;
  uint64_t device = 0;
  uint64_t inode = 0;
};

// Creates this process's trace file, exclusively (O_CREAT | O_EXCL), so two
// processes can never write one file: `path` if no file has that name, else
// NAME-PID.EXT, else NAME-PID-N.EXT. Throws std::runtime_error when no file
// can be created there.
ClaimedOutput claim_output_path(const std::string& path, int pid);

// Tells `apptracer record` that this process writes the trace at `path`: a
// file in `run_dir` (none when empty) holding the path, a NUL and the pid, so record
// can list every trace of the run, wherever each process wrote it.
void announce_trace(const std::string& run_dir, const std::string& path);

// Whether this process is the first of an `apptracer record` run to say
// `line` (a file in `run_dir` named by it, made only if none is there);
// always outside record (`run_dir` empty) or where the directory cannot say.
// A shell script's chain of execs is a process each, and each would say why
// it is not traced.
bool first_in_run_to_say(const std::string& run_dir, const std::string& line);

}  // namespace apptracer
