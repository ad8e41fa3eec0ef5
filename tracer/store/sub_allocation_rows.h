// Framework allocators' events (tracer/frameworks/) as rows of
// sub_allocations: an allocation event makes a row, with its parent CUDA
// allocation resolved by address and time; the frees that follow fill it in.
// Events are handled in time order, whatever thread's buffer they came in:
// a free on PyTorch's autograd thread drained before the main thread's
// allocation it follows would otherwise close an older block at that
// address. The writer says, each pass, before what time every buffer was
// drained; later events wait for the next pass.
//
// A block's row waits in memory until the end of the writer's pass: most
// blocks (a step's temporaries) are freed within it, and are then stored
// once, complete, in a batch, rather than inserted and updated twice.
//
// Each allocator's first event is checked against the CUDA allocations the
// tracer saw (a segment must be one of them exactly, a block must lie in
// one): events that do not match mean the allocator is not laid out as the
// tracker assumes, so it is refused, its rows are no longer written, and
// meta says so.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apptracer/row_inserter.h"
#include "store/address_resolver.h"

namespace apptracer {

class SubAllocationRows {
 public:
  using SetMeta = std::function<void(const std::string& key, const std::string& value)>;
  SubAllocationRows(Database& db, const AddressResolver& resolver, SetMeta set_meta);

  void write(const Record& r);
  // Handles, in time order, the events from before drained_before (every
  // thread's records up to then have been written), and stores the rows
  // waiting in memory (once per pass, before its commit).
  void end_pass(uint64_t drained_before);

  // Handles every event left; frees whose block never appeared are counted
  // in meta.
  void finish();

 private:
  enum class Check { Pending, Passed, Refused };
  // A row whose block is not back in the pool yet.
  struct Open {
    int64_t row_id;
    uint64_t alloc_ns;
    bool free_requested;
  };
  // A free that reached the writer before its block's row (another
  // thread's buffer, drained later).
  struct PendingFree {
    uint64_t ns;
    uint32_t tid;
    bool completed;  // Free, else FreeRequested
  };
  using Key = std::pair<SubAllocator, uint64_t>;  // allocator, address

  void handle(const Record& r);
  bool passes_check(const SubAllocationRecord& e);
  void add_block(const Record& r);
  void free_block(const Record& r, bool completed);
  void apply_free(Open& open, uint64_t ns, uint32_t tid, bool completed);

  const AddressResolver& resolver_;
  SetMeta set_meta_;
  BatchInserter<SubAllocationRow> rows_;
  Statement set_free_requested_, set_free_;
  int64_t next_id_ = 1;
  // Events not handled yet: from after the last pass's drain start.
  std::vector<Record> waiting_;
  // Reused by end_pass: the waiting events' order, and those left for later.
  std::vector<std::pair<uint64_t, size_t>> order_;
  std::vector<Record> later_;
  // Rows of this pass not stored yet, by id.
  std::unordered_map<int64_t, SubAllocationRow> held_;
  std::map<SubAllocator, Check> checks_;
  std::map<Key, std::vector<Open>> open_;
  std::map<Key, std::vector<PendingFree>> pending_frees_;
};

}  // namespace apptracer
