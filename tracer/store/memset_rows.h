// memsets rows: a memset's call, its target resolved to the allocation it
// lies in, joined to its GPU activity; a memset a graph launch ran gets its
// node's target and value, resolved at the launch.
#pragma once

#include <memory>

#include "apptracer/records.h"
#include "store/activity_join.h"
#include "store/address_resolver.h"
#include "store/graph_nodes.h"
#include "store/joined_rows.h"

namespace apptracer {

struct MemsetTraits;

class MemsetRows {
 public:
  MemsetRows(Database& db, AddressResolver& resolver, const GraphNodes& graph_nodes,
             ActivityWait wait);
  ~MemsetRows();

  void write_call(const Record& r);
  void write_activity(const Record& r);

  void end_pass(uint64_t pass_ns);
  void flush() { inserters_.batch.flush(); }
  bool waiting() const;
  // Rows stored again when what they waited for came late (ActivityJoin).
  uint64_t stored_again() const;
  void store_waiting();

 private:
  void fill_from_graph_node(MemsetRow& row);

  AddressResolver& resolver_;
  const GraphNodes& graph_nodes_;
  JoinedRowInserters<MemsetRow> inserters_;
  std::unique_ptr<ActivityJoin<MemsetRow, MemsetTraits>> join_;
};

}  // namespace apptracer
