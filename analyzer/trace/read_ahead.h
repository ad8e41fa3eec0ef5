// Streaming a table a batch ahead of its reader: ReadAhead reads Row's rows
// in the order asked, one at a time as PackedReader does, but decodes them
// on a thread of its own while the reader works on the ones before (the
// timeline turns each into a slice). Where no other connection can read the
// trace (Database::shares_what_it_reads) or the rows have text, it reads on
// the caller's thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "analyzer/trace/step_window.h"
#include "analyzer/trace/table_reader.h"

namespace apptracer::trace {

template <typename Row>
class ReadAhead {
 public:
  // `rest`: what follows FROM table (WHERE, ORDER BY); may be empty. The
  // table must exist. `wanted` names the columns to decode (the others read
  // as zero or none); they must outlive the reader. An event row (step_window.h)
  // outside `window`, when given, is skipped.
  ReadAhead(Database& db, TextPool& texts, std::string_view rest, const ColumnNames& wanted = {},
            const StepWindow* window = nullptr)
      : window_(window) {
    if (detail::kHasTextColumn<Row> || !db.shares_what_it_reads()) {
      here_.emplace(db, texts, rest, wanted);
      return;
    }
    try {
      thread_ = std::thread([this, own = db.reopen_read_only(), rest = std::string(rest), wanted]() mutable {
        read(own, rest, wanted);
      });
    } catch (const std::system_error&) {
      // No thread to be had: read here, as run_on_threads does.
      here_.emplace(db, texts, rest, wanted);
    }
  }
  ~ReadAhead() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Fills `row` with the next row; false at the end. Throws what reading
  // threw, once the rows read before it are taken.
  bool next(Packed<Row>& row) {
    while (next_read(row)) {
      if constexpr (kIsWindowedRow<Row>) {
        if (window_ && !window_keeps(*window_, row)) continue;
      }
      return true;
    }
    return false;
  }

 private:
  bool next_read(Packed<Row>& row) {
    if (here_) return here_->next(row);
    if (taken_ == batch_.size()) {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !ready_.empty() || done_; });
      if (ready_.empty()) {
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
        return false;
      }
      batch_ = std::move(ready_.front());
      ready_.pop_front();
      taken_ = 0;
      lock.unlock();
      changed_.notify_all();
    }
    row = batch_[taken_++];
    return true;
  }

  // Enough rows a batch that handing one over costs nothing beside reading
  // it; few enough batches that what waits is a few megabytes.
  static constexpr size_t kBatchRows = 4096;
  static constexpr size_t kBatchesAhead = 4;

  void read(Database& db, const std::string& rest, const ColumnNames& wanted) {
    try {
      TextPool no_text;
      PackedReader<Row> reader(db, no_text, rest, wanted);
      for (bool more = true; more;) {
        std::vector<Packed<Row>> batch;
        batch.reserve(kBatchRows);
        Packed<Row> row;
        while (batch.size() < kBatchRows && (more = reader.next(row))) batch.push_back(row);
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return ready_.size() < kBatchesAhead || stop_; });
        if (stop_) return;
        if (!batch.empty()) ready_.push_back(std::move(batch));
        lock.unlock();
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
  }

  const StepWindow* window_;
  std::optional<PackedReader<Row>> here_;  // reading on the caller's thread
  std::vector<Packed<Row>> batch_;         // the reader's, from taken_ on
  size_t taken_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<Packed<Row>>> ready_;
  bool done_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the rest is made
};

// visit(row) for each row in the order `rest` asks, holding a few batches
// at a time.
template <typename Row, typename Visit>
void stream_rows(Database& db, TextPool& texts, std::string_view rest, Visit&& visit,
                 const ColumnNames& wanted = {}) {
  if (!db.has_table(Row::kTable)) return;
  ReadAhead<Row> reader(db, texts, rest, wanted);
  Packed<Row> row;
  while (reader.next(row)) visit(std::as_const(row));
}

}  // namespace apptracer::trace
