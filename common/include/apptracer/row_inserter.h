// Inserting a row struct (tables.h) into its table: the statement names
// every declared column, and each field binds to its own column, so a row is
// filled by name and a new column needs no edit here.
#pragma once

#include <type_traits>

#include "apptracer/sqlite.h"
#include "apptracer/tables.h"

namespace apptracer {

namespace detail {

inline void bind_column(Statement& s, int i, const I64& v) { s.bind(i, v); }
inline void bind_column(Statement& s, int i, const OptI64& v) { s.bind(i, v); }
inline void bind_column(Statement& s, int i, const Real& v) { s.bind(i, v); }
inline void bind_column(Statement& s, int i, const OptReal& v) {
  if (v) {
    s.bind(i, *v);
  } else {
    s.bind_null(i);
  }
}
inline void bind_column(Statement& s, int i, const Text& v) { s.bind(i, std::string_view(v)); }
inline void bind_column(Statement& s, int i, const OptText& v) {
  if (v) {
    s.bind(i, std::string_view(*v));
  } else {
    s.bind_null(i);
  }
}
inline void bind_column(Statement& s, int i, const RowId& v) { s.bind(i, v.value); }
inline void bind_column(Statement& s, int i, const TextKey& v) {
  s.bind(i, std::string_view(v.value));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void bind_column(Statement& s, int i, E v) {
  s.bind(i, static_cast<int64_t>(v));
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
void bind_column(Statement& s, int i, const std::optional<E>& v) {
  s.bind(i, v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt);
}

}  // namespace detail

enum class OnConflict { Fail, Replace };

template <typename Row>
class RowInserter {
 public:
  RowInserter() = default;
  // Replace: INSERT OR REPLACE, for storing a row again under its id.
  explicit RowInserter(Database& db, OnConflict conflict = OnConflict::Fail)
      : db_(&db),
        statement_(db.prepare(conflict == OnConflict::Replace
                                  ? "INSERT OR REPLACE" + insert_sql(table_of<Row>()).substr(6)
                                  : insert_sql(table_of<Row>()))) {}

  // Returns the row's rowid.
  int64_t insert(const Row& row) {
    int index = 1;
    for_each_column(row, [&](const auto& value) { detail::bind_column(statement_, index++, value); });
    statement_.run();
    return db_->last_insert_rowid();
  }

 private:
  Database* db_ = nullptr;
  Statement statement_;
};

}  // namespace apptracer
