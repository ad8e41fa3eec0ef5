// Allocator stress: 4 threads, 10M allocation operations in all, mostly
// small, 1% large (sizes 1,000,000..1,099,999, which nothing else uses, so
// the trace's rows can be counted). Every block carries a pattern checked
// before it is freed; the program fails if one is wrong. No CUDA.
//   alloc_stress [THREADS] [OPERATIONS_PER_THREAD]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace {

constexpr size_t kSlots = 1024;

struct Random {
  uint64_t state;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

enum class How : uint8_t { Malloc, Calloc, New };

struct Slot {
  unsigned char* p = nullptr;
  size_t bytes = 0;
  uint64_t tag = 0;
  How how = How::Malloc;
};

// The first and last 8 bytes hold the tag: enough to catch a block that was
// handed out twice or freed early, cheap enough for 10M operations.
void stamp(Slot& s) {
  std::memcpy(s.p, &s.tag, 8);
  std::memcpy(s.p + s.bytes - 8, &s.tag, 8);
}

bool intact(const Slot& s) {
  uint64_t head, tail;
  std::memcpy(&head, s.p, 8);
  std::memcpy(&tail, s.p + s.bytes - 8, 8);
  return head == s.tag && tail == s.tag;
}

void release(Slot& s) {
  if (s.how == How::New) {
    delete[] s.p;
  } else {
    std::free(s.p);
  }
  s.p = nullptr;
}

struct Result {
  uint64_t large = 0;
  uint64_t corrupt = 0;
  uint64_t checksum = 0;
};

void work(int thread, long operations, Result& result) {
  Random random{0x9e3779b97f4a7c15ull * (thread + 1)};
  std::vector<Slot> slots(kSlots);
  for (long i = 0; i < operations; ++i) {
    Slot& s = slots[random.next() % kSlots];
    if (s.p) {
      if (!intact(s)) ++result.corrupt;
      result.checksum += s.p[8 % s.bytes];
      release(s);
    }
    uint64_t r = random.next();
    bool large = r % 100 == 0;
    s.bytes = large ? 1000000 + (r >> 8) % 100000 : 16 + (r >> 8) % 1008;
    s.how = static_cast<How>((r >> 32) % 3);
    s.tag = r | 1;
    if (s.how == How::New) {
      s.p = new unsigned char[s.bytes];
    } else if (s.how == How::Calloc) {
      s.p = static_cast<unsigned char*>(std::calloc(1, s.bytes));
    } else {
      s.p = static_cast<unsigned char*>(std::malloc(s.bytes));
    }
    if (!s.p) std::abort();
    s.p[8 % s.bytes] = static_cast<unsigned char>(r >> 40);
    stamp(s);
    result.large += large;
  }
  for (Slot& s : slots) {
    if (!s.p) continue;
    if (!intact(s)) ++result.corrupt;
    release(s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  long operations = argc > 2 ? std::atol(argv[2]) : 10'000'000 / threads;
  if (threads < 1 || operations < 1) {
    std::fprintf(stderr, "usage: alloc_stress [THREADS] [OPERATIONS_PER_THREAD]\n");
    return 2;
  }
  std::vector<Result> results(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(work, t, operations, std::ref(results[t]));
  for (std::thread& w : workers) w.join();
  Result total;
  for (const Result& r : results) {
    total.large += r.large;
    total.corrupt += r.corrupt;
    total.checksum += r.checksum;
  }
  std::printf("operations %ld large %llu corrupt %llu checksum %llu\n", operations * threads,
              static_cast<unsigned long long>(total.large),
              static_cast<unsigned long long>(total.corrupt),
              static_cast<unsigned long long>(total.checksum));
  return total.corrupt == 0 ? 0 : 1;
}
