// Fork: the forking thread holds the writer out of SQLite and the shared
// tables still, so the child inherits no lock held and nothing half changed;
// the child starts over with a trace file of its own.
#include <unistd.h>

#include <chrono>

#include "base/config.h"
#include "base/log.h"
#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "capture/activity_flusher.h"
#include "collectives/collective_capture.h"
#include "host/host_blocks.h"
#include "inject/lifecycle.h"
#include "store/writer.h"

namespace apptracer::inject {

namespace {

// Per forking thread, so not in TracerState: another thread may finish the
// trace meanwhile.
thread_local bool writer_held_for_fork = false;
// The writer stayed inside SQLite for the whole fork wait: the child may
// inherit SQLite's global locks held, so it must not use SQLite at all.
thread_local bool fork_without_writer = false;
// The forking thread holds the allocation registry and the string table, so
// that no other thread's change to them is copied into the child half done.
thread_local bool tables_held_for_fork = false;

// The child of a fork that could not wait for the writer: nothing it
// records is kept, and it says so once.
void leave_child_untraced() {
  host_blocks::disable();
  state.buffers->reset_after_fork();
  allocations().reset_after_fork();
  strings().reset_after_fork();
  state.buffers->close();
  state.finished = true;
  state.final_write_done = true;
  log_warn("pid {}: forked while the trace writer was inside SQLite for over {} ms; this "
           "process is not traced (APPTRACER_FORK_WAIT_MS sets the wait)",
           getpid(), Config::from_environment().fork_wait_ms);
}

}  // namespace

void before_fork() {
  fork_without_writer = false;
  writer_held_for_fork = state.started && !state.finished;
  if (!writer_held_for_fork) return;
  auto limit = std::chrono::milliseconds(Config::from_environment().fork_wait_ms);
  if (!state.writer->hold_for_fork(limit)) {
    writer_held_for_fork = false;
    fork_without_writer = true;
  }
  // After the gate: the writer takes these inside it, briefly, and never
  // waits for the forking thread while holding them.
  allocations().lock_all_shards();
  strings().lock_for_fork();
  tables_held_for_fork = true;
}

void after_fork_in_parent() {
  if (tables_held_for_fork) {
    strings().unlock_after_fork_in_parent();
    allocations().unlock_all_shards();
  }
  tables_held_for_fork = false;
  if (writer_held_for_fork) state.writer->release_after_fork_in_parent();
  writer_held_for_fork = false;
}

void after_fork_in_child() {
  writer_held_for_fork = false;
  tables_held_for_fork = false;  // their mutexes are made anew below
  if (!state.started) return;
  state.owner_pid = getpid();
  if (state.activity_flusher) state.activity_flusher->forget_after_fork();
  if (fork_without_writer) return leave_child_untraced();
  state.finished = false;
  state.final_write_done = false;
  state.signal_held_during_finish = 0;
  state.activity_usable = false;
  state.buffers->reset_after_fork();
  allocations().reset_after_fork();
  collectives_after_fork();
  strings().reset_after_fork();
  // CUPTI's activity machinery stayed in the parent: flushing it here hangs.
  state.writer->set_activity_request(nullptr);
  state.writer->set_gpu_activity(false);
  state.writer->restart_after_fork();
  record_process_meta(Config::from_environment());
  state.writer->set_meta("gpu_activity", "unavailable: CUPTI activity does not survive fork");
  // The parent's signal handlers, installed when it started, are inherited.
}

}  // namespace apptracer::inject
