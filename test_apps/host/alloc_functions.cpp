// Every host allocation function once, each with a size no runtime uses, so
// the trace's `allocations` rows can be checked one by one
// (tests/tracer/host_memory_test.py). No CUDA. Prints a checksum of what it
// wrote, which must be the same traced and untraced.
#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

uint64_t checksum = 0;

// Built without PIE, taking malloc's address in code (assigned in main)
// makes the executable's own PLT entry its canonical address, as in
// distributions' python3: the tracer must still see that calls reach it.
void* (*volatile allocate)(size_t) = nullptr;

__attribute__((noinline)) void take_malloc_address() { allocate = &::malloc; }

// Writes every byte, reads them back into the checksum: the memory is used.
// The empty asm makes the pointer escape, so the compiler cannot fold a
// malloc/free pair away.
void use(void* p, size_t bytes, unsigned char seed) {
  asm volatile("" : : "r"(p) : "memory");
  auto* bytes_p = static_cast<unsigned char*>(p);
  std::memset(bytes_p, seed, bytes);
  for (size_t i = 0; i < bytes; i += 4096) checksum += bytes_p[i];
  checksum += bytes_p[bytes - 1];
}

}  // namespace

int main() {
  take_malloc_address();
  void* p = allocate(100001);
  use(p, 100001, 1);
  std::free(p);

  p = std::calloc(3, 33334);  // 100002 bytes
  checksum += static_cast<unsigned char*>(p)[100001];  // zeroed
  use(p, 100002, 2);
  std::free(p);

  p = std::malloc(100003);
  use(p, 100003, 3);
  p = std::realloc(p, 200003);  // the 100003-byte block ends, a new one begins
  use(p, 200003, 4);
  std::free(p);

  if (posix_memalign(&p, 64, 100004) != 0) return 1;
  use(p, 100004, 5);
  std::free(p);

  p = aligned_alloc(256, 100096);
  use(p, 100096, 6);
  std::free(p);

  p = memalign(128, 100005);
  use(p, 100005, 7);
  std::free(p);

  p = valloc(100006);
  use(p, 100006, 8);
  std::free(p);

  p = pvalloc(100007);
  use(p, 100007, 9);
  std::free(p);

  p = reallocarray(nullptr, 1000, 101);  // 101000 bytes
  use(p, 101000, 10);
  std::free(p);

  p = mmap(nullptr, 100008, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  use(p, 100008, 11);
  munmap(p, 100008);

  char* array = new char[100010];
  use(array, 100010, 12);
  delete[] array;

  // Below the threshold: counted in the histogram, never a row.
  for (int i = 0; i < 1000; ++i) {
    void* small = std::malloc(24);
    use(small, 24, 13);
    std::free(small);
  }
  p = std::malloc(4095);
  use(p, 4095, 14);
  std::free(p);

  // Still live at exit: a row without a free time.
  p = std::malloc(100009);
  use(p, 100009, 15);

  std::printf("checksum %llu\n", static_cast<unsigned long long>(checksum));
  return 0;
}
