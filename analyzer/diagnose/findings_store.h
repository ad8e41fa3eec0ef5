// Findings as tables of the trace (diagnoses, diagnosis_rows; declared in
// tables.def), written by `apptracer diagnose --store` so SQL clients and
// `apptracer report` read them beside the trace.
#pragma once

#include <vector>

#include "apptracer/sqlite.h"
#include "analyzer/diagnose/finding.h"

namespace apptracer::diagnose {

// Replaces the diagnoses tables of `db` in one transaction; nothing else changes.
void store_findings(Database& db, const std::vector<Finding>& findings);

}  // namespace apptracer::diagnose
