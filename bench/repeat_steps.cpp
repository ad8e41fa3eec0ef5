// A long run's trace from a short one, for the analyzer benchmarks: copies a
// real trace and repeats its last steps (NVTX ranges named "step") until it
// has as many steps as asked, each repetition later by the steps' length,
// and moves what came after the steps (the program's end) after them. A
// training loop's steady steps are alike (the caching allocator hands out
// the same blocks), so this is what tracing it that much longer records;
// memory the steps leave live is handed out again by the next one.
//
// What each column holds says how a repeated row changes (tables.def
// roles): times move by the repetition's shift, row ids and correlation ids
// past every earlier one, and references to rows that were repeated with
// them follow; rows of no time (argument sets, strings, devices) are shared.
//
//   repeat_steps IN OUT --steps N [--window K] [--range NAME] [--force]
//
// OUT follows the analyzer's output rules (analyzer/output_file.h): written
// complete or not at all, never over IN, replaced only with --force.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/output_file.h"
#include "apptracer/sqlite.h"
#include "apptracer/tables.h"

namespace {

using apptracer::ColumnRole;
using apptracer::Database;
using apptracer::Statement;
using apptracer::TableInfo;

struct Options {
  std::string in, out;
  int64_t steps = 0;   // wanted in all
  int64_t window = 1;  // the last K steps are repeated
  std::string range = "step";
  bool force = false;
};

int64_t single_integer(Database& db, const std::string& sql) {
  Statement query = db.prepare(sql);
  return query.step() ? query.optional_int64(0).value_or(0) : 0;
}

// The table's columns of this role that the trace has: a trace of an older
// tracer lacks columns declared since (its schema version is the same).
std::vector<std::string> columns_with_role(Database& db, const TableInfo& table, ColumnRole role) {
  std::vector<std::string> columns;
  for (const auto& column : table.columns) {
    if (column.meaning.role == role && db.has_column(table.name, column.name))
      columns.push_back(column.name);
  }
  return columns;
}

// "coalesce(a, b)" over the table's times: when a row happened.
std::string row_time(Database& db, const TableInfo& table) {
  std::string times;
  for (const std::string& column : columns_with_role(db, table, ColumnRole::Time))
    times += (times.empty() ? "" : ", ") + column;
  return "coalesce(" + times + ", NULL)";
}

// Tables whose rows happen at a time and have ids of their own: repeated.
std::vector<const TableInfo*> repeated_tables(Database& db) {
  std::vector<const TableInfo*> tables;
  for (const TableInfo* table : apptracer::tables_with_role(apptracer::TableRole::Trace)) {
    if (db.has_table(table->name) && !columns_with_role(db, *table, ColumnRole::Id).empty() &&
        !columns_with_role(db, *table, ColumnRole::Time).empty())
      tables.push_back(table);
  }
  return tables;
}

bool repeated(const std::vector<const TableInfo*>& tables, const std::string& name) {
  for (const TableInfo* table : tables) {
    if (table->name == name) return true;
  }
  return false;
}

class Repeater {
 public:
  Repeater(Database& db, const Options& options) : db_(db), tables_(repeated_tables(db)) {
    Statement ranges = db.prepare(
        "SELECT r.start_ns, r.end_ns FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
        "WHERE s.text = ? AND r.end_ns IS NOT NULL ORDER BY r.start_ns");
    ranges.bind(1, options.range);
    std::vector<std::pair<int64_t, int64_t>> steps;
    while (ranges.step()) steps.emplace_back(ranges.int64(0), ranges.int64(1));
    if (static_cast<int64_t>(steps.size()) < options.window) {
      throw std::runtime_error("the trace has " + std::to_string(steps.size()) + " NVTX ranges named '" +
                               options.range + "', fewer than --window");
    }
    from_ = steps[steps.size() - options.window].first;
    to_ = steps.back().second;
    repetitions_ = (options.steps - static_cast<int64_t>(steps.size()) + options.window - 1) /
                   options.window;
    for (const TableInfo& table : apptracer::all_tables()) {
      if (!db.has_table(table.name)) continue;
      for (const std::string& column : columns_with_role(db, table, ColumnRole::Correlation))
        correlations_ = std::max(correlations_,
                                 single_integer(db, "SELECT max(" + column + ") FROM " + table.name));
    }
  }

  int64_t repetitions() const { return repetitions_; }

  void run() {
    int64_t period = to_ - from_;
    for (const TableInfo* table : tables_) {
      db_.exec("CREATE TEMP TABLE window_" + table->name + " AS SELECT * FROM main." + table->name +
               " WHERE " + in_steps(*table));
    }
    // What happened after the steps (the program's end) moves after the
    // repetitions; the steps' own rows keep what ran on past them.
    for (const TableInfo& table : apptracer::all_tables()) {
      if (table.role != apptracer::TableRole::Trace || !db_.has_table(table.name)) continue;
      for (const std::string& column : columns_with_role(db_, table, ColumnRole::Time)) {
        db_.exec("UPDATE main." + table.name + " SET " + column + " = " + column + " + " +
                 std::to_string(repetitions_ * period) + " WHERE " + column + " >= " +
                 std::to_string(to_) + " AND NOT (" + in_steps(table) + ")");
      }
    }
    for (int64_t r = 1; r <= repetitions_; ++r) {
      for (const TableInfo* table : tables_) insert_repetition(*table, r, r * period);
    }
    for (const TableInfo* table : tables_) hand_out_again(*table, period);
  }

 private:
  std::string in_steps(const TableInfo& table) const {
    return row_time(db_, table) + " BETWEEN " + std::to_string(from_) + " AND " + std::to_string(to_ - 1);
  }

  // Memory the steps leave live (freed after them, as the program ends, or
  // never) is what the next step frees or hands out again (a tensor held
  // from one step into the next). Each step but the last frees it where its
  // next copy is made: else every repetition would keep its own, growing
  // the memory in use with each step as the program never did.
  void hand_out_again(const TableInfo& table, int64_t period) {
    std::string made = row_time(db_, table);
    std::string copy_end = std::to_string(to_) + " + ((" + made + " - " + std::to_string(from_) + ") / " +
                           std::to_string(period) + ") * " + std::to_string(period);
    std::string before_last = made + " BETWEEN " + std::to_string(from_) + " AND " +
                              std::to_string(to_ - 1 + (repetitions_ - 1) * period);
    for (const std::string& column : columns_with_role(db_, table, ColumnRole::Time)) {
      if (column.rfind("free", 0) != 0) continue;
      db_.exec("UPDATE main." + table.name + " SET " + column + " = " + made + " + " + std::to_string(period) +
               " WHERE " + before_last + " AND (" + column + " IS NULL OR " + column + " >= " + copy_end + ")");
    }
  }

  void insert_repetition(const TableInfo& table, int64_t r, int64_t shift) {
    std::string columns, values;
    for (const auto& column : table.columns) {
      if (!db_.has_column(table.name, column.name)) continue;
      columns += (columns.empty() ? "" : ", ") + column.name;
      values += (values.empty() ? "" : ", ") + repeated_value(table, column.name, column.meaning, r, shift);
    }
    db_.exec("INSERT INTO main." + table.name + " (" + columns + ") SELECT " + values +
             " FROM temp.window_" + table.name);
  }

  std::string repeated_value(const TableInfo& table, const std::string& column,
                             const apptracer::ColumnMeaning& meaning, int64_t r, int64_t shift) {
    switch (meaning.role) {
      case ColumnRole::Time: return column + " + " + std::to_string(shift);
      case ColumnRole::Correlation: return column + " + " + std::to_string(r * (correlations_ + 1));
      case ColumnRole::Id: return column + " + " + std::to_string(r * id_span(table.name));
      case ColumnRole::Ref:
        if (!repeated(tables_, meaning.target)) return column;
        // A row of the steps refers to this repetition's copy of another.
        return "CASE WHEN " + column + " IN (SELECT id FROM temp.window_" + meaning.target +
               ") THEN " + column + " + " + std::to_string(r * id_span(meaning.target)) + " ELSE " +
               column + " END";
      default: return column;
    }
  }

  // Ids of a repetition start past every id the table had.
  int64_t id_span(const std::string& table) {
    auto found = spans_.find(table);
    if (found != spans_.end()) return found->second;
    int64_t span = single_integer(db_, "SELECT max(id) FROM main." + table) + 1;
    return spans_.emplace(table, span).first->second;
  }

  Database& db_;
  std::vector<const TableInfo*> tables_;
  int64_t from_ = 0, to_ = 0;  // the repeated steps
  int64_t repetitions_ = 0;
  int64_t correlations_ = 0;  // the largest correlation id
  std::map<std::string, int64_t> spans_;
};

Options parse(int argc, char** argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return std::string(argv[++i]);
    };
    if (arg == "--steps") {
      options.steps = std::stoll(value());
    } else if (arg == "--window") {
      options.window = std::stoll(value());
    } else if (arg == "--range") {
      options.range = value();
    } else if (arg == "--force") {
      options.force = true;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2 || options.steps <= 0 || options.window <= 0) {
    throw std::runtime_error("usage: repeat_steps IN OUT --steps N [--window K] [--range NAME] [--force]");
  }
  options.in = positional[0];
  options.out = positional[1];
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options = parse(argc, argv);
    apptracer::OutputFile file(options.out, {options.in}, options.force);
    {
      Database in(options.in, Database::Mode::ReadOnly);
      Statement copy = in.prepare("VACUUM INTO ?");
      copy.bind(1, file.file_path()).run();
    }
    int64_t repetitions = 0;
    {
      Database out(file.file_path(), Database::Mode::ReadWrite);
      out.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
      Repeater repeater(out, options);
      apptracer::with_transaction(out, [&] { repeater.run(); });
      repetitions = repeater.repetitions();
    }
    file.commit();
    std::printf("%s: the last %" PRId64 " step(s) of %s repeated %" PRId64 " time(s)\n",
                options.out.c_str(), options.window, options.in.c_str(), repetitions);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "repeat_steps: %s\n", error.what());
    return 1;
  }
}
