// Malloc-bound program: mixed-size host allocation churn (malloc, calloc,
// realloc, free) from T threads, no CUDA. What an interposed malloc family
// costs shows up here; compare.sh runs it untraced and under apptracer.
// Prints "<ns per allocation call, per thread>" (wall time / calls per thread).
//   malloc_churn [THREADS] [CALLS_PER_THREAD]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr size_t kLiveSlots = 4096;  // allocations each thread keeps live

// xorshift: cheap and deterministic, so every run churns the same sizes.
struct Random {
  uint64_t state;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

// Mostly small objects, as in programs whose time goes to malloc; a few
// large ones (some above glibc's mmap threshold) keep the allocator honest
// without letting page faults dominate: 80% 8 B-256 B, 18% to 16 KiB,
// 2% to 1 MiB.
size_t pick_size(Random& random) {
  uint64_t r = random.next();
  uint64_t bucket = r % 100;
  uint64_t spread = r >> 8;
  if (bucket < 80) return 8 + spread % 248;
  if (bucket < 98) return 256 + spread % (16 << 10);
  return (16 << 10) + spread % (1008 << 10);
}

void churn(uint64_t seed, long calls, std::vector<void*>& slots) {
  Random random{seed};
  for (long i = 0; i < calls; ++i) {
    size_t slot = random.next() % kLiveSlots;
    size_t bytes = pick_size(random);
    uint64_t kind = random.next() % 10;
    void*& p = slots[slot];
    if (kind == 0 && p) {
      p = std::realloc(p, bytes);
    } else {
      std::free(p);
      p = kind == 1 ? std::calloc(1, bytes) : std::malloc(bytes);
    }
    // Touch it, so neither the compiler nor the allocator can skip the work.
    if (p) static_cast<volatile char*>(p)[0] = static_cast<char>(i);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  long calls = argc > 2 ? std::atol(argv[2]) : 2'000'000;
  if (threads < 1 || calls < 1) {
    std::fprintf(stderr, "usage: malloc_churn [THREADS] [CALLS_PER_THREAD]\n");
    return 2;
  }
  std::vector<std::vector<void*>> slots(threads, std::vector<void*>(kLiveSlots, nullptr));
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back(churn, 0x9e3779b97f4a7c15ull * (t + 1), calls, std::ref(slots[t]));
  }
  for (std::thread& worker : workers) worker.join();
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  for (auto& thread_slots : slots) {
    for (void* p : thread_slots) std::free(p);
  }
  std::printf("%.1f\n", ns / calls);
  return 0;
}
