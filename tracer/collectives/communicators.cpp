#include "collectives/communicators.h"

#include <unistd.h>

#include <new>

#include "apptracer/records.h"

namespace apptracer {

namespace {

uint32_t next_of(std::atomic<uint32_t>* counters, int nranks, int peer) {
  if (!counters || peer < 0 || peer >= nranks) return CollectiveRecord::kUnassigned;
  return counters[peer].fetch_add(1, std::memory_order_relaxed);
}

std::unique_ptr<std::atomic<uint32_t>[]> per_peer(int nranks) {
  if (nranks <= 0) return nullptr;
  auto counters = std::make_unique<std::atomic<uint32_t>[]>(static_cast<size_t>(nranks));
  for (int i = 0; i < nranks; ++i) counters[i].store(0, std::memory_order_relaxed);
  return counters;
}

}  // namespace

CommState::CommState(CommLibrary library, uint64_t comm_id, int rank, int nranks, bool local)
    : library(library),
      comm_id(comm_id),
      local(local),
      rank(rank),
      nranks(nranks),
      sent_(per_peer(nranks)),
      received_(per_peer(nranks)) {}

uint32_t CommState::next_send_seq(int peer) { return next_of(sent_.get(), nranks, peer); }
uint32_t CommState::next_recv_seq(int peer) { return next_of(received_.get(), nranks, peer); }

CommState* CommRegistry::find_or_create(CommLibrary library, uint64_t comm_id, int rank,
                                        int nranks, bool* created) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& state : states_) {
    if (state->library == library && state->comm_id == comm_id && state->rank == rank) {
      if (created) *created = false;
      return state.get();
    }
  }
  states_.push_back(std::make_unique<CommState>(library, comm_id, rank, nranks));
  if (created) *created = true;
  return states_.back().get();
}

CommState* CommRegistry::create_local(CommLibrary library, int rank, int nranks) {
  std::lock_guard<std::mutex> lock(mutex_);
  states_.push_back(
      std::make_unique<CommState>(library, local_prefix_ | next_local_++, rank, nranks, true));
  return states_.back().get();
}

size_t CommRegistry::slot_of(uint64_t handle) {
  return static_cast<size_t>(((handle >> 3) * 0x9e3779b97f4a7c15ull) >> 52) % kHandleSlots;
}

void CommRegistry::bind(uint64_t handle, CommState* state) {
  if (handle == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  size_t start = slot_of(handle);
  for (size_t i = 0; i < kHandleSlots; ++i) {
    Slot& slot = slots_[(start + i) % kHandleSlots];
    uint64_t held = slot.handle.load(std::memory_order_relaxed);
    if (held != 0 && held != handle) continue;
    // The state first: a reader that sees the handle sees its state.
    slot.state.store(state, std::memory_order_release);
    slot.handle.store(handle, std::memory_order_release);
    return;
  }
}

void CommRegistry::unbind(uint64_t handle) {
  if (handle == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  size_t start = slot_of(handle);
  for (size_t i = 0; i < kHandleSlots; ++i) {
    Slot& slot = slots_[(start + i) % kHandleSlots];
    uint64_t held = slot.handle.load(std::memory_order_relaxed);
    if (held == 0) return;
    // The slot keeps its handle (probe chains stay intact); a handle reused
    // for a new communicator is bound again.
    if (held == handle) {
      slot.state.store(nullptr, std::memory_order_release);
      return;
    }
  }
}

CommState* CommRegistry::by_handle(uint64_t handle) const {
  if (handle == 0) return nullptr;
  size_t start = slot_of(handle);
  for (size_t i = 0; i < kHandleSlots; ++i) {
    const Slot& slot = slots_[(start + i) % kHandleSlots];
    uint64_t held = slot.handle.load(std::memory_order_acquire);
    if (held == 0) return nullptr;
    if (held == handle) return slot.state.load(std::memory_order_acquire);
  }
  return nullptr;
}

static uint64_t local_prefix_of_this_process() {
  return uint64_t{1} << 63 | (static_cast<uint64_t>(getpid()) & 0x7fffffff) << 32;
}

CommRegistry::CommRegistry() : local_prefix_(local_prefix_of_this_process()) {}

void CommRegistry::reset_after_fork() {
  new (&mutex_) std::mutex;
  local_prefix_ = local_prefix_of_this_process();
}

CommRegistry& comm_registry() {
  // Never destroyed: NCCL and MPI may call in from exit handlers.
  static CommRegistry* registry = new CommRegistry;
  return *registry;
}

}  // namespace apptracer
