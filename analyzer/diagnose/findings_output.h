// Findings for people (text), programs (JSON) and spreadsheets (CSV); the
// analyses' tables as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "finding.h"
#include "table.h"

namespace apptracer::diagnose {

nlohmann::json findings_json(const std::vector<Finding>& findings);
// A table as {"name", "columns", "rows": [[cell, ...], ...]} (NULL cells null).
nlohmann::json table_json(const Table& table);
// One row per finding; rows as "table:id" separated by spaces.
Table findings_table(const std::vector<Finding>& findings);
void write_findings_text(std::ostream& out, const std::vector<Finding>& findings);

}  // namespace apptracer::diagnose
