// What nsys and the PyTorch profiler cannot say: for every allocation that
// GPU work touched, which work touched it. Kernels count launches with an
// argument pointing into the allocation (resolved by the tracer); copies count
// in both directions with their bytes; memsets count fills. Allocations no
// GPU work used are left out.
#include "apptracer/enums.h"
#include "stats_reports.h"
#include "sums.h"

namespace apptracer {

Table buffers_report(Database& db) {
  Statement rows = db.prepare(R"sql(
    WITH k AS (SELECT alloc_id, count(DISTINCT kernel_id) AS n FROM kernel_args
               WHERE alloc_id IS NOT NULL GROUP BY alloc_id),
         copied_in AS (SELECT dst_alloc_id AS alloc_id, count(*) AS n, )sql" + saturating_sum_sql("bytes") + R"sql( AS bytes
                       FROM memcpys WHERE dst_alloc_id IS NOT NULL GROUP BY dst_alloc_id),
         copied_out AS (SELECT src_alloc_id AS alloc_id, count(*) AS n, )sql" + saturating_sum_sql("bytes") + R"sql( AS bytes
                        FROM memcpys WHERE src_alloc_id IS NOT NULL GROUP BY src_alloc_id),
         filled AS (SELECT alloc_id, count(*) AS n FROM memsets
                    WHERE alloc_id IS NOT NULL GROUP BY alloc_id)
    SELECT a.id, a.device, a.kind, a.bytes, COALESCE(k.n, 0), COALESCE(copied_in.n, 0),
           COALESCE(copied_in.bytes, 0), COALESCE(copied_out.n, 0), COALESCE(copied_out.bytes, 0),
           COALESCE(filled.n, 0)
    FROM allocations a
    LEFT JOIN k ON k.alloc_id = a.id
    LEFT JOIN copied_in ON copied_in.alloc_id = a.id
    LEFT JOIN copied_out ON copied_out.alloc_id = a.id
    LEFT JOIN filled ON filled.alloc_id = a.id
    WHERE k.n IS NOT NULL OR copied_in.n IS NOT NULL OR copied_out.n IS NOT NULL
       OR filled.n IS NOT NULL
    ORDER BY a.id)sql");
  Table table{"buffers",
              {"allocation", "place", "kind", "bytes", "kernels", "copies_in", "bytes_in",
               "copies_out", "bytes_out", "memsets"},
              {}};
  while (rows.step()) {
    std::vector<Cell> row{rows.int64(0),
                          rows.is_null(1) ? std::string("host")
                                          : "device " + std::to_string(rows.int64(1)),
                          std::string(to_string(static_cast<AllocKind>(rows.int64(2))))};
    for (int column = 3; column <= 9; ++column) row.emplace_back(rows.int64(column));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
