// Findings for people (text), programs (JSON) and spreadsheets (CSV); the
// analyses' tables as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <ostream>
#include <vector>

#include "analyzer/diagnose/finding.h"
#include "analyzer/table/table.h"

namespace apptracer::diagnose {

// By default the first kShownFindings findings are shown (text, JSON, CSV)
// and the rest counted in one line; `shown` = SIZE_MAX shows every one.
inline constexpr size_t kShownFindings = 10;
// How many of the ranked findings are shown by default: the first
// kShownFindings, never a minor one (ranked last, they come with --all).
size_t shown_by_default(const std::vector<Finding>& findings);

// The first `shown` findings as a JSON array.
nlohmann::json findings_json(const std::vector<Finding>& findings, size_t shown = SIZE_MAX);
// A table as {"name", "columns", "rows": [[cell, ...], ...]} (NULL cells null).
nlohmann::json table_json(const Table& table);
// One row per finding shown; rows as "table:id" separated by spaces; steps
// and the saving per step where the finding is about steps.
Table findings_table(const std::vector<Finding>& findings, size_t shown = SIZE_MAX);
// How many findings were shown and left out, as a table (for CSV).
Table left_out_table(const std::vector<Finding>& findings, size_t shown);
// A details table as people read it: its first `count` rows, every name
// shortened, kernels whose short names are alike numbered (table_format.h).
Table details_in_text_form(const Table& details, size_t count = SIZE_MAX);
// Each finding in at most 8 lines (what, where, cost and saving, fix, and
// its details' first rows), names shortened; `rows`: also its trace rows.
void write_findings_text(std::ostream& out, const std::vector<Finding>& findings,
                         size_t shown = SIZE_MAX, bool rows = false);

}  // namespace apptracer::diagnose
