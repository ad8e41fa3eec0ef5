// Memory for map nodes and log chunks that the allocator hooks' own
// structures need, taken from mmap in slabs, not from the program's heap:
// the hooks allocate nothing through malloc (our small nodes interleaved with
// the program's blocks would change how its allocator behaves, and cost it,
// measured on the H100 host), and slabs are reused, so a steady program
// maps nothing more.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace apptracer {

// Fixed-size pieces (the size of the first taken); not thread-safe: each
// pool is used under one lock.
class NodePool {
 public:
  void* take(size_t bytes) {
    if (!free_) refill((bytes + 15) & ~size_t{15});
    void* node = free_;
    if (node) free_ = *static_cast<void**>(node);
    return node;
  }
  void give(void* node) {
    *static_cast<void**>(node) = free_;
    free_ = node;
  }

 private:
  void refill(size_t node_bytes) {
    constexpr size_t kSlabBytes = 256 << 10;
    size_t slab_bytes = node_bytes > kSlabBytes ? node_bytes : kSlabBytes;
    void* slab = mmap(nullptr, slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slab == MAP_FAILED) return;
    for (size_t at = 0; at + node_bytes <= slab_bytes; at += node_bytes) {
      give(static_cast<char*>(slab) + at);
    }
  }
  void* free_ = nullptr;
};

// For std::map and std::multimap, which allocate one node at a time.
template <typename T>
struct PoolAllocator {
  using value_type = T;
  explicit PoolAllocator(NodePool* pool) : pool(pool) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& other) : pool(other.pool) {}
  T* allocate(size_t n) {
    void* node = n == 1 ? pool->take(sizeof(T)) : nullptr;
    if (!node) throw std::bad_alloc();
    return static_cast<T*>(node);
  }
  void deallocate(T* node, size_t) { pool->give(node); }
  template <typename U>
  bool operator==(const PoolAllocator<U>& other) const { return pool == other.pool; }
  template <typename U>
  bool operator!=(const PoolAllocator<U>& other) const { return pool != other.pool; }
  NodePool* pool;
};

}  // namespace apptracer
