#include "dvdg_flows.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

namespace apptracer {

namespace {

std::optional<GpuOp> gpu_op(const std::string& kind) {
  if (kind == "kernel") return GpuOp::Kernel;
  if (kind == "copy") return GpuOp::Copy;
  if (kind == "memset") return GpuOp::Memset;
  return std::nullopt;
}

// A value a unified-memory migration produced holds what the value it moved
// held: flows reach back through migrations to the work that wrote it.
class MigratedOrigins {
 public:
  explicit MigratedOrigins(Database& db)
      : producer_(db.prepare("SELECT p.kind, p.source_id FROM dvdg_values v "
                             "JOIN dvdg_ops p ON p.id = v.producer_op_id WHERE v.id = ?")) {
    Statement moves =
        db.prepare("SELECT dst_value_id, src_value_id FROM dvdg_edges WHERE kind = 'migration'");
    while (moves.step()) moved_from_[moves.int64(0)] = moves.int64(1);
  }

  // The op that wrote what `value` holds: (kind, source_id), if any.
  std::optional<std::pair<std::string, int64_t>> origin(int64_t value) {
    for (auto from = moved_from_.find(value); from != moved_from_.end();
         from = moved_from_.find(value)) {
      value = from->second;
    }
    producer_.bind(1, value);
    std::optional<std::pair<std::string, int64_t>> found;
    if (producer_.step()) found.emplace(producer_.text(0), producer_.int64(1));
    producer_.reset();
    return found;
  }

 private:
  Statement producer_;
  std::unordered_map<int64_t, int64_t> moved_from_;  // migrated value -> the value it moved
};

}  // namespace

std::vector<DvdgFlow> read_dvdg_flows(Database& db) {
  std::vector<DvdgFlow> flows;
  // dvdg_edges is a view over dvdg_listed_edges (a table in graphs stored
  // before kernels' data edges were held as their reads and writes).
  if (!db.has_table("dvdg_ops") || !db.has_table("dvdg_values") ||
      !(db.has_table("dvdg_edges") || db.has_table("dvdg_listed_edges"))) {
    return flows;
  }
  // Carry edges (the unwritten rest of a partially written buffer) move no
  // data through the operation, so only data edges become arrows.
  Statement rows = db.prepare(
      "SELECT DISTINCT p.kind, p.source_id, c.kind, c.source_id, e.src_value_id FROM dvdg_edges e "
      "JOIN dvdg_values v ON v.id = e.src_value_id JOIN dvdg_ops p ON p.id = v.producer_op_id "
      "JOIN dvdg_ops c ON c.id = e.op_id WHERE e.kind = 'data' "
      "ORDER BY p.start_ns, p.id, c.start_ns, c.id");
  std::optional<MigratedOrigins> migrations;
  while (rows.step()) {
    std::optional<GpuOp> to = gpu_op(rows.text(2));
    if (!to) continue;
    std::string kind = rows.text(0);
    int64_t source = rows.int64(1);
    if (kind == "migration") {
      if (!migrations) migrations.emplace(db);
      auto origin = migrations->origin(rows.int64(4));
      if (!origin) continue;
      std::tie(kind, source) = *origin;
    }
    std::optional<GpuOp> from = gpu_op(kind);
    if (from) flows.push_back({*from, source, *to, rows.int64(3)});
  }
  // Each pair once (sorted, not kept in a set beside the list: big graphs
  // have millions of them).
  auto key = [](const DvdgFlow& flow) {
    return std::tie(flow.from_kind, flow.from_id, flow.to_kind, flow.to_id);
  };
  std::sort(flows.begin(), flows.end(),
            [&](const DvdgFlow& a, const DvdgFlow& b) { return key(a) < key(b); });
  flows.erase(std::unique(flows.begin(), flows.end(),
                          [&](const DvdgFlow& a, const DvdgFlow& b) { return key(a) == key(b); }),
              flows.end());
  return flows;
}

}  // namespace apptracer
