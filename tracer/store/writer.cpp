#include "store/writer.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "base/clock.h"
#include "base/log.h"
#include "base/self_cost.h"
#include "base/signal_line.h"
#include "base/signal_sets.h"
#include "store/high_descriptors.h"

namespace apptracer {

namespace {

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

Writer::Writer(RecordBuffers& buffers, AllocationRegistry& registry, StringTable& strings,
               Config config, HostBlockResolution host)
    : buffers_(buffers),
      registry_(registry),
      strings_(strings),
      config_(std::move(config)),
      host_(std::move(host)),
      insert_thread_([this] {
        // As the writer thread: no signal handled here, no record made or
        // waited for, no host allocation recorded.
        sigset_t blocked = all_but_faults();
        pthread_sigmask(SIG_SETMASK, &blocked, nullptr);
        pthread_setname_np(pthread_self(), "apptracer-sql");
        buffers_.mark_writer_thread();
        if (thread_start_) thread_start_();
      },
                     [this] { insert_thread_usage_ += self_cost::this_thread_usage(); }) {}

// The writer thread blocks every signal but the faults a thread raises on
// itself: a signal sent to the process then goes to one of the program's
// threads, where the tracer's handler can wait for this thread to flush. A
// pool worker idle in sem_wait got its pool's SIGTERM on the writer thread,
// which cannot wait for itself, and died with nothing flushed. Blocked in
// the creating thread around the creation, so the new thread starts blocked.
// The insert thread starts with it, not at the writer's first full batch:
// creating a thread takes the dynamic loader's lock, and a pool worker's
// SIGTERM came while its thread was inside dlopen (a Python import), so
// the writer's first batch waited for that lock while the signal's handler
// waited for the writer, and the worker died with its trace's end unwritten.
void Writer::start() {
  stopping_ = false;
  SignalsBlocked blocked(all_but_faults());
  thread_ = std::thread([this] { run(); });
  insert_thread_.start();
}

bool Writer::on_writer_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

std::string Writer::path() const {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  return path_;
}

void Writer::add_device(const DeviceInfo& device) {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  pending_devices_.push_back(device);
}

void Writer::set_meta(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  pending_meta_[key] = value;
}

void Writer::run() {
  // Named so a user's `top -H` or a stack dump tells it from the program's.
  pthread_setname_np(pthread_self(), "apptracer-write");
  buffers_.mark_writer_thread();
  if (thread_start_) thread_start_();
  while (!stopping_.load()) {
    buffers_.note_progress("waiting for records");
    buffers_.wait_for_work(std::min(std::chrono::milliseconds(config_.flush_period_ms),
                                    until_activity_ask_due()));
    pass();
    ask_for_activity_when_due();
    if (int signal_number = signal_flush_requested_.load()) {
      write_signal_end(signal_number);
      signal_flush_done_ = true;
      signal_flush_requested_ = 0;
    }
  }
  thread_usage_ = self_cost::this_thread_usage();
}

// At most four asks a period: the passes come as often as record buffers
// fill (every few milliseconds in a training loop), each ask takes CUPTI's
// activity lock beside the program's launches (and what it hands over is
// turned into records under it), and its 8 MiB buffers take about a second
// to fill there; rows wait two periods before going without.
uint64_t Writer::activity_ask_every_ns() const { return uint64_t{1'000'000} * config_.flush_period_ms / 4; }

std::chrono::milliseconds Writer::until_activity_ask_due() const {
  if (!activity_wanted_) return std::chrono::milliseconds(config_.flush_period_ms);
  uint64_t since = now_ns() - activity_requested_ns_;
  uint64_t every = activity_ask_every_ns();
  return std::chrono::milliseconds(since >= every ? 0 : (every - since) / 1'000'000 + 1);
}

void Writer::ask_for_activity_when_due() {
  // A forked child has no one to ask (set_activity_request(nullptr)).
  if (!activity_wanted_ || !request_activity_) return;
  uint64_t now = now_ns();
  if (now - activity_requested_ns_ < activity_ask_every_ns()) return;
  activity_wanted_ = false;
  activity_requested_ns_ = now;
  request_activity_(false);
}

void Writer::write_signal_end(int signal_number) {
  // GPU work that ended before the crash, as far as CUPTI still hands it
  // over: asked for, then drained for part of the handler's time (if the
  // crashed thread holds CUPTI's lock nothing comes, and the trace lacks
  // only that). Always at least one pass of its own: the one before may have
  // drained before the signalled thread's last records (a forked child,
  // without CUPTI activity, lost its last copies to SIGTERM).
  if (request_activity_ && store_) {
    request_activity_(true);
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      pass();
    }
  } else {
    pass();
  }
  if (!store_ || failed_ || records_in_hand_ || !begin_transaction()) return;
  std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
  try {
    store_->store_waiting();
    store_->set_meta("status", "incomplete");
    store_->set_meta("end_reason", "signal " + std::to_string(signal_number));
    store_->commit();
  } catch (const std::exception& error) {
    give_up(std::string("marking the trace interrupted failed: ") + error.what());
  }
}

bool Writer::begin_transaction() {
  // Short enough that a fork waiting for the gate is not turned away (it
  // waits APPTRACER_FORK_WAIT_MS, 1 s by default).
  constexpr auto kLockWaitSlice = std::chrono::milliseconds(100);
  uint64_t wait_start = 0;
  for (;;) {
    {
      std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
      if (store_->try_begin(kLockWaitSlice)) break;
    }
    uint64_t now = now_ns();
    if (wait_start == 0) {
      wait_start = now;
      // Once: the producers' stall bound counts from here.
      buffers_.note_progress("waiting for another process's write lock on the trace");
      log_warn("another process holds a write lock on the trace {}; the writer waits for it",
               path_);
    }
    uint64_t deadline = lock_deadline_ns_.load();
    if (deadline != 0 && now >= deadline) {
      lock_wait_ns_ += now - wait_start;
      return false;
    }
  }
  if (wait_start != 0) {
    lock_wait_ns_ += now_ns() - wait_start;
    log_info("the trace {} is writable again; tracing goes on", path_);
  }
  return true;
}

void Writer::give_up(const std::string& why) {
  log_error("{}; tracing stops, the program continues", why);
  try {
    store_->roll_back();
  } catch (const std::exception& error) {
    log_error("cannot undo the failed write: {}", error.what());
  }
  records_not_written_ += pass_records_.size();
  pass_records_.clear();
  records_in_hand_ = false;
  if (gave_up_.empty()) gave_up_ = why;
  failed_ = true;
  buffers_.close();
}

StoreOptions Writer::store_options() const {
  if (!gpu_activity_expected_) return StoreOptions{ActivityWait{0, 0, 0}};
  StoreOptions options;
  // As long as the passes would take at the writer's period, however often
  // buffers fill.
  options.activity.hold_ns =
      static_cast<uint64_t>(options.activity.hold_passes) * config_.flush_period_ms * 1'000'000;
  return options;
}

bool Writer::open_store_if_needed() {
  if (store_) return true;
  if (failed_) return false;
  keep_sqlite_descriptors_high();
  int pid = getpid();
  std::string wanted = expand_output_path(config_.output, pid, host_name());
  std::string path;
  try {
    ClaimedOutput claimed = claim_output_path(wanted, pid);
    path = claimed.path;
    // At once: a process killed while its trace is being created still has
    // its file listed (record says it holds nothing).
    announce_trace(config_.run_dir, path);
    StoreOptions options = store_options();
    ClaimedFileCheck check(claimed);
    try {
      store_ = std::make_unique<TraceStore>(path, registry_, strings_, host_, options,
                                            &insert_thread_);
    } catch (const std::exception&) {
      if (check.refused()) throw std::runtime_error("another file was put at its name after it was created");
      throw;
    }
  } catch (const std::exception& error) {
    log_error("cannot create trace {}: {}; tracing stops, the program continues",
              path.empty() ? wanted : path, error.what());
    failed_ = true;
    return false;
  }
  if (path != wanted) log_info("{} exists; writing this process's trace to {}", wanted, path);
  std::lock_guard<std::mutex> lock(pending_mutex_);
  path_ = path;
  return true;
}

void Writer::pass() {
  uint64_t drain_start = now_ns();  // every record appended before it is drained below
  // A forked child often rearranges its descriptors and execs at once (a
  // shell's pipeline): this thread does not open its trace until it has lived
  // a while; an exit or exec before then writes it from the program's thread.
  if (!store_ && !stopping_ && !signal_flush_requested_ && drain_start < open_not_before_ns_) return;
  buffers_.note_progress("draining record buffers");
  // Records a pass could not write for a lock on the trace stay for the next.
  if (!records_in_hand_) {
    pass_records_.clear();
    hand_drain_start_ = drain_start;
  }
  {
    self_cost::Timer timer(self_cost::Site::WriterDrain);
    buffers_.drain([this](const Record* records, size_t count) {
      pass_records_.insert(pass_records_.end(), records, records + count);
    });
  }
  if (failed_) {
    records_not_written_ += pass_records_.size();
    pass_records_.clear();
    return;
  }
  std::vector<DeviceInfo> devices;
  std::map<std::string, std::string> meta;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (pass_records_.empty() && pending_devices_.empty() &&
        (pending_meta_.empty() || (!store_ && !create_eagerly_))) {
      return;
    }
    devices.swap(pending_devices_);
    meta.swap(pending_meta_);
  }
  {
    std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
    buffers_.note_progress("opening the trace");
    if (!open_store_if_needed()) return;
  }
  if (!begin_transaction()) {
    records_in_hand_ = true;
    std::lock_guard<std::mutex> lock(pending_mutex_);
    pending_devices_.insert(pending_devices_.begin(), devices.begin(), devices.end());
    pending_meta_.insert(meta.begin(), meta.end());  // a newer value stays
    return;
  }
  records_in_hand_ = false;
  pass_starts_.push_back(hand_drain_start_);
  if (pass_starts_.size() > kPassesAFreedBlockIsKept) pass_starts_.pop_front();
  try {
    write_records();
    std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
    write_tracer_time(false);
    buffers_.note_progress("committing");
    store_->end_pass(drain_start);
    for (const DeviceInfo& device : devices) store_->write_device(device);
    for (const auto& [key, value] : meta) store_->set_meta(key, value);
    // Last: the rows above may have interned names (demangled kernels).
    for (const auto& [id, text] : strings_.take_new()) store_->write_string(id, text);
    store_->commit();
    // Activity comes in buffers CUPTI hands over when full: rows waiting for
    // theirs ask for what it has (it arrives in a later pass).
    if (request_activity_ && store_->waiting_for_activity()) activity_wanted_ = true;
    ask_for_activity_when_due();
    buffers_.note_progress("forgetting freed allocations");
    // A record resolves addresses at its call's start; no call still to be
    // written started more than this long before now.
    constexpr uint64_t kLongestCallNs = 60ull * 1000 * 1000 * 1000;
    uint64_t now = now_ns();
    if (now > kLongestCallNs) registry_.forget_freed_before(now - kLongestCallNs);
    // A host block's touches were recorded before its free; once the
    // passes that drained them, and the rows they wait in, are done, the
    // freed block is not needed.
    if (host_.forget_freed_before && pass_starts_.size() == kPassesAFreedBlockIsKept) {
      uint64_t hold_ns = store_options().activity.hold_ns;
      uint64_t waited_for = drain_start > hold_ns ? drain_start - hold_ns : 0;
      host_.forget_freed_before(std::min(pass_starts_.front(), waited_for));
    }
  } catch (const std::exception& error) {
    std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
    give_up(std::string("writing the trace failed: ") + error.what());
  }
}

void Writer::write_tracer_time(bool last) {
  for (const TracerTimeRow& row : tracer_time_.take(now_ns(), last)) store_->write_tracer_time(row);
}

void Writer::write_records() {
  // Small enough that a fork waits about a millisecond at most (host rows
  // cost the writer ~5 µs each, a NUMA query apiece), large enough that
  // taking the gate costs nothing per record.
  constexpr size_t kSliceRecords = 256;
  for (size_t at = 0; at < pass_records_.size(); at += kSliceRecords) {
    std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
    buffers_.note_progress("writing rows");
    store_->write(pass_records_.data() + at, std::min(kSliceRecords, pass_records_.size() - at));
  }
}

void Writer::finish(const std::string& status) {
  if (!thread_.joinable()) return;
  // Each step's time goes in meta: a program's exit waits for all of them.
  auto ms_since = [this](uint64_t start) { return std::to_string((now_ns() - start) / 1000000); };
  uint64_t step_start = now_ns();
  // An exiting program waits for a lock on its trace no longer than a
  // producer waits for the writer.
  lock_deadline_ns_ = step_start + uint64_t{config_.stall_ms} * 1'000'000;
  stopping_ = true;
  buffers_.wake_writer();
  thread_.join();
  buffers_.close();
  pass();
  if (!store_) return;
  if (records_in_hand_ || !begin_transaction()) {
    log_error("another process kept a write lock on the trace {} past the program's end: its "
              "last {} records and its end are not written",
              path_, pass_records_.size() + records_not_written_);
    return;
  }
  std::lock_guard<SqliteGate> in_sqlite(sqlite_use_);
  try {
    store_->set_meta("finish.last_records_ms", ms_since(step_start));
    write_tracer_time(true);
    store_->set_meta("tracer_time_clock_ns", std::to_string(self_cost::clock_read_ns()));
    step_start = now_ns();
    // After a failed write the store's rows in memory are not to be trusted:
    // only what is known is added.
    if (!failed_) {
      for (const auto& [table, rows] : store_->finish()) {
        store_->set_meta("rows." + table, std::to_string(rows));
      }
      for (const auto& [id, text] : strings_.take_new()) store_->write_string(id, text);
    }
    store_->set_meta("finish.rows_and_indexes_ms", ms_since(step_start));
    // After the last pass, so that the writer's sites count all of it; the
    // thread's CPU is its own, without the last pass on the exiting thread.
    // The insert thread is done once every row is (what follows is run
    // here), and tells what it used as it ends.
    insert_thread_.stop();
    if (self_cost::every_call) {
      store_->set_meta("self_cost", self_cost::json(thread_usage_, insert_thread_usage_));
    }
    store_->set_meta("producer_wait_ns", std::to_string(buffers_.producer_wait_ns()));
    store_->set_meta("writer_lock_wait_ns", std::to_string(lock_wait_ns_));
    store_->set_meta("dropped_records",
                     std::to_string(buffers_.dropped_records() + records_not_written_));
    store_->set_meta("writer_stalls", std::to_string(buffers_.stalls()));
    std::string gave_up = gave_up_;
    if (uint64_t stalls = buffers_.stalls()) {
      if (!gave_up.empty()) gave_up += "; ";
      gave_up += "records dropped (dropped_records) " + std::to_string(stalls) +
                 " time(s), while the writer made no progress for over " +
                 std::to_string(config_.stall_ms) + " ms";
    }
    if (!gave_up.empty()) store_->set_meta("gave_up", gave_up);
    store_->set_meta("end_ns", std::to_string(now_ns()));
    if (failed_) store_->set_meta("end_reason", gave_up_);
    store_->set_meta("status", failed_ ? "incomplete" : status);
    store_->commit();
    step_start = now_ns();
    store_->checkpoint();
    // Written after the checkpoint it times: a small write to the checkpointed
    // file, left out if another process took the lock meanwhile.
    if (store_->try_begin(std::chrono::milliseconds(100))) {
      store_->set_meta("finish.checkpoint_ms", ms_since(step_start));
      store_->commit();
    }
    log_info("trace written to {}", path_);
  } catch (const std::exception& error) {
    log_error("finishing the trace failed: {}", error.what());
    try {
      store_->roll_back();
    } catch (const std::exception&) {
      // The connection is closed below either way; what was committed stays.
    }
  }
  store_.reset();
  insert_thread_.stop();
}

bool Writer::hold_for_fork(std::chrono::milliseconds limit) {
  auto start = std::chrono::steady_clock::now();
  if (!sqlite_use_.hold_for_fork(limit)) return false;
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (insert_thread_.settle(std::max(limit - spent, std::chrono::milliseconds(0)))) return true;
  sqlite_use_.release_after_fork();
  return false;
}

void Writer::flush_from_signal(int signal_number) {
  if (!thread_.joinable() || on_writer_thread()) return;
  signal_flush_done_ = false;
  signal_flush_requested_ = signal_number;
  // The writer may be asleep for its period first.
  int limit_ms = kSignalWriteLimitMs + config_.flush_period_ms;
  if (!wait_in_handler(signal_flush_done_, limit_ms)) say_signal_end_unwritten(signal_number, limit_ms);
}

// One line on stderr where the process dies with its trace's end unwritten:
// what the writer was doing is the only clue left (the trace cannot say it).
void Writer::say_signal_end_unwritten(int signal_number, int limit_ms) const {
  char text[512];
  SignalLine line{text, sizeof text};
  line.text("apptracer: pid ");
  line.decimal(static_cast<uint64_t>(getpid()));
  line.text(": the trace's end was not written within ");
  line.decimal(static_cast<uint64_t>(limit_ms));
  line.text(" ms of signal ");
  line.decimal(static_cast<uint64_t>(signal_number));
  line.text(" (the writer was ");
  line.text(buffers_.consumer_stage());
  line.text("); the trace keeps what its last pass wrote\n");
  ssize_t written = write(STDERR_FILENO, text, line.length);
  static_cast<void>(written);
}

void Writer::restart_after_fork() {
  // The parent's thread does not exist here, and its SQLite connection must
  // not be used by the child (SQLite forbids carrying one across fork): drop
  // both without running their destructors.
  new (&thread_) std::thread;
  static_cast<void>(store_.release());
  insert_thread_.forget_in_child();
  new (&pending_mutex_) std::mutex;
  sqlite_use_.reset_in_child();  // held by the forking thread (hold_for_fork)
  // The parent's threads may have been changing these when it forked (the
  // writer drains outside the gate; a vector caught growing points at a
  // buffer it had just unmapped): start empty without reading or freeing them.
  new (&pending_devices_) std::vector<DeviceInfo>;
  new (&pending_meta_) std::map<std::string, std::string>;
  new (&pass_records_) std::vector<Record>;
  new (&pass_starts_) std::deque<uint64_t>;
  new (&path_) std::string;
  new (&gave_up_) std::string;
  tracer_time_.restart(now_ns());
  failed_ = false;
  lock_deadline_ns_ = 0;
  records_not_written_ = 0;
  lock_wait_ns_ = 0;
  records_in_hand_ = false;
  open_not_before_ns_ = now_ns() + kForkedChildOpenDelayNs;
  start();
}

}  // namespace apptracer
