#include "buffer/record_buffers.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "base/clock.h"
#include "base/self_cost.h"

namespace apptracer {

struct RecordBuffers::Chunk {
  std::atomic<uint32_t> count{0};  // records published by the producer
  uint32_t consumed = 0;           // records already handed to the writer (writer only)
  Chunk* next = nullptr;           // queue / free-list link
  Record records[kChunkRecords];
};

struct RecordBuffers::ThreadBuffer {
  std::atomic<Chunk*> current{nullptr};
  uint32_t tid = 0;
  bool in_use = false;  // guarded by threads_mutex_
  ThreadBuffer* next = nullptr;
};

namespace {

thread_local uint32_t tls_tid = 0;
thread_local bool tls_is_writer = false;
thread_local uint64_t tls_appended = 0;

}  // namespace

// Hands a thread's unfilled chunk to the writer when the thread ends.
struct ThreadExit {
  RecordBuffers* owner = nullptr;
  RecordBuffers::ThreadBuffer* buffer = nullptr;
  ~ThreadExit() {
    if (owner && buffer) owner->detach_thread(buffer);
  }
};

namespace {
thread_local ThreadExit tls_thread;
}  // namespace

RecordBuffers::RecordBuffers(size_t max_bytes, uint64_t stall_ns)
    : max_chunks_(max_bytes / sizeof(Chunk) > 2 ? max_bytes / sizeof(Chunk) : 2),
      stall_ns_(stall_ns) {}

uint32_t RecordBuffers::current_tid() {
  if (tls_tid == 0) tls_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tls_tid;
}

uint64_t RecordBuffers::appended_by_this_thread() { return tls_appended; }

void RecordBuffers::append(Record& record) {
  self_cost::Timer timer(self_cost::Site::RecordAppend);
  if (closed()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ThreadBuffer* buffer = tls_thread.owner == this ? tls_thread.buffer : attach_thread();
  record.tid = buffer->tid;
  Chunk* chunk = buffer->current.load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = acquire_chunk();
    if (chunk == nullptr) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    buffer->current.store(chunk, std::memory_order_release);
  }
  uint32_t n = chunk->count.load(std::memory_order_relaxed);
  chunk->records[n] = record;
  ++tls_appended;
  chunk->count.store(n + 1, std::memory_order_release);
  if (n + 1 == kChunkRecords) {
    buffer->current.store(nullptr, std::memory_order_release);
    submit(chunk);
  }
}

RecordBuffers::ThreadBuffer* RecordBuffers::attach_thread() {
  ThreadBuffer* buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(threads_mutex_);
    for (ThreadBuffer* b = threads_; b; b = b->next) {
      if (!b->in_use) {
        buffer = b;
        break;
      }
    }
    if (buffer == nullptr) {
      buffer = new ThreadBuffer;
      buffer->next = threads_;
      threads_ = buffer;
    }
    buffer->in_use = true;
    buffer->tid = current_tid();
  }
  tls_thread.owner = this;
  tls_thread.buffer = buffer;
  // The first records: let the writer create the file now rather than a
  // period later (a program killed early still leaves its trace).
  if (!any_thread_attached_.exchange(true)) wake_writer();

  Record thread{};
  thread.type = RecordType::Thread;
  thread.thread.ns = now_ns();
  pthread_getname_np(pthread_self(), thread.thread.name, sizeof thread.thread.name);
  append(thread);
  return buffer;
}

void RecordBuffers::detach_thread(ThreadBuffer* buffer) {
  Chunk* chunk = buffer->current.exchange(nullptr, std::memory_order_acq_rel);
  if (chunk) submit(chunk);
  std::lock_guard<std::mutex> lock(threads_mutex_);
  buffer->in_use = false;
  tls_thread.owner = nullptr;
}

void RecordBuffers::mark_writer_thread() { tls_is_writer = true; }

RecordBuffers::Chunk* RecordBuffers::acquire_chunk() {
  std::unique_lock<std::mutex> lock(pool_mutex_);
  uint64_t wait_start = 0;
  while (free_chunks_ == nullptr && allocated_chunks_ >= max_chunks_ && !tls_is_writer) {
    if (closed() || stalled_.load(std::memory_order_relaxed)) return nullptr;
    uint64_t start = now_ns();
    if (wait_start == 0) wait_start = start;
    queue_ready_.notify_one();
    pool_available_.wait_for(lock, std::chrono::milliseconds(100));
    uint64_t now = now_ns();
    producer_wait_ns_.fetch_add(now - start, std::memory_order_relaxed);
    if (free_chunks_ != nullptr) break;
    uint64_t alive = std::max(wait_start, last_progress_ns_.load(std::memory_order_relaxed));
    if (now - alive < stall_ns_ || stalled_.exchange(true)) continue;
    stalls_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    if (stall_reporter_) stall_reporter_(now - alive);
    return nullptr;
  }
  if (free_chunks_) {
    Chunk* chunk = free_chunks_;
    free_chunks_ = chunk->next;
    chunk->next = nullptr;
    return chunk;
  }
  ++allocated_chunks_;
  // Not from the program's heap: a malloc'd chunk is a host block the
  // interposed allocator may record, on a thread getting its first chunk
  // under pool_mutex_, which deadlocked (a thread whose first record was an
  // NVTX range, with every block recorded). The raw system call also passes
  // by the interposed mmap. Chunks are recycled, never unmapped.
  void* memory = reinterpret_cast<void*>(syscall(SYS_mmap, nullptr, sizeof(Chunk),
                                                 PROT_READ | PROT_WRITE,
                                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (memory == MAP_FAILED) return nullptr;
  // A forked child starts with buffers of its own (reset_after_fork): the
  // parent's chunks, up to the cap, are not copied into it.
  madvise(memory, sizeof(Chunk), MADV_DONTFORK);
  return new (memory) Chunk;
}

void RecordBuffers::submit(Chunk* chunk) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  chunk->next = nullptr;
  if (queue_tail_) {
    queue_tail_->next = chunk;
  } else {
    queue_head_ = chunk;
  }
  queue_tail_ = chunk;
  queue_ready_.notify_one();
}

void RecordBuffers::recycle(Chunk* chunk) {
  chunk->count.store(0, std::memory_order_relaxed);
  chunk->consumed = 0;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  chunk->next = free_chunks_;
  free_chunks_ = chunk;
  last_progress_ns_.store(now_ns(), std::memory_order_relaxed);
  stalled_.store(false, std::memory_order_relaxed);
  pool_available_.notify_one();
}

void RecordBuffers::note_progress(const char* stage) {
  stage_.store(stage, std::memory_order_relaxed);
  last_progress_ns_.store(now_ns(), std::memory_order_relaxed);
}

void RecordBuffers::drain(const Consumer& outer_consume) {
  // Only the writer drains: a relaxed add on its own counter costs nothing.
  auto consume = [&](const Record* records, size_t count) {
    drained_.fetch_add(count, std::memory_order_relaxed);
    outer_consume(records, count);
  };
  Chunk* full = nullptr;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    full = queue_head_;
    queue_head_ = queue_tail_ = nullptr;
    wake_pending_ = false;
  }
  while (full) {
    Chunk* next = full->next;
    uint32_t n = full->count.load(std::memory_order_acquire);
    if (n > full->consumed) consume(full->records + full->consumed, n - full->consumed);
    recycle(full);
    full = next;
  }
  std::lock_guard<std::mutex> lock(threads_mutex_);
  for (ThreadBuffer* buffer = threads_; buffer; buffer = buffer->next) {
    Chunk* chunk = buffer->current.load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    uint32_t n = chunk->count.load(std::memory_order_acquire);
    if (n > chunk->consumed) {
      consume(chunk->records + chunk->consumed, n - chunk->consumed);
      chunk->consumed = n;
    }
  }
}

void RecordBuffers::wait_for_work(std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  queue_ready_.wait_for(lock, period, [this] { return queue_head_ != nullptr || wake_pending_; });
  wake_pending_ = false;
}

void RecordBuffers::wake_writer() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  wake_pending_ = true;
  queue_ready_.notify_one();
}

void RecordBuffers::close() {
  closed_.store(true, std::memory_order_release);
  pool_available_.notify_all();
}

void RecordBuffers::reset_after_fork() {
  // Only the forking thread exists in the child. Mutexes may have been held by
  // threads that no longer exist, so rebuild them rather than unlock them. The
  // parent's chunks belong to the parent's trace: leave them, unreferenced.
  new (&pool_mutex_) std::mutex;
  new (&queue_mutex_) std::mutex;
  new (&threads_mutex_) std::mutex;
  new (&pool_available_) std::condition_variable;
  new (&queue_ready_) std::condition_variable;
  free_chunks_ = nullptr;
  allocated_chunks_ = 0;
  queue_head_ = queue_tail_ = nullptr;
  wake_pending_ = false;
  threads_ = nullptr;
  tls_thread.owner = nullptr;
  tls_thread.buffer = nullptr;
  tls_tid = 0;
  closed_.store(false);
  any_thread_attached_.store(false);
  producer_wait_ns_.store(0);
  dropped_.store(0);
  stalls_.store(0);
  stalled_.store(false);
  last_progress_ns_.store(0);
  drained_.store(0);
}

}  // namespace apptracer
