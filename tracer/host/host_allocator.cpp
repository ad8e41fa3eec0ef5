// The malloc family and anonymous mmap, interposed (LD_PRELOAD only: symbols
// of a library the driver dlopen()s do not interpose) so host_blocks.cpp
// knows which host memory the program holds.
//
// Each function forwards to the next definition (glibc's, or an allocator
// the program links, found with dlsym(RTLD_NEXT)) and then tells
// host_blocks. Rules that keep this safe anywhere the program may call it:
//  * before the real functions are known (dlsym itself allocates), requests
//    are served from a small static arena that is never freed;
//  * a thread already inside the hooks (our own allocations, a signal handler
//    interrupting us, the writer thread) only forwards;
//  * a block is forgotten *before* the real free, so an address reused by
//    another thread at once is never mistaken for the old block.
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "host/host_allocator.h"
#include "base/deferred_signal.h"
#include "base/inside_tracer.h"
#include "base/self_cost.h"
#include "host/host_blocks.h"

namespace apptracer {
namespace {

struct RealFunctions {
  void* (*malloc)(size_t);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  void (*free)(void*);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  size_t (*malloc_usable_size)(void*);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  int (*munmap)(void*, size_t);
  void* (*mremap)(void*, size_t, size_t, int, ...);
};

RealFunctions real;
std::atomic<int> real_state{0};  // 0 unknown, 1 being looked up, 2 known

// Whether the real malloc is glibc's, whose blocks carry their chunk size in
// the word before them (flags in its low three bits). Reading that word is
// free, as free() reads it too; malloc_usable_size also reads the next
// chunk's header, a cache miss on most frees in a large heap: it was two
// thirds of a program's time in a loop of small frees, and ~60 ns a free.
bool glibc_chunks = false;

// What dlsym allocates while we look the real functions up.
constexpr size_t kArenaBytes = 64 << 10;
alignas(64) char arena[kArenaBytes];
std::atomic<size_t> arena_used{0};

struct ArenaHeader {
  size_t bytes;
  size_t pad;  // keeps the block 16-byte aligned
};

bool in_arena(const void* p) {
  return p >= static_cast<const void*>(arena) && p < static_cast<const void*>(arena + kArenaBytes);
}

void* arena_allocate(size_t bytes) {
  size_t need = (sizeof(ArenaHeader) + bytes + 15) & ~size_t{15};
  size_t offset = arena_used.fetch_add(need);
  if (offset + need > kArenaBytes) return nullptr;
  auto* header = reinterpret_cast<ArenaHeader*>(arena + offset);
  header->bytes = bytes;
  return header + 1;
}

size_t arena_size(const void* p) { return (static_cast<const ArenaHeader*>(p) - 1)->bytes; }

template <typename Function>
void look_up(Function& slot, const char* name) {
  slot = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

// False while the lookup is under way (the caller then uses the arena).
bool real_functions_known() {
  if (real_state.load(std::memory_order_acquire) == 2) return true;
  int expected = 0;
  if (!real_state.compare_exchange_strong(expected, 1)) {
    // Another thread is looking up: wait unless it is us, inside dlsym.
    while (real_state.load(std::memory_order_acquire) == 1) {
      if (thread_inside_tracer) return false;
    }
    return true;
  }
  {
    InsideTracer inside;  // what dlsym allocates comes from the arena
    look_up(real.malloc, "malloc");
    look_up(real.calloc, "calloc");
    look_up(real.realloc, "realloc");
    look_up(real.free, "free");
    look_up(real.posix_memalign, "posix_memalign");
    look_up(real.aligned_alloc, "aligned_alloc");
    look_up(real.memalign, "memalign");
    look_up(real.valloc, "valloc");
    look_up(real.pvalloc, "pvalloc");
    look_up(real.malloc_usable_size, "malloc_usable_size");
    look_up(real.mmap, "mmap");
    look_up(real.munmap, "munmap");
    look_up(real.mremap, "mremap");
    glibc_chunks = real.malloc &&
                   reinterpret_cast<void*>(real.malloc) == dlsym(RTLD_NEXT, "__libc_malloc");
  }
  real_state.store(2, std::memory_order_release);
  return true;
}

// Whether the hooks should look at this call at all.
bool tracking() { return host_blocks::enabled() && !thread_inside_tracer; }

// Set while allocator_interposed() probes, and when the probe reached us.
__thread bool probing __attribute__((tls_model("initial-exec"))) = false;
__thread bool probe_reached __attribute__((tls_model("initial-exec"))) = false;

void note_allocation(void* p, size_t bytes, bool mapped = false) {
  if (!p) return;
  if (!host_blocks::enabled()) {
    if (probing) probe_reached = true;
    return;
  }
  if (thread_inside_tracer) return;
  self_cost::Timer timer(self_cost::Site::HostAllocate);
  InsideTracer inside;
  host_blocks::on_allocate(reinterpret_cast<uint64_t>(p), bytes, mapped);
}

// Whether the block is below the tracked size, from the allocator's header.
// A glibc chunk is larger than the block it holds, so a chunk below the
// threshold never holds a tracked block.
bool surely_untracked(void* p) {
  if (glibc_chunks) return (static_cast<const size_t*>(p)[-1] & ~size_t{7}) < host_blocks::min_bytes();
  return real.malloc_usable_size && real.malloc_usable_size(p) < host_blocks::min_bytes();
}

// Before the real free. Small blocks are never tracked, and the allocator's
// header says so without a lookup.
void note_free(void* p) {
  if (!p || !tracking()) return;
  self_cost::Timer timer(self_cost::Site::HostFree);
  if (surely_untracked(p)) return;
  InsideTracer inside;
  host_blocks::on_free(reinterpret_cast<uint64_t>(p));
}

// Whether the range held a tracked region.
bool note_unmap(void* p, size_t bytes) {
  if (!tracking()) return false;
  InsideTracer inside;
  return host_blocks::on_unmap(reinterpret_cast<uint64_t>(p), bytes);
}

// Anonymous memory the program can use. PROT_NONE reservations are not data
// (the CUDA driver reserves the GPUs' virtual address ranges that way).
bool is_anonymous_data(int protection, int flags, int fd) {
  return (flags & MAP_ANONYMOUS) && fd == -1 && protection != PROT_NONE;
}

}  // namespace

// The program's malloc is ours only when we were preloaded: a library the
// driver dlopen()s through CUDA_INJECTION64_PATH interposes nothing. The
// symbol's address cannot tell (an executable that takes malloc's address
// makes its own PLT entry the canonical one), so call it and see.
bool allocator_interposed() {
  auto* global_malloc = reinterpret_cast<void* (*)(size_t)>(dlsym(RTLD_DEFAULT, "malloc"));
  if (!global_malloc) return false;
  probing = true;
  probe_reached = false;
  void* p = global_malloc(1);
  probing = false;
  std::free(p);
  return probe_reached;
}

}  // namespace apptracer

using namespace apptracer;

#define APPTRACER_EXPORT extern "C" __attribute__((visibility("default")))

APPTRACER_EXPORT void* malloc(size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) return arena_allocate(bytes);
  void* p = real.malloc(bytes);
  note_allocation(p, bytes);
  return p;
}

APPTRACER_EXPORT void* calloc(size_t count, size_t size) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return nullptr;
    return arena_allocate(bytes);  // static memory is zeroed
  }
  void* p = real.calloc(count, size);
  note_allocation(p, count * size);
  return p;
}

APPTRACER_EXPORT void free(void* p) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!p || in_arena(p)) return;
  if (!real_functions_known()) return;  // cannot be ours to free yet
  note_free(p);
  real.free(p);
}

APPTRACER_EXPORT void* realloc(void* p, size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known() || in_arena(p)) {
    void* q = real_state.load() == 2 ? malloc(bytes) : arena_allocate(bytes);
    if (q && p) std::memcpy(q, p, std::min(bytes, arena_size(p)));
    return q;
  }
  if (!p) return malloc(bytes);
  if (bytes == 0) {
    free(p);
    return nullptr;
  }
  // The old block ends before the real call: afterwards its address may
  // already be another thread's. If the call fails the old block lives on
  // untracked, which only means CUDA touching it finds no allocation.
  note_free(p);
  void* q = real.realloc(p, bytes);
  note_allocation(q, bytes);
  return q;
}

APPTRACER_EXPORT void* reallocarray(void* p, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

APPTRACER_EXPORT int posix_memalign(void** out, size_t alignment, size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) return ENOMEM;
  int result = real.posix_memalign(out, alignment, bytes);
  if (result == 0) note_allocation(*out, bytes);
  return result;
}

APPTRACER_EXPORT void* aligned_alloc(size_t alignment, size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) return nullptr;
  void* p = real.aligned_alloc(alignment, bytes);
  note_allocation(p, bytes);
  return p;
}

APPTRACER_EXPORT void* memalign(size_t alignment, size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) return nullptr;
  void* p = real.memalign(alignment, bytes);
  note_allocation(p, bytes);
  return p;
}

APPTRACER_EXPORT void* valloc(size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) return nullptr;
  void* p = real.valloc(bytes);
  note_allocation(p, bytes);
  return p;
}

APPTRACER_EXPORT void* pvalloc(size_t bytes) {
  SignalsDeferred deferred;  // the allocator's lock may be held below
  if (!real_functions_known()) return nullptr;
  void* p = real.pvalloc(bytes);
  note_allocation(p, bytes);
  return p;
}

APPTRACER_EXPORT size_t malloc_usable_size(void* p) {
  if (in_arena(p)) return arena_size(p);
  if (!real_functions_known() || !p) return 0;
  return real.malloc_usable_size(p);
}

APPTRACER_EXPORT void* mmap(void* address, size_t bytes, int protection, int flags, int fd,
                            off_t offset) {
  if (!real_functions_known()) return MAP_FAILED;
  void* p = real.mmap(address, bytes, protection, flags, fd, offset);
  if (p != MAP_FAILED && is_anonymous_data(protection, flags, fd)) note_allocation(p, bytes, true);
  return p;
}

APPTRACER_EXPORT void* mmap64(void* address, size_t bytes, int protection, int flags, int fd,
                              off_t offset) {
  return mmap(address, bytes, protection, flags, fd, offset);
}

APPTRACER_EXPORT int munmap(void* address, size_t bytes) {
  if (!real_functions_known()) return -1;
  note_unmap(address, bytes);
  return real.munmap(address, bytes);
}

APPTRACER_EXPORT void* mremap(void* old_address, size_t old_bytes, size_t new_bytes, int flags,
                              ...) {
  if (!real_functions_known()) return MAP_FAILED;
  void* new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list rest;
    va_start(rest, flags);
    new_address = va_arg(rest, void*);
    va_end(rest);
  }
  // A tracked region that moves or grows is a new region; untracked memory
  // (a file mapping) stays untracked.
  bool was_tracked = note_unmap(old_address, old_bytes);
  void* p = real.mremap(old_address, old_bytes, new_bytes, flags, new_address);
  if (p != MAP_FAILED && was_tracked) note_allocation(p, new_bytes, true);
  return p;
}
