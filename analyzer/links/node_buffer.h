// A host buffer whose pages live on one NUMA node, for measuring copies
// per node. Placed with mbind(MPOL_BIND) on a fresh anonymous mapping before
// its pages are first touched (the kernel then allocates each page on that
// node), then checked with move_pages (which only reports where pages are).
// Both are plain system calls: no libnuma is needed. The same buffer serves
// as pageable memory, and as pinned memory once registered with the driver
// (cuMemHostRegister pins the pages where they are).
#pragma once

#include <cstddef>
#include <string>

namespace apptracer::links {

class NodeBuffer {
 public:
  // node < 0: no placement (a machine without NUMA information).
  NodeBuffer(size_t bytes, int node);
  ~NodeBuffer();
  NodeBuffer(const NodeBuffer&) = delete;
  NodeBuffer& operator=(const NodeBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  int node() const { return node_; }
  // Gives back the pages of [region, region + bytes) (page-aligned, inside
  // the buffer): the next write to each faults in a new one.
  void discard(void* region, size_t bytes);
  // Empty when the pages are where asked, else why not (one line).
  const std::string& placement_problem() const { return problem_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int node_ = -1;
  std::string problem_;
};

// The node holding most of the sampled pages of [data, data + bytes), or -1.
int node_of_pages(const void* data, size_t bytes);

}  // namespace apptracer::links
