// Printing tables for people (aligned columns) and programs (CSV, JSON).
// Shared by `stats` and `query` so both speak the same formats.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analyzer/table/table.h"

namespace apptracer {

enum class OutputFormat { Table, Csv, Json };

// "table", "csv" or "json"; throws std::invalid_argument for anything else.
OutputFormat parse_output_format(const std::string& name);

// Writes the tables in `format`. With several tables, the text and CSV forms
// put each under a heading line; JSON is an object keyed by table name. A
// single unnamed table (a query result) is a bare JSON array of row objects.
void write_tables(std::ostream& out, const std::vector<Table>& tables, OutputFormat format);

// The table's first `count` rows as the table format shows them
// (Table::text_forms). Where different cells of a column take the same text
// form (two kernels whose short names elide the only template argument that
// differs), each is numbered, "name [1]", "name [2]", in the order of their
// rows, so that no two rows read alike; `numbered` is set where any was.
std::vector<std::vector<Cell>> rows_in_text_form(const Table& table, size_t count, bool& numbered);

// One table written row by row as the rows come, in bounded memory, the same
// as write_tables would write it: CSV and JSON rows at once; aligned text in
// blocks of rows, each block aligned to the widest values seen so far (a
// table of fewer rows than a block is aligned exactly as write_tables does).
class TableStream : public RowSink {
 public:
  // `name`: the heading line in text and CSV ("" for none); JSON is a bare
  // array of row objects.
  TableStream(std::ostream& out, OutputFormat format, std::string name = "");
  void columns(const std::vector<std::string>& names) override;
  void row(std::vector<Cell> cells) override;
  // Writes what is still held and the table's end.
  void finish();

 private:
  void write_text_block();

  static constexpr size_t kTextBlockRows = 1000;
  std::ostream& out_;
  OutputFormat format_;
  std::string name_;
  std::vector<std::string> columns_;
  size_t rows_ = 0;
  // Aligned text: the block of rows not yet written, and the widths so far.
  std::vector<std::vector<std::string>> block_;
  std::vector<size_t> widths_;
  std::vector<bool> numeric_;
  bool header_written_ = false;
};

}  // namespace apptracer
