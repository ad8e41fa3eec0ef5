#include "analyzer/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace apptracer {

bool advise_huge_pages(void* memory, size_t bytes) {
  auto first = (reinterpret_cast<uintptr_t>(memory) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  auto end = (reinterpret_cast<uintptr_t>(memory) + bytes) & ~(kHugePageBytes - 1);
  if (end <= first) return false;
  return madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE) == 0;
}

}  // namespace apptracer

// The replaceable operator new: what the standard library's does (malloc,
// and the new-handler until it gives up), plus the advice. new[] and the
// nothrow forms call this one; operator delete frees as it always does.
void* operator new(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  for (;;) {
    if (void* memory = std::malloc(bytes)) {
      if (bytes >= apptracer::kHugePageBytes) apptracer::advise_huge_pages(memory, bytes);
      return memory;
    }
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
