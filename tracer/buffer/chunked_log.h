// A first-in first-out log in chunks from a NodePool: appending and popping
// cost constant time and allocate nothing through malloc, so the allocator
// hooks can append on the program's thread (a free noted here instead of in a
// deep tree). Popped chunks go back to the pool and are reused.
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>

#include "buffer/node_pool.h"

namespace apptracer {

// Not thread-safe: each log is used under one lock. Entries are never
// destroyed, only overwritten: trivially destructible types only, aligned
// no further than the pool's 16 bytes.
template <typename T, uint32_t kPerChunk = 1024>
class ChunkedLog {
  static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= 16);

 public:
  ChunkedLog() = default;
  ChunkedLog(const ChunkedLog&) = delete;
  ChunkedLog& operator=(const ChunkedLog&) = delete;

  // False when no chunk could be mapped for it (nothing appended).
  bool push(const T& value) {
    if (!tail_ || tail_->count == kPerChunk) {
      void* memory = chunks_.take(sizeof(Chunk));
      if (!memory) return false;
      auto* chunk = static_cast<Chunk*>(memory);
      chunk->next = nullptr;
      chunk->count = 0;
      (tail_ ? tail_->next : head_) = chunk;
      tail_ = chunk;
    }
    new (tail_->at(tail_->count++)) T(value);
    return true;
  }
  bool empty() const { return head_ == nullptr; }
  const T& front() const { return *std::launder(reinterpret_cast<const T*>(head_->at(first_))); }
  void pop_front() {
    // Every chunk but the last is full: the head is used up at its count.
    if (++first_ < head_->count) return;
    Chunk* next = head_->next;
    chunks_.give(head_);
    head_ = next;
    if (!head_) tail_ = nullptr;
    first_ = 0;
  }
  void clear() {
    while (!empty()) pop_front();
  }

 private:
  struct Chunk {
    Chunk* next;
    uint32_t count;
    alignas(T) unsigned char entries[sizeof(T) * kPerChunk];
    void* at(uint32_t i) { return entries + sizeof(T) * i; }
    const void* at(uint32_t i) const { return entries + sizeof(T) * i; }
  };
  NodePool chunks_;
  Chunk* head_ = nullptr;
  Chunk* tail_ = nullptr;
  uint32_t first_ = 0;  // in head_
};

}  // namespace apptracer
