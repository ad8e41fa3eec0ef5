// Where the tracer's own time goes. Every site samples its calls: about one
// in kSampleEvery on each thread is timed, at random intervals (a program's
// own period cannot then line up with ours), into totals per site that the
// writer stores stretch by stretch as `tracer_time` rows. The analyzer takes
// that time off the traced host times, so a saving is priced against the
// program without the tracer. A call not timed costs a thread-local
// decrement and a branch; a timed one two clock reads (vDSO, no syscall) and
// two adds to shared counters. `apptracer record --self-cost`
// (APPTRACER_SELF_COST=1) times every call and adds meta.self_cost: the
// totals, the writer threads' use of the machine, and `timer_ns`, what one
// timed call adds, for a reader to take out.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "apptracer/enums.h"
#include "base/clock.h"

namespace apptracer::self_cost {

// The sites (common/include/apptracer/enums.h, declared with the table).
using Site = TracerSite;
#define APPTRACER_COST_SITE_COUNT(name, value, text) +1
inline constexpr size_t kSiteCount = 0 APPTRACER_TRACER_SITES(APPTRACER_COST_SITE_COUNT);
#undef APPTRACER_COST_SITE_COUNT
inline size_t index(Site site) { return static_cast<size_t>(site) - 1; }

// One call in this many is timed, on average, where not every call is.
inline constexpr uint32_t kSampleEvery = 32;

struct Totals {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> ns{0};
};

// Set once, before any site can run (the options are read at load).
extern bool every_call;
// The timed calls' counts and times, since the start.
extern Totals totals[kSiteCount];

// How many calls each site on this thread makes before its next timed one.
struct ThreadSampling {
  uint16_t left[kSiteCount];
  uint32_t random;
};
extern __thread ThreadSampling thread_sampling __attribute__((tls_model("initial-exec")));

// The calls until the next timed one: 1 to 2 * kSampleEvery - 1, evenly.
uint16_t next_interval();

inline uint32_t sample_every() { return every_call ? 1 : kSampleEvery; }

inline uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

// Whether this call of `site` is timed (the thread's first call of each site is).
inline bool timed_now(Site site) {
  if (every_call) return true;
  uint16_t& left = thread_sampling.left[index(site)];
  if (left > 1) {
    --left;
    return false;
  }
  left = next_interval();
  return true;
}

// Times its scope when this call is one to time.
class Timer {
 public:
  explicit Timer(Site site) : site_(site), start_(timed_now(site) ? monotonic_ns() : 0) {}
  ~Timer() {
    if (!start_) return;
    Totals& total = totals[index(site_)];
    total.calls.fetch_add(1, std::memory_order_relaxed);
    total.ns.fetch_add(monotonic_ns() - start_, std::memory_order_relaxed);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  Site site_;
  uint64_t start_;
};

// What one clock read costs here (the mean of a few thousand in a row): a timed
// call's time holds about one.
uint64_t clock_read_ns();

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
