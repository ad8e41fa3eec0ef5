#include "analyzer/record/exact_coverage_store.h"

#include "analyzer/trace/exact_coverage.h"
#include "analyzer/trace/trace.h"
#include "apptracer/row_inserter.h"
#include "apptracer/schema.h"

namespace apptracer {

StoredCoverage store_exact_coverage(Database& db) {
  StoredCoverage stored;
  trace::Trace trace(db);
  trace::ExactAccesses exact = trace::ExactAccesses::read(trace);
  if (exact.empty()) return stored;
  const trace::KernelArguments& arguments = trace.kernel_arguments();
  const TableInfo& table = table_of<ExactCoverageRow>();
  with_transaction(db, [&] {
    if (!db.has_table(table.name)) db.exec(analysis_table_sql(table, db.has_table("schema_tables")));
    db.exec("DELETE FROM " + table.name);
    RowInserter<ExactCoverageRow> insert(db);
    for (const auto& [kernel_id, kernel] : exact.kernels()) {
      const trace::Packed<KernelRow>* launch = trace.find<KernelRow>(kernel_id);
      if (!launch) continue;
      trace::LaunchCoverage coverage = trace::coverage_of(kernel, arguments.of(*launch));
      ExactCoverageRow row;
      row.launch_id = kernel.launch_id;
      row.kernel_id = kernel_id;
      row.coverage = coverage.launch;
      insert.insert(row);
      for (const trace::PointerCoverage& pointer : coverage.pointers) {
        row.alloc_id = pointer.alloc_id;
        row.coverage = pointer.coverage;
        insert.insert(row);
      }
      ++stored.launches;
      if (coverage.launch == ExactCoverage::Exact) ++stored.launches_exact;
    }
  });
  return stored;
}

}  // namespace apptracer
