#include "collective_matches.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "apptracer/enums.h"

namespace apptracer {

namespace {

struct Member {
  int64_t row_id;
  int64_t rank;
  CollectiveKind kind;
};

// (library, comm_id, sender, receiver, tag, seq); collectives: sender =
// receiver = -1 and tag 0.
using OperationKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

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
  Statement rows = merged.prepare(
      "SELECT c.id, m.library, m.comm_id, m.rank, c.kind, c.peer, coalesce(c.tag, 0), c.seq"
      " FROM collectives c JOIN communicators m ON m.id = c.communicator_id"
      " WHERE c.seq IS NOT NULL ORDER BY c.id");
  while (rows.step()) {
    auto kind = static_cast<CollectiveKind>(rows.int64(4));
    int64_t rank = rows.int64(3);
    int64_t sender = -1, receiver = -1;
    if (is_point_to_point(kind)) {
      if (rows.is_null(5)) continue;
      sender = kind == CollectiveKind::Send ? rank : rows.int64(5);
      receiver = kind == CollectiveKind::Send ? rows.int64(5) : rank;
    }
    operations[{rows.int64(1), rows.int64(2), sender, receiver, rows.int64(6), rows.int64(7)}]
        .push_back({rows.int64(0), rank, kind});
  }
  Statement insert = merged.prepare("INSERT INTO collective_matches VALUES (?, ?)");
  int64_t match_id = 0;
  for (const auto& [key, members] : operations) {
    if (!is_one_operation(members)) continue;
    ++match_id;
    for (const Member& m : members) insert.bind(1, m.row_id).bind(2, match_id).run();
  }
  return match_id;
}

}  // namespace apptracer
