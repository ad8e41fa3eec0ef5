// What the files of inject/ share: the tracer's process-wide state, held in
// one place, and starting and finishing, which every route calls.
//
//   injection_routes.cpp  LD_PRELOAD's constructor, CUDA_INJECTION64_PATH's
//                         and NVTX's entry points, in-process capture
//   lifecycle.cpp         start() and finish()
//   fatal_signals.cpp     one last flush when a signal ends the process
//   signal_dispositions.cpp  sigaction and signal, interposed: the program
//                         sees and sets its own actions, ours stay in place
//   fork.cpp              the writer held across fork; the child's own trace
//   exit_exec.cpp         _exit and the exec family finish the trace first
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <mutex>

#include "base/config.h"

namespace apptracer {

class RecordBuffers;
class Writer;
class ActivityFlusher;
struct CaptureContext;

namespace inject {

struct TracerState {
  RecordBuffers* buffers = nullptr;
  Writer* writer = nullptr;
  ActivityFlusher* activity_flusher = nullptr;
  CaptureContext* capture_context = nullptr;
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  std::atomic<bool> final_write_done{false};  // finish() has written the trace's end
  // A termination signal that came while finish() wrote, sent again once written.
  std::atomic<int> signal_held_during_finish{0};
  std::atomic<pid_t> owner_pid{0};
  bool callbacks_active = false;
  // CUPTI's activity machinery does not survive fork: in a child, flushing it
  // waits forever for a worker thread that only the parent has (seen on the
  // H100). Children record API calls; their GPU times are not available.
  bool activity_usable = false;
  // Whether the program's malloc calls reach host_allocator.cpp (preloaded).
  bool allocator_hooked = false;
  // --exact is recording (tracer/exact/).
  bool exact_active = false;
  // Started by apptracer_capture_start rather than at load or cuInit.
  bool attached_late = false;
  // Why start() left the process untraced, for apptracer_capture_start to say
  // ("" while tracing).
  const char* not_tracing_reason = "";
  std::atomic<bool> signal_handlers_installed{false};
  // By signal number, for the signals ours handles: the program's own action
  // (what it set, or what was there before ours), which ours hands on to.
  struct sigaction program_actions[NSIG]{};
  std::atomic<bool> signal_handled[NSIG]{};
  // Preloaded: APPTRACER_OUTPUT as the process was given it, and the entry
  // an exec'd program gets instead ("APPTRACER_OUTPUT=" and the path made
  // absolute where the process started); null otherwise (exit_exec.cpp).
  const char* given_output = nullptr;
  const char* exec_output_entry = nullptr;
  // In-process capture's start and stop, one at a time.
  std::mutex capture_mutex;
};

// Constant-initialized (no constructor runs): LD_PRELOAD's constructor may
// start the tracer before the dynamic initializers of other files have run.
extern __constinit TracerState state;

// Starts tracing once, whichever route comes first; later calls do nothing.
void start(const Config& config);
// Writes the trace's end with `status`, once, in the process that started it.
void finish(const char* status);
// Describes the process in the trace's meta (again in a forked child).
void record_process_meta(const Config& config);
// Installed when tracing starts (fatal_signals.cpp).
void install_signal_handlers_once();
// Sends again the termination signal held while finish() wrote, if one was
// (fatal_signals.cpp).
void resend_held_signal();
// Whether sigaction, called by this process, reads and sets the program's
// own action for `signal_number` while ours stays installed (not in a vfork
// child, which shares our memory but not our dispositions).
bool keeps_program_action(int signal_number);
// The program's action for a signal ours handles, and what the kernel gets
// for it: ours, or SIG_IGN itself.
void set_program_action(int signal_number, const struct sigaction& action);
// libc's sigaction, past the interposed one.
int real_sigaction(int signal_number, const struct sigaction* action, struct sigaction* previous);
// pthread_atfork's handlers.
void before_fork();
void after_fork_in_parent();
void after_fork_in_child();

}  // namespace inject
}  // namespace apptracer
