// allocations rows: CUDA's allocations and the host blocks that became rows
// (a copy or kernel touched them), with where host memory's pages were; a
// free fills in its allocation's row, or waits for the row when it came first.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

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

 private:
  Database& db_;
  AddressResolver& resolver_;
  RowInserter<AllocationRow> allocations_;
  Statement update_free_;

  // Frees that reached the writer before their allocation's row (another
  // thread's buffer, drained later): applied when the row arrives.
  struct PendingFree {
    std::optional<int64_t> correlation_id;
    uint64_t ns;
  };
  std::unordered_map<uint64_t, PendingFree> pending_frees_;
};

}  // namespace apptracer
