// Printing tables for people (aligned columns) and programs (CSV, JSON).
// Shared by `stats` and `query` so both speak the same formats.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "table.h"

namespace apptracer {

enum class OutputFormat { Table, Csv, Json };

// "table", "csv" or "json"; throws std::invalid_argument for anything else.
OutputFormat parse_output_format(const std::string& name);

// Writes the tables in `format`. With several tables, the text and CSV forms
// put each under a heading line; JSON is an object keyed by table name. A
// single unnamed table (a query result) is a bare JSON array of row objects.
void write_tables(std::ostream& out, const std::vector<Table>& tables, OutputFormat format);

}  // namespace apptracer
