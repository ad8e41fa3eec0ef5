#include "collective_operations.h"

#include <algorithm>
#include <map>
#include <string>

namespace apptracer::dvdg {

namespace {

std::optional<BufferRange> buffer(const Statement& rows, int first) {
  if (rows.is_null(first) || rows.is_null(first + 1)) return std::nullopt;
  return BufferRange{rows.int64(first), rows.int64(first + 1), rows.optional_int64(first + 2),
                     rows.optional_int64(first + 3)};
}

}  // namespace

std::vector<std::vector<CollectiveCall>> read_collective_operations(Database& db) {
  std::vector<std::vector<CollectiveCall>> operations;
  if (!db.has_table("collectives") || !db.has_table("communicators")) return operations;
  bool merged = db.has_column("collectives", "process_id");
  bool matched = db.has_table("collective_matches");
  // The kernel that ran a call: its launch's row (of the same process: correlation ids are
  // unique in a merged trace, but say so anyway).
  std::string kernel =
      "(SELECT min(k.id) FROM kernels k WHERE k.call_correlation_id = c.launch_correlation_id" +
      std::string(merged ? " AND k.process_id IS c.process_id)" : ")");
  Statement rows = db.prepare(
      "SELECT c.id, c.kind, m.nranks, c.send_address, c.send_bytes, c.send_alloc_id, "
      "c.send_offset, c.recv_address, c.recv_bytes, c.recv_alloc_id, c.recv_offset, c.device, "
      "c.stream, c.api_start_ns, c.gpu_start_ns, c.gpu_end_ns, " +
      (db.has_table("kernels") ? kernel : std::string("NULL")) + ", " +
      (merged ? "coalesce(c.process_id, 0)" : "0") + ", " + (matched ? "x.match_id" : "NULL") +
      " FROM collectives c JOIN communicators m ON m.id = c.communicator_id" +
      (matched ? " LEFT JOIN collective_matches x ON x.collective_id = c.id" : "") +
      " ORDER BY c.id");
  std::map<int64_t, size_t> by_match;  // match_id -> position in operations
  while (rows.step()) {
    CollectiveCall call;
    call.id = rows.int64(0);
    call.kind = static_cast<CollectiveKind>(rows.int64(1));
    call.nranks = rows.int64(2);
    call.send = buffer(rows, 3);
    call.recv = buffer(rows, 7);
    call.device = rows.optional_int64(11);
    call.stream = rows.optional_int64(12);
    call.api_start_ns = rows.int64(13);
    call.gpu_start_ns = rows.optional_int64(14);
    call.gpu_end_ns = rows.optional_int64(15);
    call.kernel_id = rows.optional_int64(16);
    call.process = static_cast<uint16_t>(rows.int64(17));
    std::optional<int64_t> match = rows.optional_int64(18);
    if (!match) {
      operations.push_back({call});
      continue;
    }
    auto [found, added] = by_match.emplace(*match, operations.size());
    if (added) operations.emplace_back();
    operations[found->second].push_back(call);
  }
  // A message reads on the sender's side first.
  for (std::vector<CollectiveCall>& calls : operations) {
    std::stable_sort(calls.begin(), calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
      return a.kind == CollectiveKind::Send && b.kind == CollectiveKind::Recv;
    });
  }
  return operations;
}

}  // namespace apptracer::dvdg
