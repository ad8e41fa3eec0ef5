// memcpys rows: a copy's call, both endpoints resolved to the allocation they
// lie in (host memory the program got elsewhere becomes a row when a copy
// touches it), joined to its GPU activity; a copy a graph launch ran gets its
// node's endpoints, resolved at the launch.
#pragma once

#include <memory>

#include "apptracer/records.h"
#include "store/activity_join.h"
#include "store/address_resolver.h"
#include "store/graph_nodes.h"
#include "store/joined_rows.h"

namespace apptracer {

struct MemcpyTraits;

class MemcpyRows {
 public:
  MemcpyRows(Database& db, AddressResolver& resolver, const GraphNodes& graph_nodes,
             ActivityWait wait);
  ~MemcpyRows();

  void write_call(const Record& r);
  void write_activity(const Record& r);

  void end_pass(uint64_t pass_ns);
  void flush() { inserters_.batch.flush(); }
  bool waiting() const;
  // Rows stored again when what they waited for came late (ActivityJoin).
  uint64_t stored_again() const;
  void store_waiting();

 private:
  void fill_from_graph_node(MemcpyRow& row);

  AddressResolver& resolver_;
  const GraphNodes& graph_nodes_;
  JoinedRowInserters<MemcpyRow> inserters_;
  std::unique_ptr<ActivityJoin<MemcpyRow, MemcpyTraits>> join_;
};

}  // namespace apptracer
