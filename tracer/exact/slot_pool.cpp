#include "exact/slot_pool.h"

#include <algorithm>
#include <cstring>

namespace apptracer::exact {

namespace {

// Entries read with the header: most launches touch fewer pages, so one copy
// of ~10 KiB reads them back whole.
constexpr uint32_t kEntriesWithHeader = 256;

uint32_t index_words_for(uint32_t capacity) {
  uint32_t words = 1;
  while (words < 2 * capacity) words <<= 1;
  return words;
}

}  // namespace

SlotPool::SlotPool(DeviceMemory& memory, void* context, PoolOptions options, RetiredSink sink)
    : memory_(memory), context_(context), options_(options), sink_(std::move(sink)) {
  options_.capacity = std::clamp<uint32_t>(options_.capacity, 1, kMaxCapacity);
  options_.slots = std::max<uint32_t>(options_.slots, 1);
  index_words_ = index_words_for(options_.capacity);
}

uint64_t SlotPool::slot_bytes() const {
  return exact::slot_bytes(options_.capacity, index_words_);
}

size_t SlotPool::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::count_if(slots_.begin(), slots_.end(),
                       [](const Slot& s) { return s.state == State::Busy; });
}

bool SlotPool::allocate(StreamHandle stream) {
  uint64_t bytes = slot_bytes() * options_.slots;
  arena_ = memory_.allocate(context_, bytes);
  if (!arena_ || !memory_.zero(arena_, bytes, stream)) return false;
  slots_.resize(options_.slots);
  for (uint32_t i = 0; i < options_.slots; ++i) {
    Slot& slot = slots_[i];
    slot.device = static_cast<char*>(arena_) + i * slot_bytes();
    SlotHeader header = fresh_header(slot.epoch, options_.capacity, index_words_);
    if (!memory_.to_device(slot.device, &header, sizeof header, stream)) return false;
  }
  return memory_.synchronize(stream);
}

SlotPool::Slot* SlotPool::free_slot() {
  for (Slot& slot : slots_) {
    if (slot.state == State::Free) return &slot;
  }
  return nullptr;
}

std::vector<SlotPool::Slot*> SlotPool::take_busy(StreamHandle stream, bool any_stream,
                                                 bool only_oldest) {
  std::vector<Slot*> taken;
  for (Slot& slot : slots_) {
    if (slot.state == State::Busy && (any_stream || slot.stream == stream)) taken.push_back(&slot);
  }
  std::sort(taken.begin(), taken.end(), [](Slot* a, Slot* b) { return a->order < b->order; });
  if (only_oldest && taken.size() > 1) taken.resize(1);
  for (Slot* slot : taken) slot->state = State::Retiring;
  return taken;
}

void* SlotPool::begin_launch(const LaunchFacts& launch, StreamHandle stream) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!arena_ && !failed_ && !allocate(stream)) failed_ = true;
  Slot* slot = failed_ ? nullptr : free_slot();
  // Every slot in flight: the oldest launch is read back (waiting for it),
  // unless every slot is already being read back by other threads.
  while (!failed_ && !slot) {
    std::vector<Slot*> oldest = take_busy(nullptr, true, true);
    if (oldest.empty()) break;
    lock.unlock();
    retire(*oldest.front());
    lock.lock();
    slot = free_slot();
  }
  if (!slot) {
    lock.unlock();
    LaunchFacts lost = launch;
    lost.incomplete = ExactGap::NotReadBack;
    sink_(lost, DecodedLaunch{});
    return nullptr;
  }
  slot->state = State::Busy;
  slot->order = next_order_++;
  slot->launch = launch;
  slot->stream = stream;
  return slot->device;
}

void SlotPool::retire_stream(StreamHandle stream) {
  std::vector<Slot*> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken = take_busy(stream, false, false);
  }
  for (Slot* slot : taken) retire(*slot);
}

void SlotPool::retire_all() {
  std::vector<Slot*> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken = take_busy(nullptr, true, false);
  }
  for (Slot* slot : taken) retire(*slot);
}

void SlotPool::release() {
  retire_all();
  std::lock_guard<std::mutex> lock(mutex_);
  if (arena_) memory_.release(context_, arena_);
  arena_ = nullptr;
  failed_ = true;  // no launch of a released pool's context can come
  slots_.clear();
}

void SlotPool::retire(Slot& slot) {
  LaunchFacts launch = slot.launch;
  uint32_t first = std::min(options_.capacity, kEntriesWithHeader);
  std::vector<uint64_t> buffer((entries_offset() + uint64_t{first} * sizeof(PageEntry)) / 8);
  bool read = memory_.to_host(buffer.data(), slot.device, buffer.size() * 8, slot.stream);
  SlotHeader header{};
  std::memcpy(&header, buffer.data(), sizeof header);
  uint32_t count = read ? std::min(header.count, options_.capacity) : 0;
  std::vector<PageEntry> entries(count);
  std::memcpy(entries.data(), buffer.data() + entries_offset() / 8,
              std::min(count, first) * sizeof(PageEntry));
  if (read && count > first) {
    uint64_t offset = entries_offset() + uint64_t{first} * sizeof(PageEntry);
    read = memory_.to_host(entries.data() + first, slot.device + offset,
                           uint64_t{count - first} * sizeof(PageEntry), slot.stream);
  }
  // The next use gets the next epoch: this use's index words then read as free.
  uint32_t epoch = slot.epoch % kMaxEpoch + 1;
  SlotHeader fresh = fresh_header(epoch, options_.capacity, index_words_);
  bool reset = read &&
               (epoch != 1 || memory_.zero(slot.device + index_offset(options_.capacity),
                                           uint64_t{index_words_} * sizeof(uint64_t),
                                           slot.stream)) &&
               memory_.to_device(slot.device, &fresh, sizeof fresh, slot.stream) &&
               memory_.synchronize(slot.stream);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slot.epoch = epoch;
    slot.state = reset ? State::Free : State::Broken;
  }
  if (!read) {
    launch.incomplete = ExactGap::NotReadBack;
    sink_(launch, DecodedLaunch{});
    return;
  }
  sink_(launch, decode_slot(header, entries.data(), entries.size()));
}

}  // namespace apptracer::exact
