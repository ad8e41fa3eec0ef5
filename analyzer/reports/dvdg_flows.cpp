#include "dvdg_flows.h"

#include <optional>
#include <string>

namespace apptracer {

namespace {

std::optional<GpuOp> gpu_op(const std::string& kind) {
  if (kind == "kernel") return GpuOp::Kernel;
  if (kind == "copy") return GpuOp::Copy;
  if (kind == "memset") return GpuOp::Memset;
  return std::nullopt;
}

}  // namespace

std::vector<DvdgFlow> read_dvdg_flows(Database& db) {
  std::vector<DvdgFlow> flows;
  if (!db.has_table("dvdg_ops") || !db.has_table("dvdg_values") || !db.has_table("dvdg_edges")) {
    return flows;
  }
  // Carry edges (the unwritten rest of a partially written buffer) move no
  // data through the operation, so only data edges become arrows.
  Statement rows = db.prepare(
      "SELECT DISTINCT p.kind, p.source_id, c.kind, c.source_id FROM dvdg_edges e "
      "JOIN dvdg_values v ON v.id = e.src_value_id JOIN dvdg_ops p ON p.id = v.producer_op_id "
      "JOIN dvdg_ops c ON c.id = e.op_id WHERE e.kind = 'data' "
      "ORDER BY p.start_ns, p.id, c.start_ns, c.id");
  while (rows.step()) {
    std::optional<GpuOp> from = gpu_op(rows.text(0));
    std::optional<GpuOp> to = gpu_op(rows.text(2));
    if (from && to) flows.push_back({*from, rows.int64(1), *to, rows.int64(3)});
  }
  return flows;
}

}  // namespace apptracer
