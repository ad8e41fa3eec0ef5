#include "base/numa.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace apptracer {

namespace {

// Per sampled page: its node, or -errno (-ENOENT: not present, -EFAULT: not
// mapped). `count` is 0 when the call failed.
struct PageSample {
  int count = 0;
  int status[kSampledPages];
};

PageSample sample_pages(uint64_t address, uint64_t bytes) {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  PageSample sample;
  if (address == 0) return sample;
  uint64_t first = address / page;
  uint64_t last = (address + (bytes ? bytes - 1 : 0)) / page;
  uint64_t span = last - first + 1;
  int count = static_cast<int>(std::min<uint64_t>(span, kSampledPages));
  void* pages[kSampledPages];
  for (int i = 0; i < count; ++i) {
    uint64_t index = count == 1 ? first : first + span * i / count;
    pages[i] = reinterpret_cast<void*>(index * page);
  }
  if (syscall(SYS_move_pages, 0, count, pages, nullptr, sample.status, 0) == 0) sample.count = count;
  return sample;
}

}  // namespace

int numa_node_of(uint64_t address, uint64_t bytes) {
  constexpr int kMaxNodes = 64;
  PageSample sample = sample_pages(address, bytes);
  int votes[kMaxNodes] = {};
  int best = -1;
  for (int i = 0; i < sample.count; ++i) {
    int node = sample.status[i];
    if (node < 0 || node >= kMaxNodes) continue;
    if (++votes[node] > (best < 0 ? 0 : votes[best])) best = node;
  }
  return best;
}

PageTouch page_touch(uint64_t address, uint64_t bytes) {
  PageSample sample = sample_pages(address, bytes);
  PageTouch touch;
  for (int i = 0; i < sample.count; ++i) {
    if (sample.status[i] == -EFAULT) continue;
    ++touch.mapped;
    if (sample.status[i] == -ENOENT) ++touch.untouched;
  }
  return touch;
}

}  // namespace apptracer
