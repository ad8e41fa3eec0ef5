// What ended at which start address, for lookups by time: the allocation
// registry's freed allocations and the host blocks' freed blocks.
//
// An end appends to a log in constant time, with no malloc (on the program's
// thread: inserting each into the index, a deep tree while the writer lags,
// was most of what a free cost the program). A lookup first moves the log
// into the index by start address. Entries are forgotten oldest first.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "buffer/chunked_log.h"
#include "buffer/node_pool.h"

namespace apptracer {

// `Value` has a `free_ns`. Not thread-safe: each history is used under one lock.
template <typename Value>
class FreedHistory {
 public:
  using Index = std::multimap<uint64_t, Value, std::less<uint64_t>,
                              PoolAllocator<std::pair<const uint64_t, Value>>>;

  // False when no memory could be mapped for it (nothing kept).
  bool add(uint64_t address, const Value& value) { return recent_.push(Entry{address, value}); }

  // The index, everything added so far in it. An entry that finds no room in
  // the order of frees could never be forgotten: it goes to `dropped`, not
  // into the index.
  template <typename Dropped>
  Index& indexed(Dropped&& dropped) {
    for (; !recent_.empty(); recent_.pop_front()) {
      typename Index::iterator it = index_.emplace(recent_.front().address, recent_.front().value);
      if (!order_.push(it)) {
        dropped(it->second);
        index_.erase(it);
      }
    }
    return index_;
  }
  Index& indexed() {
    return indexed([](const Value&) {});
  }

  // Moves what `from` was given since it last handed it over to the end of
  // this one's log, in order (indexed at this one's next lookup); one that
  // finds no room goes to `dropped`. A constant-time append each, so a
  // history the program adds to under its lock hands it over in a short hold.
  template <typename Dropped>
  void take_recent(FreedHistory& from, Dropped&& dropped) {
    for (; !from.recent_.empty(); from.recent_.pop_front()) {
      if (!recent_.push(from.recent_.front())) dropped(from.recent_.front().value);
    }
  }

  // Forgets what was freed before `ns`, each passed to `forgotten`. Frees
  // come in about time order: stopping at the first younger one keeps this
  // short and only delays forgetting a few.
  template <typename Forgotten>
  void forget_before(uint64_t ns, Forgotten&& forgotten) {
    for (; !order_.empty() && order_.front()->second.free_ns < ns; order_.pop_front()) {
      forgotten(order_.front()->second);
      index_.erase(order_.front());
    }
    for (; !recent_.empty() && recent_.front().value.free_ns < ns; recent_.pop_front()) {
      forgotten(recent_.front().value);
    }
  }

  void clear() {
    recent_.clear();
    order_.clear();
    index_.clear();
  }

 private:
  struct Entry {
    uint64_t address;
    Value value;
  };
  ChunkedLog<Entry> recent_;  // added since the last lookup, oldest first
  NodePool index_nodes_;
  Index index_{typename Index::allocator_type(&index_nodes_)};  // by start address
  ChunkedLog<typename Index::iterator> order_;                   // indexed, oldest first
};

}  // namespace apptracer
