#include "base/numa.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace apptracer {

int numa_node_of(uint64_t address, uint64_t bytes) {
  constexpr int kMaxPages = 16;
  constexpr int kMaxNodes = 64;
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (address == 0) return -1;
  uint64_t first = address / page;
  uint64_t last = (address + (bytes ? bytes - 1 : 0)) / page;
  uint64_t span = last - first + 1;
  int count = static_cast<int>(std::min<uint64_t>(span, kMaxPages));
  void* pages[kMaxPages];
  int status[kMaxPages];
  for (int i = 0; i < count; ++i) {
    uint64_t index = count == 1 ? first : first + span * i / count;
    pages[i] = reinterpret_cast<void*>(index * page);
  }
  if (syscall(SYS_move_pages, 0, count, pages, nullptr, status, 0) != 0) return -1;
  int votes[kMaxNodes] = {};
  int best = -1;
  for (int i = 0; i < count; ++i) {
    int node = status[i];  // a node, or -errno (-ENOENT: not resident, -EFAULT: not mapped)
    if (node < 0 || node >= kMaxNodes) continue;
    if (++votes[node] > (best < 0 ? 0 : votes[best])) best = node;
  }
  return best;
}

}  // namespace apptracer
