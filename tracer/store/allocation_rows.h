// allocations rows: CUDA's allocations and the host blocks that became rows
// (a copy or kernel touched them), with where host memory's pages were; a
// free fills in its allocation's row, or waits for the row when it came first.
//
// A row waits in memory until the end of the writer's pass, and so do frees
// of rows stored before: the pass's other rows are inserted on the store's
// insert thread meanwhile, and a statement run at once would first wait for
// all of them (a host block per ten launches made the writer no faster with
// that thread than without).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"
#include "store/address_resolver.h"

namespace apptracer {

class AllocationRows {
 public:
  AllocationRows(Database& db, AddressResolver& resolver);

  // `numa_node_at_free`: for a block already freed, where its pages were.
  void write_allocation(const Record& r, std::optional<int> numa_node_at_free = std::nullopt);
  void write_promoted_block(const PromotedBlock& block);
  void write_free(const Record& r);
  // Stores the frees of rows stored before, then this pass's rows (once per
  // pass, before its commit).
  void end_pass();

 private:
  struct Free {
    std::optional<int64_t> correlation_id;
    uint64_t ns;
  };

  AddressResolver& resolver_;
  BatchInserter<AllocationRow> allocations_;
  Statement update_free_;
  // This pass's rows, by id (stored in id order).
  std::map<uint64_t, AllocationRow> held_;
  // Rows stored in earlier passes and not freed yet, by id.
  std::unordered_set<uint64_t> stored_open_;
  // Their frees in this pass.
  std::vector<std::pair<uint64_t, Free>> frees_of_stored_;

  // Frees that reached the writer before their allocation's row (another
  // thread's buffer, drained later): applied when the row arrives.
  std::unordered_map<uint64_t, Free> pending_frees_;
};

}  // namespace apptracer
