#include "analyzer/diagnose/findings_store.h"

#include "apptracer/row_inserter.h"

namespace apptracer::diagnose {

void store_findings(Database& db, const std::vector<Finding>& findings) {
  const TableInfo& diagnoses = table_of<DiagnosisRow>();
  const TableInfo& evidence = table_of<DiagnosisEvidenceRow>();
  with_transaction(db, [&] {
    db.exec("DROP TABLE IF EXISTS " + evidence.name + "; DROP TABLE IF EXISTS " + diagnoses.name);
    db.exec(create_table_sql(diagnoses) + create_table_sql(evidence) +
            create_indexes_sql(evidence));
    RowInserter<DiagnosisRow> insert_finding(db);
    RowInserter<DiagnosisEvidenceRow> insert_row(db);
    for (const Finding& finding : findings) {
      DiagnosisRow row;
      row.rule = finding.rule;
      row.what = finding.what;
      for (const std::string& name : finding.names)
        row.names += (row.names.empty() ? "" : "; ") + name;
      if (!finding.nvtx.empty()) row.nvtx_range = finding.nvtx;
      if (!finding.call_site.empty()) row.call_site = finding.call_site;
      if (!finding.framework.empty()) row.framework = finding.framework;
      row.cost_ns = finding.cost_ns;
      row.saving_ns = finding.saving_ns;
      // The table has no column for bytes: a memory finding's saving leads its estimate.
      row.estimate = finding.saving_bytes
                         ? "saves " + std::to_string(*finding.saving_bytes) + " bytes at the peak: " + finding.estimate
                         : finding.estimate;
      row.fix = finding.fix;
      int64_t id = insert_finding.insert(row);
      for (const Evidence& e : finding.rows) {
        DiagnosisEvidenceRow evidence_row;
        evidence_row.diagnosis_id = id;
        evidence_row.table_name = e.table;
        evidence_row.row_id = e.row;
        insert_row.insert(evidence_row);
      }
    }
  });
}

}  // namespace apptracer::diagnose
