// Where the tracer's own time goes (APPTRACER_SELF_COST=1, `apptracer record
// --self-cost`): each site counts its calls and the nanoseconds spent in it,
// on the thread that called it, and the trace's meta `self_cost` holds the
// totals. Off by default: a timed site reads the clock twice (a vDSO call
// each, no syscall) and adds to two shared counters, which the totals
// report as `timer_ns` per call so a reader can take it out.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/clock.h"

namespace apptracer::self_cost {

// Sites, inner ones timed inside outer ones (kernel arguments inside the
// API callback): their times are parts, not additions. The writer's sites
// itemize the writer thread's time (its rows' SQLite inserts land in the
// site whose record filled a batch).
#define APPTRACER_COST_SITES(X)                                                  \
  X(ApiCallback, "api_callback")     /* a traced CUDA call's enter and exit callbacks */ \
  X(KernelArguments, "kernel_arguments") /* a launch's parameter words checked for pointers */ \
  X(RecordAppend, "record_append")   /* a record queued for the writer */              \
  X(HostAllocate, "host_allocate")   /* an interposed malloc family call's bookkeeping */ \
  X(HostFree, "host_free")           /* an interposed free's bookkeeping */            \
  X(FrameworkAllocator, "framework_allocator") /* a framework allocator's block event */ \
  X(FrameworkRange, "framework_range") /* a module's or op's push or pop (PyTorch) */    \
  X(ActivityBuffer, "activity_buffer") /* a CUPTI activity buffer converted (CUPTI's thread) */ \
  X(WriterDrain, "writer_drain")     /* the writer thread: record buffers drained */   \
  X(WriterApiCalls, "writer_api_calls") /* API call records made rows */               \
  X(WriterAllocations, "writer_allocations") /* allocation and free records */          \
  X(WriterLaunches, "writer_launches") /* kernel launch records */                     \
  X(WriterArguments, "writer_arguments") /* launch argument records, words resolved */  \
  X(WriterArgumentSets, "writer_argument_sets") /* of which sets found or stored */     \
  X(WriterKernelActivity, "writer_kernel_activity") /* kernel activity records */      \
  X(WriterCopies, "writer_copies")   /* copy and memset records, with their activity */ \
  X(WriterTensorBlocks, "writer_tensor_blocks") /* framework allocators' block records */ \
  X(WriterOther, "writer_other")     /* every other record kind */                    \
  X(WriterPassEnd, "writer_pass_end") /* rows held for activity stored, batches flushed */ \
  X(WriterCommit, "writer_commit")   /* a pass's transaction committed */

enum class Site : uint8_t {
#define APPTRACER_COST_SITE_ENUM(name, key) name,
  APPTRACER_COST_SITES(APPTRACER_COST_SITE_ENUM)
#undef APPTRACER_COST_SITE_ENUM
      kCount
};

struct Totals {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> ns{0};
};

// Set once, before any site can run (the options are read at load).
extern bool enabled;
extern Totals totals[static_cast<size_t>(Site::kCount)];

inline uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

// Times its scope when self-cost is on; one predictable branch when off.
class Timer {
 public:
  explicit Timer(Site site) : site_(site), start_(enabled ? monotonic_ns() : 0) {}
  ~Timer() {
    if (!start_) return;
    Totals& total = totals[static_cast<size_t>(site_)];
    total.calls.fetch_add(1, std::memory_order_relaxed);
    total.ns.fetch_add(monotonic_ns() - start_, std::memory_order_relaxed);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  Site site_;
  uint64_t start_;
};

// What one of the tracer's threads (the writer, its insert thread) used
// over its life (getrusage of the thread): its CPU split into user and
// kernel time, and the page faults and context switches that kernel time is
// mostly made of on a virtual machine.
struct ThreadUsage {
  uint64_t cpu_ns = 0;
  uint64_t user_ns = 0;
  uint64_t system_ns = 0;
  uint64_t minor_faults = 0;
  uint64_t major_faults = 0;
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;

  ThreadUsage& operator+=(const ThreadUsage& other) {
    cpu_ns += other.cpu_ns;
    user_ns += other.user_ns;
    system_ns += other.system_ns;
    minor_faults += other.minor_faults;
    major_faults += other.major_faults;
    voluntary_switches += other.voluntary_switches;
    involuntary_switches += other.involuntary_switches;
    return *this;
  }
};
// The calling thread's; zeros where the system cannot say.
ThreadUsage this_thread_usage();

// {"api_callback": {"calls": N, "ns": T}, ..., "writer_cpu_ns": W,
//  "writer_user_ns": .., "writer_system_ns": .., "writer_minor_faults": ..,
//  "writer_major_faults": .., "writer_voluntary_switches": ..,
//  "writer_involuntary_switches": .., the same as "inserter_..." for the
//  insert thread, "timer_ns": what one timed call adds, measured here}.
std::string json(const ThreadUsage& writer, const ThreadUsage& inserter);

}  // namespace apptracer::self_cost
