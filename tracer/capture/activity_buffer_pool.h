// The buffers CUPTI fills with activity records. CUPTI asks for one on the
// thread whose CUDA call produced the first record that needs it (a buffer
// per thread in CUDA 13), and zeroes it there unless told it comes zeroed.
// Zeroing a fresh 8 MiB buffer faults in all its pages: about 5 ms inside
// the program's first kernel launch or copy on each new thread (measured on
// the H100; it made a GPU idle gap no untraced run has). So buffers come
// from here zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), either
// pre-faulted at start-up or recycled: a completed buffer is zeroed where
// CUPTI wrote it, off the program's threads, and kept for the next request.
// Lock-free: taken and given back in CUPTI callbacks on any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace apptracer {

class ActivityBufferPool {
 public:
  static constexpr size_t kBufferBytes = size_t{8} << 20;
  static constexpr int kSlots = 16;

  // Maps `count` pre-faulted zeroed buffers (at most kSlots).
  void prefill(int count);
  // A zeroed buffer of kBufferBytes: a kept one, else a new mapping (zero
  // pages, faulted in as CUPTI writes); nullptr when memory is exhausted.
  uint8_t* take();
  // `used` bytes from the start were written: they are zeroed and the buffer
  // is kept, or unmapped when every slot is full.
  void give_back(uint8_t* buffer, size_t used);
  int kept() const;

 private:
  bool keep(uint8_t* buffer);
  std::atomic<uint8_t*> slots_[kSlots] = {};
};

}  // namespace apptracer
