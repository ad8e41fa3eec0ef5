// Merging copies every per-process table from file to file column by column,
// under the names tables.def declares (copy_table), remapping ids by each
// column's role: that copy is SQL by nature, and reads no column for its
// meaning. What merge itself reads and writes (meta, devices, strings, its own
// tables) goes through the typed rows of row_reader.h and row_inserter.h.
#include "analyzer/merge/merge.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"
#include "apptracer/saturating.h"
#include "apptracer/schema.h"
#include "apptracer/tables.h"
#include "apptracer/sqlite.h"
#include "analyzer/output_file.h"
#include "analyzer/merge/collective_matches.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

// How a column's values change on the way into the merged trace.
enum class IdSpace { None, RowId, Correlation, Tid, Stream, Device, String, Time };

struct ColumnRule {
  std::string column;
  IdSpace space;
  std::string row_table;  // RowId: whose ids the column holds
};

struct TableRule {
  std::string table;
  std::vector<ColumnRule> columns;  // columns that are remapped; others are copied
};

// Per-process tables in declaration order (a table's references come first),
// each column remapped by what its values are (tables.def). Devices are
// matched by UUID instead (map_devices).
const std::vector<TableRule>& table_rules() {
  static const std::vector<TableRule> rules = [] {
    std::vector<TableRule> all;
    for (const TableInfo* table : tables_with_role(TableRole::Trace)) {
      if (table->name == "devices") continue;
      TableRule rule{table->name, {}};
      for (const ColumnInfo& column : table->columns) {
        switch (column.meaning.role) {
          case ColumnRole::Id: rule.columns.push_back({column.name, IdSpace::RowId, table->name}); break;
          case ColumnRole::Ref:
            rule.columns.push_back({column.name, IdSpace::RowId, column.meaning.target});
            break;
          case ColumnRole::Correlation:
            rule.columns.push_back({column.name, IdSpace::Correlation, ""});
            break;
          case ColumnRole::Tid: rule.columns.push_back({column.name, IdSpace::Tid, ""}); break;
          case ColumnRole::Stream: rule.columns.push_back({column.name, IdSpace::Stream, ""}); break;
          case ColumnRole::Device: rule.columns.push_back({column.name, IdSpace::Device, ""}); break;
          case ColumnRole::String: rule.columns.push_back({column.name, IdSpace::String, ""}); break;
          case ColumnRole::Time: rule.columns.push_back({column.name, IdSpace::Time, ""}); break;
          default: break;
        }
      }
      all.push_back(std::move(rule));
    }
    return all;
  }();
  return rules;
}

// What merge adds to every per-process table, described like the rest.
void describe_process_columns(Database& out) {
  RowInserter<SchemaColumnRow> insert(out);
  for (const TableRule& rule : table_rules()) {
    const TableInfo* table = find_table(rule.table);
    insert.insert({rule.table, "process_id", static_cast<int64_t>(table->columns.size()), "INTEGER",
                   "process", std::string("processes"),
                   "the process the row came from (processes.process_id)"});
  }
  RowInserter<SchemaTableRow> describe(out);
  for (const TableInfo* table : tables_with_role(TableRole::Merge)) {
    describe.insert({table->name, std::string(to_string(table->role)), table->doc});
  }
}

std::vector<std::string> table_columns(Database& db, const std::string& table) {
  std::vector<std::string> columns;
  Statement info = db.prepare("PRAGMA table_info(" + table + ")");
  while (info.step()) columns.push_back(info.text(1));
  return columns;
}

std::optional<int64_t> single_value(Database& db, const std::string& sql) {
  Statement query = db.prepare(sql);
  return query.step() ? query.optional_int64(0) : std::nullopt;
}

// Every (table, column) of `db` that holds ids of `space`.
std::vector<std::pair<std::string, std::string>> columns_in_space(Database& db, IdSpace space) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const TableRule& rule : table_rules()) {
    if (!db.has_table(rule.table)) continue;
    std::vector<std::string> present = table_columns(db, rule.table);
    for (const ColumnRule& column : rule.columns) {
      if (column.space != space) continue;
      if (std::find(present.begin(), present.end(), column.column) != present.end()) {
        found.emplace_back(rule.table, column.column);
      }
    }
  }
  return found;
}

std::set<int64_t> distinct_values(Database& db,
                                  const std::vector<std::pair<std::string, std::string>>& columns) {
  std::set<int64_t> values;
  for (const auto& [table, column] : columns) {
    Statement rows = db.prepare("SELECT DISTINCT " + column + " FROM " + table + " WHERE " + column +
                                " IS NOT NULL");
    while (rows.step()) values.insert(rows.int64(0));
  }
  return values;
}

struct IdRange {
  std::optional<int64_t> min;
  std::optional<int64_t> max;
};

IdRange id_range(Database& db, const std::vector<std::pair<std::string, std::string>>& columns) {
  IdRange range;
  for (const auto& [table, column] : columns) {
    Statement query = db.prepare("SELECT min(" + column + "), max(" + column + ") FROM " + table);
    if (!query.step() || query.is_null(0)) continue;
    range.min = std::min(range.min.value_or(INT64_MAX), query.int64(0));
    range.max = std::max(range.max.value_or(INT64_MIN), query.int64(1));
  }
  return range;
}

IdRange id_range(const std::set<int64_t>& values) {
  if (values.empty()) return {};
  return {*values.begin(), *values.rbegin()};
}

// The shift that puts `source` ids after `merged` ids: none when they already
// come after (the first process always keeps its ids); nothing when the
// shifted ids would not fit in 64 bits.
std::optional<int64_t> shift_after(const IdRange& merged, const IdRange& source) {
  if (!merged.max || !source.min || *source.min > *merged.max) return 0;
  // merged.max >= source.min: the difference saturates only upwards, and then +1 fails.
  std::optional<int64_t> shift = checked_add(saturating_sub(*merged.max, *source.min), 1);
  if (!shift || !checked_add(*source.max, *shift)) return std::nullopt;
  return shift;
}

// The shift for ids that keep their values unless two processes share one.
std::optional<int64_t> shift_on_collision(const std::set<int64_t>& merged,
                                          const std::set<int64_t>& source) {
  for (int64_t value : source) {
    if (merged.count(value)) return shift_after(id_range(merged), id_range(source));
  }
  return 0;
}

class Merger {
 public:
  Merger(Database& out, Progress& progress) : out_(out), progress_(progress) {}

  // The output is a temporary file renamed into place only when complete, so
  // it needs no journal or syncing; its indexes are built once at the end
  // instead of row by row, except unique ones: a row that breaks one fails
  // while its input is copied, so the error names that input.
  void create_schema() {
    out_.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
    with_transaction(out_, [&] {
      out_.exec(trace_schema_sql());
      for (const TableRule& rule : table_rules()) {
        out_.exec("ALTER TABLE " + rule.table + " ADD COLUMN process_id INTEGER");
      }
      for (const ViewInfo& view : all_views()) {
        if (view.role == TableRole::Trace)
          out_.exec("DROP VIEW " + view.name + "; " + create_view_sql(view, true));
      }
      for (const TableInfo* table : tables_with_role(TableRole::Merge)) {
        out_.exec(create_table_sql(*table) + create_indexes_sql(*table));
      }
      describe_process_columns(out_);
      Statement indexes = out_.prepare(
          "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND "
          "sql NOT LIKE 'CREATE UNIQUE %'");
      while (indexes.step()) deferred_indexes_.emplace_back(indexes.text(0), indexes.text(1));
      for (const auto& index : deferred_indexes_) out_.exec("DROP INDEX " + index.first);
    });
  }

  void add_process(const std::string& path, int64_t process_id) {
    Database in = open_trace(path, TraceAccess::ReadOnly);
    if (in.has_table("processes")) {
      throw std::runtime_error(path + ": already a merged trace; merge the original traces instead");
    }
    process_id_ = process_id;
    path_ = path;
    all_complete_ = all_complete_ && trace_meta(in, "status") == kStatusComplete;
    reading_trace(path, [&] {
      with_transaction(out_, [&] {
        record_process(in, path);
        compute_offsets(in);
        map_devices(in);
        map_strings(in);
        for (const TableRule& rule : table_rules()) {
          if (in.has_table(rule.table)) copy_table(in, rule);
        }
        copy_schema2_kernel_args(in);
      });
      return 0;
    });
    if (in.has_table("dvdg_ops")) {
      std::fprintf(stderr, "apptracer: note: %s: DVDG tables are per process and were not merged\n",
                   path.c_str());
    }
  }

  void finish(int64_t processes) {
    progress_.update("indexing", 0, 1);
    with_transaction(out_, [&] {
      for (const auto& index : deferred_indexes_) out_.exec(index.second);
      match_collectives(out_);
    });
    RowInserter<MetaRow> meta(out_, OnConflict::Replace);
    meta.insert({std::string("status"), all_complete_ ? kStatusComplete : kStatusRecording});
    meta.insert({std::string("merged_processes"), std::to_string(processes)});
  }

  int64_t rows_copied() const { return rows_copied_; }

 private:
  void record_process(Database& in, const std::string& path) {
    RowInserter<ProcessMetaRow> insert_meta(out_);
    std::map<std::string, std::string> meta;
    for_each_row<MetaRow>(in, "", [&](const MetaRow& row) {
      // A value of NULL is kept as '', as every reader of meta reads it.
      std::string value = row.value.value_or("");
      if (!meta.emplace(row.key.value, value).second) {
        throw TraceError(path + ": its meta table holds the key '" + one_line(row.key.value, 40) +
                         "' twice; is the trace damaged?");
      }
      insert_meta.insert({process_id_, row.key.value, value});
    });
    auto number = [&](const std::string& key) -> std::optional<int64_t> {
      try {
        return meta.count(key) ? std::optional<int64_t>(std::stoll(meta[key])) : std::nullopt;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    };
    RowInserter<ProcessRow>(out_).insert({process_id_, number("pid"), number("ppid"), meta["host"],
                                          meta["command_line"], meta["status"], path});
  }

  void set_offset(const std::string& space, std::optional<int64_t> offset) {
    if (!offset) {
      throw TraceError(path_ + ": its " + space + " values are too large to renumber after the " +
                       "traces merged before it (past 2^63 - 1); is the trace damaged?");
    }
    offsets_[space] = *offset;
    RowInserter<MergeOffsetRow>(out_).insert({process_id_, space, *offset});
  }

  // An id moved by `offset`; one that does not fit refuses the trace.
  int64_t shifted(int64_t value, int64_t offset, const std::string& space) const {
    std::optional<int64_t> moved = checked_add(value, offset);
    if (!moved) {
      throw TraceError(path_ + ": " + space + " " + std::to_string(value) + " is too large to " +
                       "renumber after the traces merged before it; is the trace damaged?");
    }
    return *moved;
  }

  void compute_offsets(Database& in) {
    // Tables with their own row ids: the rule that maps `id` into its own table.
    for (const TableRule& rule : table_rules()) {
      bool has_row_id = std::any_of(rule.columns.begin(), rule.columns.end(), [&](const ColumnRule& c) {
        return c.space == IdSpace::RowId && c.row_table == rule.table;
      });
      if (!has_row_id) continue;
      IdRange source_ids;
      const ColumnRule& id = *std::find_if(rule.columns.begin(), rule.columns.end(),
                                           [&](const ColumnRule& c) { return c.row_table == rule.table; });
      if (in.has_table(rule.table) && in.has_column(rule.table, id.column)) {
        source_ids = id_range(in, {{rule.table, id.column}});
      }
      set_offset(rule.table + ".id", shift_after(id_range(out_, {{rule.table, id.column}}), source_ids));
    }
    set_offset("correlation_id",
               shift_after(id_range(out_, columns_in_space(out_, IdSpace::Correlation)),
                           id_range(in, columns_in_space(in, IdSpace::Correlation))));
    set_offset("tid", shift_on_collision(distinct_values(out_, columns_in_space(out_, IdSpace::Tid)),
                                         distinct_values(in, columns_in_space(in, IdSpace::Tid))));
    set_offset("stream",
               shift_on_collision(distinct_values(out_, columns_in_space(out_, IdSpace::Stream)),
                                  distinct_values(in, columns_in_space(in, IdSpace::Stream))));
    set_offset("time_ns", clock_offset(in));
  }

  // What puts this trace's times on the reference clock, as the tracer
  // measured it (MPI: against world rank 0 at MPI_Init); 0 when it did not.
  static int64_t clock_offset(Database& in) {
    try {
      return std::stoll(trace_meta(in, "clock_offset_ns", "0"));
    } catch (const std::exception&) {
      return 0;
    }
  }

  // A GPU seen before (same UUID) keeps its merged id; a new one keeps its
  // ordinal when that is free, else takes the next free id.
  void map_devices(Database& in) {
    devices_.clear();
    RowInserter<MergeDeviceRow> insert_map(out_);
    RowReader<DeviceRow> same_uuid(out_, "WHERE uuid = ?");
    RowById<DeviceRow> merged_device(out_);
    for_each_row<DeviceRow>(in, "ORDER BY id", [&](const DeviceRow& device) {
      int64_t ordinal = device.id.value.value_or(0);
      std::string uuid = device.uuid.value_or("");
      std::optional<int64_t> merged_id;
      DeviceRow found;
      if (!uuid.empty()) {
        same_uuid.statement().bind(1, uuid);
        if (same_uuid.next(found)) merged_id = found.id.value;
        same_uuid.statement().reset();
      }
      if (!merged_id) {
        merged_id = merged_device.read(ordinal, found)
                        ? single_value(out_, "SELECT max(id) + 1 FROM devices").value()
                        : ordinal;
        copy_device_row(in, ordinal, *merged_id);
      }
      devices_[ordinal] = *merged_id;
      insert_map.insert({process_id_, ordinal, *merged_id});
    });
  }

  void copy_device_row(Database& in, int64_t ordinal, int64_t merged_id) {
    std::vector<std::string> wanted = table_columns(out_, "devices");
    std::vector<std::string> present = table_columns(in, "devices");
    std::string names;
    std::string params;
    std::vector<std::string> columns;
    for (const std::string& column : wanted) {
      if (std::find(present.begin(), present.end(), column) == present.end()) continue;
      columns.push_back(column);
      names += (names.empty() ? "" : ", ") + column;
      params += params.empty() ? "?" : ", ?";
    }
    Statement source = in.prepare("SELECT " + names + " FROM devices WHERE id = ?");
    source.bind(1, ordinal);
    source.step();
    sqlite3_stmt* insert = prepare_raw("INSERT INTO devices (" + names + ") VALUES (" + params + ")");
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == "id") {
        sqlite3_bind_int64(insert, static_cast<int>(i + 1), merged_id);
      } else {
        bind_same(insert, static_cast<int>(i + 1), source, static_cast<int>(i));
      }
    }
    step_raw(insert);
    sqlite3_finalize(insert);
  }

  void map_strings(Database& in) {
    strings_.clear();
    if (merged_strings_.empty()) {
      for_each_row<StringRow>(out_, "", [&](const StringRow& merged) {
        merged_strings_.emplace(merged.text, merged.id.value.value_or(0));
      });
    }
    RowInserter<StringRow> insert(out_);
    for_each_row<StringRow>(in, "", [&](const StringRow& row) {
      auto found = merged_strings_.find(row.text);
      if (found == merged_strings_.end()) {
        found = merged_strings_.emplace(row.text, insert.insert({RowId(), row.text})).first;
      }
      strings_[row.id.value.value_or(0)] = found->second;
    });
  }

  int64_t remap(const ColumnRule& rule, int64_t value) const {
    switch (rule.space) {
      case IdSpace::RowId: {
        auto offset = offsets_.find(rule.row_table + ".id");
        return offset == offsets_.end() ? value : shifted(value, offset->second, offset->first);
      }
      case IdSpace::Correlation: return shifted(value, offsets_.at("correlation_id"), "correlation_id");
      case IdSpace::Tid: return shifted(value, offsets_.at("tid"), "tid");
      case IdSpace::Stream: return shifted(value, offsets_.at("stream"), "stream");
      case IdSpace::Time: return saturating_add(value, offsets_.at("time_ns"));
      case IdSpace::Device: {
        auto found = devices_.find(value);
        return found == devices_.end() ? value : found->second;
      }
      case IdSpace::String: {
        auto found = strings_.find(value);
        return found == strings_.end() ? value : found->second;
      }
      case IdSpace::None: break;
    }
    return value;
  }

  void copy_table(Database& in, const TableRule& rule) {
    std::vector<std::string> wanted = table_columns(out_, rule.table);
    std::vector<std::string> present = table_columns(in, rule.table);
    std::vector<std::string> columns;
    std::vector<const ColumnRule*> rules;
    std::string names;
    std::string params;
    for (const std::string& column : wanted) {
      if (column == "process_id" ||
          std::find(present.begin(), present.end(), column) == present.end()) {
        continue;
      }
      columns.push_back(column);
      const ColumnRule* found = nullptr;
      for (const ColumnRule& candidate : rule.columns) {
        if (column == candidate.column) found = &candidate;
      }
      rules.push_back(found);
      names += (names.empty() ? "" : ", ") + column;
      params += ", ?";
    }
    Statement count = in.prepare("SELECT count(*) FROM " + rule.table);
    count.step();
    int64_t total = count.int64(0);
    Statement source = in.prepare("SELECT " + names + " FROM " + rule.table);
    sqlite3_stmt* insert = prepare_raw("INSERT INTO " + rule.table + " (" + names +
                                       ", process_id) VALUES (" + params.substr(2) + ", ?)");
    int64_t done = 0;
    while (source.step()) {
      for (size_t i = 0; i < columns.size(); ++i) {
        int column = static_cast<int>(i);
        if (rules[i] && !source.is_null(column)) {
          sqlite3_bind_int64(insert, column + 1, remap(*rules[i], source.int64(column)));
        } else {
          bind_same(insert, column + 1, source, column);
        }
      }
      sqlite3_bind_int64(insert, static_cast<int>(columns.size() + 1), process_id_);
      step_raw(insert);
      if (++done % 4096 == 0 || done == total) {
        progress_.update("process " + std::to_string(process_id_) + " " + rule.table, done, total);
      }
    }
    sqlite3_finalize(insert);
    rows_copied_ += done;
  }

  // Schema 2 stored every launch's parameter words in a kernel_args table;
  // the merged trace shares sets of words between launches (kernel_arg_sets,
  // kernel_arg_words). Each launch's words become a set of its own: without
  // them the merged DVDG lost every kernel's reads and writes. That table is
  // no longer declared (tables.def has a view of that name), so its columns
  // are read here, by position, as schema 2 wrote them.
  void copy_schema2_kernel_args(Database& in) {
    if (!in.has_table("kernel_args") || in.has_table("kernel_arg_words")) return;
    const ColumnRule kernel_id{"kernel_id", IdSpace::RowId, "kernels"};
    const ColumnRule alloc_id{"alloc_id", IdSpace::RowId, "allocations"};
    Statement words = in.prepare(
        "SELECT kernel_id, param_index, offset, size, raw_value, alloc_id, alloc_offset, access, "
        "access_source FROM kernel_args ORDER BY kernel_id, offset");
    Statement new_set = out_.prepare("INSERT INTO kernel_arg_sets(words, process_id) VALUES (0, ?)");
    Statement insert_word = out_.prepare(
        "INSERT INTO kernel_arg_words(arg_set_id, param_index, offset, size, raw_value, alloc_id, "
        "alloc_offset, access, access_source, process_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    Statement link = out_.prepare("UPDATE kernels SET arg_set_id = ? WHERE id = ?");
    int64_t kernel = -1;
    int64_t set = 0;
    while (words.step()) {
      if (words.int64(0) != kernel) {
        kernel = words.int64(0);
        new_set.bind(1, process_id_).run();
        set = out_.last_insert_rowid();
        link.bind(1, set).bind(2, remap(kernel_id, kernel)).run();
      }
      std::optional<int64_t> alloc = words.optional_int64(5);
      insert_word.bind(1, set)
          .bind(2, words.optional_int64(1))
          .bind(3, words.int64(2))
          .bind(4, words.int64(3))
          .bind(5, words.optional_int64(4))
          .bind(6, alloc ? std::optional<int64_t>(remap(alloc_id, *alloc)) : std::nullopt)
          .bind(7, words.optional_int64(6))
          .bind(8, words.int64(7))
          .bind(9, words.int64(8))
          .bind(10, process_id_)
          .run();
    }
    out_.prepare("UPDATE kernel_arg_sets SET words = (SELECT count(*) FROM kernel_arg_words w "
                 "WHERE w.arg_set_id = kernel_arg_sets.id) WHERE process_id = ?")
        .bind(1, process_id_)
        .run();
  }

  // Copies a value with its SQLite type (integer, real, text, blob, NULL).
  static void bind_same(sqlite3_stmt* insert, int parameter, const Statement& source, int column) {
    switch (source.column_type(column)) {
      case SQLITE_INTEGER: sqlite3_bind_int64(insert, parameter, source.int64(column)); break;
      case SQLITE_FLOAT: sqlite3_bind_double(insert, parameter, source.real(column)); break;
      case SQLITE_NULL: sqlite3_bind_null(insert, parameter); break;
      default: {
        std::string text = source.text(column);
        sqlite3_bind_text(insert, parameter, text.data(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT);
      }
    }
  }

  sqlite3_stmt* prepare_raw(const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(out_.handle(), sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      throw SqliteError(std::string("merge: ") + sqlite3_errmsg(out_.handle()));
    }
    return statement;
  }

  void step_raw(sqlite3_stmt* statement) {
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    if (rc != SQLITE_DONE) {
      sqlite3_finalize(statement);
      throw SqliteError(std::string("merge: ") + sqlite3_errmsg(out_.handle()));
    }
  }

  Database& out_;
  Progress& progress_;
  int64_t process_id_ = 0;
  std::string path_;  // of the process being added
  int64_t rows_copied_ = 0;
  bool all_complete_ = true;
  std::map<std::string, int64_t> offsets_;
  std::map<int64_t, int64_t> devices_;
  std::unordered_map<int64_t, int64_t> strings_;
  std::unordered_map<std::string, int64_t> merged_strings_;
  std::vector<std::pair<std::string, std::string>> deferred_indexes_;  // (name, CREATE sql)
};

// The same trace given twice (under any name) would merge one process twice.
void check_distinct(const std::vector<std::string>& inputs) {
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  for (const std::string& input : inputs) {
    struct stat info {};
    if (stat(input.c_str(), &info) != 0) continue;  // open_trace says what is wrong with it
    auto [first, inserted] = seen.emplace(std::make_pair(info.st_dev, info.st_ino), input);
    if (!inserted) {
      throw std::runtime_error("merge: " + first->second + " and " + input +
                               " are the same file; give each trace once");
    }
  }
}

}  // namespace

MergeSummary merge_traces(const std::vector<std::string>& inputs, const std::string& output,
                          bool overwrite, Progress& progress) {
  if (inputs.empty()) throw std::runtime_error("merge: no input traces given");
  check_distinct(inputs);
  OutputFile file(output, inputs, overwrite);
  MergeSummary summary;
  {
    Database out(file.file_path(), Database::Mode::Create);
    Merger merger(out, progress);
    merger.create_schema();
    for (size_t i = 0; i < inputs.size(); ++i) merger.add_process(inputs[i], static_cast<int64_t>(i + 1));
    merger.finish(static_cast<int64_t>(inputs.size()));
    summary.processes = static_cast<int64_t>(inputs.size());
    summary.rows = merger.rows_copied();
  }
  progress.finish();
  file.commit();
  return summary;
}

}  // namespace apptracer
