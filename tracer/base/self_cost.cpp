#include "base/self_cost.h"

#include <sys/resource.h>

#include <algorithm>

namespace apptracer::self_cost {

bool every_call = false;
Totals totals[kSiteCount];
__thread ThreadSampling thread_sampling __attribute__((tls_model("initial-exec")));

uint16_t next_interval() {
  uint32_t& x = thread_sampling.random;
  // Each thread's sequence starts from where its sampling state lies.
  if (x == 0) x = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&thread_sampling) >> 4) | 1u;
  x ^= x << 13;  // xorshift32
  x ^= x >> 17;
  x ^= x << 5;
  return static_cast<uint16_t>(1 + x % (2 * kSampleEvery - 1));
}

uint64_t clock_read_ns() {
  constexpr int kReads = 4096;
  uint64_t start = monotonic_ns();
  for (int i = 0; i < kReads; ++i) (void)monotonic_ns();
  return (monotonic_ns() - start) / kReads;
}

namespace {

// What timing an empty scope costs on this machine: the best of a few runs
// of a thousand timers on a counter of its own (contention-free, as the
// sites are in a single-threaded program).
uint64_t timer_ns() {
  Totals scratch;
  uint64_t best = UINT64_MAX;
  for (int run = 0; run < 5; ++run) {
    uint64_t start = monotonic_ns();
    for (int i = 0; i < 1000; ++i) {
      uint64_t begin = monotonic_ns();
      scratch.calls.fetch_add(1, std::memory_order_relaxed);
      scratch.ns.fetch_add(monotonic_ns() - begin, std::memory_order_relaxed);
    }
    best = std::min(best, (monotonic_ns() - start) / 1000);
  }
  return best;
}

}  // namespace

ThreadUsage this_thread_usage() {
  ThreadUsage usage;
  timespec used{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) == 0) {
    usage.cpu_ns = static_cast<uint64_t>(used.tv_sec) * 1'000'000'000ull +
                   static_cast<uint64_t>(used.tv_nsec);
  }
  rusage own{};
  if (getrusage(RUSAGE_THREAD, &own) == 0) {
    auto ns = [](const timeval& t) {
      return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_usec) * 1000;
    };
    usage.user_ns = ns(own.ru_utime);
    usage.system_ns = ns(own.ru_stime);
    usage.minor_faults = static_cast<uint64_t>(own.ru_minflt);
    usage.major_faults = static_cast<uint64_t>(own.ru_majflt);
    usage.voluntary_switches = static_cast<uint64_t>(own.ru_nvcsw);
    usage.involuntary_switches = static_cast<uint64_t>(own.ru_nivcsw);
  }
  return usage;
}

std::string json(const ThreadUsage& writer, const ThreadUsage& inserter) {
  std::string out = "{";
  for (size_t i = 0; i < kSiteCount; ++i) {
    out += "\"" + std::string(to_string(static_cast<Site>(i + 1))) + "\": {\"calls\": " +
           std::to_string(totals[i].calls.load(std::memory_order_relaxed)) +
           ", \"ns\": " + std::to_string(totals[i].ns.load(std::memory_order_relaxed)) + "}, ";
  }
  auto usage = [&](const std::string& thread, const ThreadUsage& used) {
    auto field = [&](const char* key, uint64_t value) {
      out += "\"" + thread + "_" + key + "\": " + std::to_string(value) + ", ";
    };
    field("cpu_ns", used.cpu_ns);
    field("user_ns", used.user_ns);
    field("system_ns", used.system_ns);
    field("minor_faults", used.minor_faults);
    field("major_faults", used.major_faults);
    field("voluntary_switches", used.voluntary_switches);
    field("involuntary_switches", used.involuntary_switches);
  };
  usage("writer", writer);
  usage("inserter", inserter);
  return out + "\"timer_ns\": " + std::to_string(timer_ns()) + "}";
}

}  // namespace apptracer::self_cost
