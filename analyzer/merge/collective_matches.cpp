#include "analyzer/merge/collective_matches.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"
#include "apptracer/row_inserter.h"

namespace apptracer {

namespace {

struct Member {
  int64_t row_id;
  int64_t rank;
  CollectiveKind kind;
};

// (library, comm_id, sender, receiver, tag, seq); collectives: sender =
// receiver = -1 and tag 0.
using OperationKey = std::tuple<CommLibrary, int64_t, int64_t, int64_t, int64_t, int64_t>;

bool is_one_operation(const std::vector<Member>& members) {
  if (members.size() < 2) return false;
  if (is_point_to_point(members.front().kind)) {
    return members.size() == 2 && members[0].kind != members[1].kind;
  }
  std::set<int64_t> ranks;
  for (const Member& m : members) {
    if (m.kind != members.front().kind || !ranks.insert(m.rank).second) return false;
  }
  return true;
}

}  // namespace

int64_t match_collectives(Database& merged) {
  std::map<OperationKey, std::vector<Member>> operations;
  trace::Trace trace(merged);
  for (const trace::Packed<CollectiveRow>& call : trace.rows<CollectiveRow>()) {
    const trace::Packed<CommunicatorRow>* communicator =
        trace.find<CommunicatorRow>(call.communicator_id);
    if (!call.seq || !communicator) continue;
    int64_t rank = communicator->rank;
    int64_t sender = -1, receiver = -1;
    if (is_point_to_point(call.kind)) {
      if (!call.peer) continue;
      sender = call.kind == CollectiveKind::Send ? rank : *call.peer;
      receiver = call.kind == CollectiveKind::Send ? *call.peer : rank;
    }
    operations[{communicator->library, communicator->comm_id, sender, receiver,
                call.tag.value_or(0), *call.seq}]
        .push_back({call.id, rank, call.kind});
  }
  RowInserter<CollectiveMatchRow> insert(merged);
  int64_t match_id = 0;
  for (const auto& [key, members] : operations) {
    if (!is_one_operation(members)) continue;
    ++match_id;
    for (const Member& m : members) {
      CollectiveMatchRow row;
      row.collective_id = m.row_id;
      row.match_id = match_id;
      insert.insert(row);
    }
  }
  return match_id;
}

}  // namespace apptracer
