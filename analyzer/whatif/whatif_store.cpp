#include "analyzer/whatif/whatif_store.h"

#include <ctime>

#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"
#include "apptracer/schema.h"
#include "apptracer/tables.h"

namespace apptracer::whatif {

namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

OptText optional_text(const std::string& text) { return text.empty() ? OptText() : OptText(text); }

// The whatif tables, created the first time a what-if is stored. Tables an
// older apptracer stored get the columns declared since (each may be NULL).
void create_tables(Database& db) {
  bool describe = db.has_table("schema_tables");
  for (const TableInfo* table : tables_with_role(TableRole::Analysis)) {
    if (table->name.rfind("whatif_", 0) != 0) continue;
    if (!db.has_table(table->name)) {
      db.exec(analysis_table_sql(*table, describe));
      continue;
    }
    for (const ColumnInfo& column : table->columns) {
      if (!db.has_column(table->name, column.name))
        db.exec("ALTER TABLE " + table->name + " ADD COLUMN \"" + column.name + "\" " + column.sql_type);
    }
  }
}

// Deleting a run's rows is SQL: the model only reads.
void remove_run_like(Database& db, const WhatifRunRow& run) {
  RowReader<WhatifRunRow> find(db, "WHERE system = ? AND coalesce(system2, '') = ? AND changes = ?");
  find.statement().bind(1, run.system).bind(2, run.system2.value_or("")).bind(3, run.changes);
  std::vector<int64_t> ids;
  WhatifRunRow same;
  while (find.next(same)) ids.push_back(same.id.value.value_or(0));
  for (int64_t id : ids) {
    for (const char* table : {"whatif_phases", "whatif_transfers", "whatif_critical_path"}) {
      Statement remove = db.prepare(std::string("DELETE FROM ") + table + " WHERE run_id = ?");
      remove.bind(1, id).run();
    }
    Statement remove = db.prepare("DELETE FROM whatif_runs WHERE id = ?");
    remove.bind(1, id).run();
  }
}

}  // namespace

int64_t store_whatif(Database& db, const WhatifResult& result) {
  int64_t run_id = 0;
  with_transaction(db, [&] {
    create_tables(db);
    WhatifRunRow run;
    run.system = result.system;
    run.system2 = optional_text(result.system2);
    run.changes = joined(result.changes, " ");
    run.recorded_ns = result.recorded_ns;
    run.baseline_ns = result.baseline_ns;
    run.predicted_ns = result.predicted_ns;
    run.notes = joined(result.notes, "\n");
    run.stored_at = utc_now();
    remove_run_like(db, run);
    run_id = RowInserter<WhatifRunRow>(db).insert(run);

    RowInserter<WhatifPhaseRow> phases(db);
    for (size_t i = 0; i < result.phases.size(); ++i) {
      const Phase& p = result.phases[i];
      WhatifPhaseRow row;
      row.run_id = run_id;
      row.position = static_cast<int64_t>(i);
      row.name = p.name;
      row.kind = p.kind;
      row.detail = optional_text(p.detail);
      row.count = p.count;
      row.recorded_ns = p.ns[0];
      row.baseline_ns = p.ns[1];
      row.predicted_ns = p.ns[2];
      phases.insert(row);
    }
    RowInserter<WhatifTransferRow> transfers(db);
    for (const TransferSummary& t : result.transfers) {
      WhatifTransferRow row;
      row.run_id = run_id;
      row.path = t.path.empty() ? t.kind : t.path;
      if (t.kernel_traffic) {
        row.kernel_traffic = t.kind;
        row.bytes_bound = t.bytes_bound ? 1 : 0;
      }
      row.baseline_by = optional_text(t.baseline_by);
      row.whatif_path = optional_text(t.whatif_path);
      row.whatif_by = optional_text(t.whatif_by);
      row.copies = t.copies;
      row.bytes = t.bytes;
      row.recorded_ns = t.recorded_ns;
      row.baseline_ns = t.baseline_ns;
      row.predicted_ns = t.predicted_ns;
      transfers.insert(row);
    }
    RowInserter<WhatifCriticalStepRow> steps(db);
    for (size_t i = 0; i < result.critical_path.steps.size(); ++i) {
      const PathStep& s = result.critical_path.steps[i];
      WhatifCriticalStepRow row;
      row.run_id = run_id;
      row.position = static_cast<int64_t>(i);
      row.kind = s.kind;
      row.source_table = s.source_table;
      row.source_id = s.source_id;
      row.name = optional_text(s.name);
      row.device = s.device;
      row.stream = s.stream;
      row.start_ns = s.start_ns;
      row.end_ns = s.end_ns;
      row.wait_ns = s.wait_ns;
      row.own_ns = s.own_ns;
      row.bound_by = to_string(s.bound_by);
      steps.insert(row);
    }
  });
  return run_id;
}

}  // namespace apptracer::whatif
