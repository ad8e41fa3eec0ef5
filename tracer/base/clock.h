// One clock for every record: CUPTI's, so API calls (host) and activity
// records (GPU) share a time line. On Linux CUPTI's clock is
// clock_gettime(CLOCK_REALTIME) (cupti_activity.h, cuptiActivityRegisterTimestampCallback),
// and GPU timestamps are converted onto it; reading it ourselves costs a vDSO
// call, takes no lock (safe in a forked child and in a signal handler), and
// is the same clock in every process of a host.
#pragma once

#include <time.h>

#include <cstdint>

namespace apptracer {

inline uint64_t now_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace apptracer
