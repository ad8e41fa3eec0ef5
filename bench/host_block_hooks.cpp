// What watching host blocks costs a program's allocation calls (CPU, no GPU):
// the hooks' work for a block of 4 KiB or more (host/host_blocks.cpp), the
// real malloc and free around it taken out, on one program thread, alone
// and beside a thread doing the writer's share: forgetting freed blocks a
// pass, and looking up a touched address (which indexes the freed blocks
// under the shard's lock). Sizes and lifetimes follow a training step's
// large host blocks: 4 KiB to 64 KiB, a few hundred live.
//   host_block_hooks [BLOCKS_PER_ROUND] [ROUNDS]
// Prints, per writer mode, the median over rounds of ns per allocation and
// per free, and the slowest 0.1% and the slowest call of all rounds.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "buffer/record_buffers.h"
#include "host/host_blocks.h"

using namespace apptracer;

namespace {

constexpr size_t kLive = 384;  // large blocks a step holds at once
constexpr uint64_t kKeptNs = 400'000'000;  // how long the writer keeps freed blocks
constexpr auto kWriterPeriod = std::chrono::milliseconds(50);

// The writer's share, as store/ does it: a pass forgets what was freed long
// enough ago; a touched host address is looked up (here every millisecond).
enum class Writer { None, Forgets, ForgetsAndLooksUp };
const char* name(Writer writer) {
  switch (writer) {
    case Writer::None: return "alone";
    case Writer::Forgets: return "writer forgets";
    default: return "writer forgets and looks up";
  }
}

struct Round {
  double allocate_ns = 0;
  double free_ns = 0;
};

Round run(long blocks, Writer writer_mode, std::vector<uint32_t>& latencies) {
  std::atomic<bool> done{false};
  std::atomic<uint64_t> last_address{0};
  std::thread writer([&] {
    if (writer_mode == Writer::None) return;
    auto next_pass = std::chrono::steady_clock::now();
    while (!done.load()) {
      if (writer_mode == Writer::ForgetsAndLooksUp) {
        host_blocks::promote_for_writer(last_address.load() + 8, now_ns());
      }
      if (std::chrono::steady_clock::now() >= next_pass) {
        host_blocks::forget_freed_before(now_ns() - kKeptNs);
        next_pass += kWriterPeriod;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::mt19937_64 random(42);  // every round churns the same sizes
  std::vector<void*> live(kLive, nullptr);
  uint64_t allocate_total = 0, free_total = 0;
  long frees = 0;
  for (long i = 0; i < blocks; ++i) {
    size_t slot = random() % kLive;
    if (void* old = live[slot]) {
      uint64_t start = now_ns();
      host_blocks::on_free(reinterpret_cast<uint64_t>(old));
      uint64_t took = now_ns() - start;
      free_total += took;
      latencies.push_back(static_cast<uint32_t>(std::min<uint64_t>(took, UINT32_MAX)));
      ++frees;
      last_address.store(reinterpret_cast<uint64_t>(old), std::memory_order_relaxed);
      std::free(old);
    }
    size_t bytes = 4096 + random() % (60 << 10);
    void* p = std::malloc(bytes);
    uint64_t start = now_ns();
    host_blocks::on_allocate(reinterpret_cast<uint64_t>(p), bytes, false);
    uint64_t took = now_ns() - start;
    allocate_total += took;
    latencies.push_back(static_cast<uint32_t>(std::min<uint64_t>(took, UINT32_MAX)));
    live[slot] = p;
  }
  for (void*& p : live) {
    if (!p) continue;
    host_blocks::on_free(reinterpret_cast<uint64_t>(p));
    std::free(p);
  }
  done.store(true);
  writer.join();
  return {static_cast<double>(allocate_total) / blocks, static_cast<double>(free_total) / std::max(1L, frees)};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long blocks = argc > 1 ? std::atol(argv[1]) : 200000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  static RecordBuffers buffers{1 << 20};
  host_blocks::enable({4096, false}, buffers);
  for (Writer mode : {Writer::None, Writer::Forgets, Writer::ForgetsAndLooksUp}) {
    std::vector<double> allocate, free;
    std::vector<uint32_t> latencies;
    for (int r = 0; r < rounds; ++r) {
      Round round = run(blocks, mode, latencies);
      allocate.push_back(round.allocate_ns);
      free.push_back(round.free_ns);
    }
    std::sort(latencies.begin(), latencies.end());
    uint32_t slowest_permille = latencies[latencies.size() - 1 - latencies.size() / 1000];
    std::printf("%-28s allocation %6.0f ns  free %6.0f ns  slowest 0.1%% %6u ns  slowest %8u ns\n",
                name(mode), median(allocate), median(free), slowest_permille, latencies.back());
    std::string key = mode == Writer::None ? "alone" : mode == Writer::Forgets ? "forgets" : "looks_up";
    std::printf("result host_block_hooks.%s.allocate_ns %.0f\n", key.c_str(), median(allocate));
    std::printf("result host_block_hooks.%s.free_ns %.0f\n", key.c_str(), median(free));
  }
  host_blocks::disable();
  return 0;
}
