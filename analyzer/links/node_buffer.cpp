#include "analyzer/links/node_buffer.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>
#include <vector>

namespace apptracer::links {

namespace {

constexpr int kMpolBind = 2;  // MPOL_BIND from <numaif.h>
constexpr int kSampledPages = 64;

}  // namespace

NodeBuffer::NodeBuffer(size_t bytes, int node) : bytes_(bytes), node_(node) {
  data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    throw std::bad_alloc();
  }
  if (node >= 0) {
    constexpr size_t kBits = 8 * sizeof(unsigned long);
    std::vector<unsigned long> mask(node / kBits + 1, 0);
    mask[node / kBits] |= 1UL << (node % kBits);
    // maxnode counts the mask's bits plus one, as the kernel expects.
    if (syscall(SYS_mbind, data_, bytes, kMpolBind, mask.data(), mask.size() * kBits + 1, 0) != 0) {
      problem_ = std::string("mbind to node ") + std::to_string(node) + " failed (" +
                 std::strerror(errno) + ")";
    }
  }
  // First touch allocates the pages, on the bound node.
  std::memset(data_, 0x5a, bytes);
  int actual = node_of_pages(data_, bytes);
  if (node >= 0 && problem_.empty() && actual != node) {
    problem_ = "pages asked for on node " + std::to_string(node) + " are on node " +
               std::to_string(actual);
  }
}

NodeBuffer::~NodeBuffer() {
  if (data_) munmap(data_, bytes_);
}

void NodeBuffer::discard(void* region, size_t bytes) {
  if (madvise(region, bytes, MADV_DONTNEED) != 0) {
    throw std::runtime_error(std::string("madvise(MADV_DONTNEED) failed: ") + std::strerror(errno));
  }
}

int node_of_pages(const void* data, size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t pages = (bytes + page - 1) / page;
  int count = static_cast<int>(pages < kSampledPages ? pages : kSampledPages);
  if (count == 0) return -1;
  std::vector<void*> addresses(count);
  std::vector<int> status(count, -1);
  auto base = reinterpret_cast<uintptr_t>(data);
  for (int i = 0; i < count; ++i) {
    addresses[i] = reinterpret_cast<void*>(base + (pages * i / count) * page);
  }
  // With no target nodes, move_pages reports each page's node and moves nothing.
  if (syscall(SYS_move_pages, 0, count, addresses.data(), nullptr, status.data(), 0) != 0) return -1;
  std::map<int, int> votes;
  for (int node : status) {
    if (node >= 0) ++votes[node];
  }
  int best = -1, best_votes = 0;
  for (auto [node, n] : votes) {
    if (n > best_votes) {
      best = node;
      best_votes = n;
    }
  }
  return best;
}

}  // namespace apptracer::links
