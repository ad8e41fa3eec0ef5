// Inserting a row struct (tables.h) into its table: the statement names
// every declared column, and each field binds to its own column, so a row is
// filled by name and a new column needs no edit here.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "apptracer/sqlite.h"
#include "apptracer/tables.h"

namespace apptracer {

namespace detail {

template <typename T>
struct is_optional_enum : std::false_type {};
template <typename E>
struct is_optional_enum<std::optional<E>> : std::is_enum<E> {};

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

// A column's value as an integer parameter (nullopt: NULL), for the column
// types bound as integers; false for the others (REAL, TEXT).
template <typename T>
bool integer_value(const T& v, std::optional<int64_t>& out) {
  if constexpr (std::is_same_v<T, I64> || std::is_same_v<T, OptI64>) {
    out = v;
    return true;
  } else if constexpr (std::is_same_v<T, RowId>) {
    out = v.value;
    return true;
  } else if constexpr (std::is_enum_v<T>) {
    out = static_cast<int64_t>(v);
    return true;
  } else if constexpr (is_optional_enum<T>::value) {
    if (v) out = static_cast<int64_t>(*v);
    else out.reset();
    return true;
  } else {
    return false;
  }
}

// "(?,?,...)" for `columns`, `rows` times, comma separated.
std::string value_tuples(size_t columns, size_t rows);

}  // namespace detail

enum class OnConflict { Fail, Replace };

template <typename Row>
class RowInserter {
 public:
  RowInserter() = default;
  // Replace: INSERT OR REPLACE, for storing a row again under its id.
  explicit RowInserter(Database& db, OnConflict conflict = OnConflict::Fail)
      : db_(&db), statement_(db.prepare(sql(conflict, 1))) {}

  // Returns the row's rowid.
  int64_t insert(const Row& row) {
    bind(statement_, 0, row);
    statement_.run_rebinding_all();
    return db_->last_insert_rowid();
  }

 protected:
  static std::string sql(OnConflict conflict, size_t rows) {
    std::string head = conflict == OnConflict::Replace ? "INSERT OR REPLACE" : "INSERT";
    std::string single = insert_sql(table_of<Row>());
    // insert_sql is "INSERT INTO t (columns) VALUES (?,...)": keep its head.
    std::string columns = single.substr(6, single.find(" VALUES ") - 6);
    return head + columns + " VALUES " +
           detail::value_tuples(table_of<Row>().columns.size(), rows);
  }
  static void bind(Statement& statement, int first, const Row& row) {
    int index = first + 1;
    for_each_column(row, [&](const auto& value) { detail::bind_column(statement, index++, value); });
  }

  Database* db_ = nullptr;
  Statement statement_;
};

// Inserts rows several at a time: one multi-row INSERT costs SQLite little
// more than a one-row one, so the writer's cost per row drops. Rows are only
// in the database after flush() (or once a batch fills): a caller that needs
// a row's id assigns it itself, and flushes before it commits or replaces a
// row it inserted here. Where the connection has an insert thread, a full
// batch runs there while the next fills (InsertThread).
template <typename Row>
class BatchInserter : public RowInserter<Row> {
 public:
  // 128 rather than 32: the statement's per-run cost (reset, halt, statement
  // journal) spread over more rows took 5% off the writer's instructions.
  // Fewer where SQLite allows fewer parameters (999 before 3.32; a copy has 26 columns).
  static constexpr size_t kMaxBatchRows = 128;
  // With an insert thread: batches of the table it may hold while one more
  // fills; past that, whoever adds rows waits for it.
  static constexpr unsigned kSlotsWithInsertThread = 4;

  BatchInserter() = default;
  explicit BatchInserter(Database& db)
      : RowInserter<Row>(db),
        batch_rows_(std::min(kMaxBatchRows, static_cast<size_t>(sqlite3_limit(
                                                db.handle(), SQLITE_LIMIT_VARIABLE_NUMBER, -1)) /
                                                columns())),
        slot_count_(db.insert_thread() ? kSlotsWithInsertThread : 1),
        slots_(std::make_unique<Slot[]>(slot_count_)) {}
  ~BatchInserter() { settle(); }
  BatchInserter(BatchInserter&&) = delete;
  BatchInserter& operator=(BatchInserter&& other) noexcept {
    settle();
    other.settle();
    RowInserter<Row>::operator=(std::move(other));
    batch_rows_ = other.batch_rows_;
    slot_count_ = other.slot_count_;
    slots_ = std::move(other.slots_);
    filling_ = other.filling_;
    pending_ = other.pending_;
    batch_ = std::move(other.batch_);
    bound_ = std::move(other.bound_);
    return *this;
  }

  void add(const Row& row) {
    Slot& slot = slots_[filling_];
    if (!slot.rows) slot.rows = std::make_unique<Row[]>(batch_rows_);
    slot.rows[pending_++] = row;
    if (pending_ < batch_rows_) return;
    pending_ = 0;
    // Prepared when a batch first fills: most tables of a trace never fill
    // one, and preparing the statement costs a few million instructions.
    if (bound_.empty()) {
      batch_ = this->db_->prepare(RowInserter<Row>::sql(OnConflict::Fail, batch_rows_));
      batch_.leave_to_insert_thread();
      bound_.resize(batch_rows_ * columns());
    }
    InsertThread* thread = this->db_->insert_thread();
    if (!thread) return run(slot);
    slot.in_flight.store(true, std::memory_order_release);
    thread->hand_over(&run_handed_over, this, filling_);
    filling_ = (filling_ + 1) % slot_count_;
    Slot& next = slots_[filling_];
    if (next.in_flight.load(std::memory_order_acquire)) {
      thread->wait_until([&] { return !next.in_flight.load(std::memory_order_acquire); });
    }
  }

  void flush() {
    Slot& slot = slots_[filling_];
    for (size_t i = 0; i < pending_; ++i) RowInserter<Row>::insert(slot.rows[i]);
    pending_ = 0;
  }

 private:
  // What a parameter of the batch statement holds, kept between runs.
  struct Bound {
    bool integer = false;  // false: not known, or not an integer
    std::optional<int64_t> value;
  };
  // A batch's rows, allocated when first filled; in flight while the
  // insert thread holds them.
  struct Slot {
    std::unique_ptr<Row[]> rows;
    std::atomic<bool> in_flight{false};
  };

  static size_t columns() { return table_of<Row>().columns.size(); }

  void settle() {
    if (this->db_ && this->db_->insert_thread()) this->db_->insert_thread()->settle();
  }

  static void run_handed_over(void* owner, unsigned slot, bool write) {
    auto* self = static_cast<BatchInserter*>(owner);
    Slot& batch = self->slots_[slot];
    struct GiveBack {
      Slot& batch;
      ~GiveBack() { batch.in_flight.store(false, std::memory_order_release); }
    } give_back{batch};
    if (write) self->run(batch);
  }

  void run(Slot& slot) {
    for (size_t i = 0; i < batch_rows_; ++i) bind_changed(i, slot.rows[i]);
    batch_.run_rebinding_all();
  }

  // Binds a row's values into place i of the batch, leaving out the
  // integers (and NULLs) its parameters already hold: most columns repeat
  // from row to row (NULLs, devices, threads, launch shapes), and a bind
  // costs SQLite about 80 instructions.
  void bind_changed(size_t i, const Row& row) {
    size_t slot = i * columns();
    for_each_column(row, [&](const auto& value) {
      Bound& bound = bound_[slot];
      int index = static_cast<int>(++slot);
      std::optional<int64_t> integer;
      if (!detail::integer_value(value, integer)) {
        detail::bind_column(batch_, index, value);
        bound.integer = false;
        return;
      }
      if (bound.integer && bound.value == integer) return;
      batch_.bind(index, integer);
      bound.integer = true;
      bound.value = integer;
    });
  }

  size_t batch_rows_ = 0;
  unsigned slot_count_ = 0;
  std::unique_ptr<Slot[]> slots_;
  unsigned filling_ = 0;
  size_t pending_ = 0;
  Statement batch_;
  std::vector<Bound> bound_;  // empty until batch_ is prepared
};

}  // namespace apptracer
