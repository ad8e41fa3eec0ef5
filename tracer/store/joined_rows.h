// How rows joined to their GPU activity (kernels, memcpys, memsets) are
// stored: batched the first time with an id of ours; stored again (after
// their batch is flushed, so the replacement cannot come first) when late
// activity completes them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"

namespace apptracer {

template <typename Row>
struct JoinedRowInserters {
  explicit JoinedRowInserters(Database& db)
      : db(db), batch(db), again(db, OnConflict::Replace) {}

  void store(Row& row, bool stored_before) {
    if (!stored_before) {
      row.id = next_id++;
      batch.add(row);
      return;
    }
    batch.flush();
    again.insert(row);
  }

  // Reads a row back by id, flushing the batch first (the row may still
  // wait in it).
  std::function<std::optional<Row>(int64_t)> loader() {
    auto by_id = std::make_shared<RowById<Row>>(db);
    return [by_id, this](int64_t id) -> std::optional<Row> {
      batch.flush();
      Row row;
      if (!by_id->read(id, row)) return std::nullopt;
      return row;
    };
  }

  Database& db;
  BatchInserter<Row> batch;
  RowInserter<Row> again;
  int64_t next_id = 1;
};

}  // namespace apptracer
