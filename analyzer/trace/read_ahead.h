// Streaming a table a batch ahead of its reader: ReadAhead reads Row's rows
// in the order asked, one at a time as PackedReader does, but decodes them
// on threads of its own while the reader works on the ones before (the
// timeline turns each into a slice): one thread, or for a whole table in
// its own order a few, each reading every few chunks of rowids. Where no
// other connection can read the trace (Database::shares_what_it_reads) or
// the rows have text, it reads on the caller's thread.
#pragma once

#include <algorithm>
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
    // A whole table in its own order is read a chunk of rowids at a time,
    // the chunks dealt out to several threads: decoding SQLite's rows is
    // slower than most passes' work on them, and one thread decoding a
    // million API calls kept diagnose waiting for it.
    if (rest.empty()) {
      const TableInfo& table = table_of<Row>();
      chunks_ = detail::rowid_chunks(db, table, detail::expected_rows(db, table), kBatchRows);
    }
    size_t readers = chunks_.empty() ? 1 : std::min({chunks_.size(), kMaxReaders, detail::default_readers()});
    if (readers < 2) chunks_.clear();
    chunk_count_ = chunks_.empty() ? 1 : chunks_.size();
    batches_ahead_ = std::max<size_t>(1, kBatchesAhead / readers);
    lanes_ = std::vector<Lane>(readers);
    try {
      for (size_t lane = 0; lane < readers; ++lane) {
        threads_.emplace_back([this, lane, own = detail::scanning_connection(db), rest = std::string(rest), wanted]() mutable {
          read(own, rest, wanted, lane);
        });
      }
    } catch (const std::system_error&) {
      // No thread to be had: read here, as run_on_threads does.
      stop_threads();
      here_.emplace(db, texts, rest, wanted);
    }
  }
  ~ReadAhead() { stop_threads(); }
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
  struct Batch {
    std::vector<Packed<Row>> rows;
    bool ends_chunk = false;
  };
  // A reading thread's batches, in the order of its chunks (it reads chunks
  // lane, lane + lanes, ...). Under mutex_.
  struct Lane {
    std::deque<Batch> ready;
    bool done = false;
    std::exception_ptr error;
  };

  bool next_read(Packed<Row>& row) {
    if (here_) return here_->next(row);
    while (taken_ == batch_.size()) {
      if (batch_ends_chunk_) {
        ++chunk_;
        batch_ends_chunk_ = false;
      }
      if (chunk_ == chunk_count_) return false;
      Lane& lane = lanes_[chunk_ % lanes_.size()];
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !lane.ready.empty() || lane.done; });
      if (lane.ready.empty()) {
        if (lane.error) std::rethrow_exception(std::exchange(lane.error, nullptr));
        return false;
      }
      if (batch_.capacity() > 0) spare_.push_back(std::move(batch_));
      batch_ = std::move(lane.ready.front().rows);
      batch_ends_chunk_ = lane.ready.front().ends_chunk;
      lane.ready.pop_front();
      taken_ = 0;
      lock.unlock();
      changed_.notify_all();
    }
    row = batch_[taken_++];
    return true;
  }

  // Enough rows a batch that handing one over costs nothing beside reading
  // it; few enough batches that what waits is a few megabytes, however many
  // threads read.
  static constexpr size_t kBatchRows = 4096;
  static constexpr size_t kBatchesAhead = 4;
  static constexpr size_t kMaxReaders = 4;

  // False once the reader is being dropped.
  bool hand_over(size_t lane, Batch batch) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return lanes_[lane].ready.size() < batches_ahead_ || stop_; });
    if (stop_) return false;
    lanes_[lane].ready.push_back(std::move(batch));
    lock.unlock();
    changed_.notify_all();
    return true;
  }

  // A batch the reader has taken every row of, emptied, or none. Batches
  // go round: a new one each time was a fresh mapping (each is above the
  // heap's mapping threshold, main.cpp), its pages faulted in as it filled:
  // 40% of the report's page faults, a million API calls' batches mapped
  // again at every pass over them.
  std::vector<Packed<Row>> spare_batch() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.empty()) return {};
    std::vector<Packed<Row>> rows = std::move(spare_.back());
    spare_.pop_back();
    rows.clear();
    return rows;
  }

  void read(Database& db, const std::string& rest, const ColumnNames& wanted, size_t lane) {
    try {
      TextPool no_text;
      PackedReader<Row> reader(db, no_text, chunks_.empty() ? rest : "WHERE rowid BETWEEN ? AND ?", wanted);
      for (size_t chunk = lane; chunk < chunk_count_; chunk += lanes_.size()) {
        if (!chunks_.empty()) {
          reader.statement().reset();
          reader.statement().bind(1, chunks_[chunk].first).bind(2, chunks_[chunk].second);
        }
        for (bool more = true; more;) {
          Batch batch;
          batch.rows = spare_batch();
          batch.rows.reserve(kBatchRows);
          Packed<Row> row;
          while (batch.rows.size() < kBatchRows && (more = reader.next(row))) batch.rows.push_back(row);
          batch.ends_chunk = !more;
          if (!hand_over(lane, std::move(batch))) return;
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      lanes_[lane].error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lanes_[lane].done = true;
    }
    changed_.notify_all();
  }

  void stop_threads() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

  const StepWindow* window_;
  std::optional<PackedReader<Row>> here_;  // reading on the caller's thread
  std::vector<detail::RowidRange> chunks_;  // none: one thread reads `rest` in order
  size_t chunk_count_ = 1;
  size_t batches_ahead_ = kBatchesAhead;  // a lane's
  std::vector<Packed<Row>> batch_;        // the reader's, from taken_ on
  std::vector<std::vector<Packed<Row>>> spare_;  // batches read through, under mutex_
  size_t taken_ = 0;
  bool batch_ends_chunk_ = false;
  size_t chunk_ = 0;  // the chunk batch_ is of
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Lane> lanes_;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: started once the rest is made
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
