// `apptracer`: records traces and analyzes them.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "apptracer/version.h"
#include "analyzer/command_suggestion.h"
#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/trace/trace_file.h"

namespace {

// Standard output is a pipe or socket whose reader went away
// (`apptracer query t.db "..." | head -1`).
bool standard_output_closed() {
  pollfd out{STDOUT_FILENO, 0, 0};
  return poll(&out, 1, 0) == 1 && (out.revents & POLLERR) != 0;
}

// A reader that went away ends the command quietly, as it ends `cat`: writes
// fail with EPIPE instead of SIGPIPE killing the process. A handler rather
// than SIG_IGN, because a handler is reset by exec: a program `record` runs
// gets SIGPIPE as it would untraced.
void write_errors_instead_of_sigpipe() {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
  // The first failed write stops the command (a query streaming rows would
  // otherwise run to its end, or forever).
  std::cout.exceptions(std::ios::badbit);
}

// A full disk on standard output fails the command like any other write
// error (`apptracer stats t.db > /dev/full`); a closed pipe does not.
int failed_standard_output(int code) {
  if (standard_output_closed()) return code;
  std::fprintf(stderr, "apptracer: writing standard output failed: %s\n", std::strerror(errno));
  return code == 0 ? 1 : code;
}

int check_standard_output(int code) {
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return failed_standard_output(code);
  return code;
}

std::vector<std::string> parsed_input_files() {
  std::vector<std::string> paths;
  for (const CLI::Option* option : apptracer::input_file_options()) {
    for (const std::string& path : option->results()) paths.push_back(path);
  }
  return paths;
}

}  // namespace

int main(int argc, char** argv) {
  write_errors_instead_of_sigpipe();
  CLI::App app{"apptracer: trace CUDA programs and rebuild their data-flow graph"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("apptracer ") + apptracer::kVersion);
  // Errors are one line, like every other apptracer error; a mistyped
  // command gets the one it was probably meant to be.
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    std::string meant = apptracer::command_suggestion(*failed, error);
    return "apptracer: " + (meant.empty() ? apptracer::one_line(error.what()) : meant) +
           " (see --help)\n";
  });
  apptracer::CommandResult result;
  apptracer::add_record_command(app, result);
  apptracer::add_info_command(app, result);
  apptracer::add_stats_command(app, result);
  apptracer::add_timeline_command(app, result);
  apptracer::add_query_command(app, result);
  apptracer::add_merge_command(app, result);
  apptracer::add_dvdg_command(app, result);
  apptracer::add_links_command(app, result);
  apptracer::add_whatif_command(app, result);
  apptracer::add_diff_command(app, result);

  apptracer::add_diagnose_command(app, result);
  apptracer::add_report_command(app, result);
  apptracer::add_schema_command(app, result);
  try {
    app.parse(argc, argv);
    apptracer::declare_command_inputs(parsed_input_files());
    return check_standard_output(result ? result() : 0);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::ios_base::failure&) {
    return failed_standard_output(0);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "apptracer: %s\n", apptracer::one_line(error.what()).c_str());
    return 1;
  }
}
