// `apptracer`: records traces and analyzes them.
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apptracer/version.h"
#include "analyzer/command_suggestion.h"
#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/output_options.h"
#include "analyzer/trace/trace_file.h"

namespace {

// The exit status of a command line that cannot work as given (2, as for
// every command-line tool); 1 is every other error.
constexpr int kUsageError = 2;

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

// The command table: every command, in the order --help lists them, and its
// group (commands.h).
struct CommandEntry {
  void (*add)(CLI::App&, apptracer::CommandResult&);
  const char* group;
};

constexpr CommandEntry kCommands[] = {
    {apptracer::add_record_command, apptracer::kWritesFiles},
    {apptracer::add_info_command, apptracer::kPrintsResults},
    {apptracer::add_stats_command, apptracer::kPrintsResults},
    {apptracer::add_timeline_command, apptracer::kWritesFiles},
    {apptracer::add_query_command, apptracer::kPrintsResults},
    {apptracer::add_merge_command, apptracer::kWritesFiles},
    {apptracer::add_dvdg_command, apptracer::kWritesFiles},
    {apptracer::add_links_command, apptracer::kWritesFiles},
    {apptracer::add_whatif_command, apptracer::kPrintsResults},
    {apptracer::add_diff_command, apptracer::kPrintsResults},
    {apptracer::add_diagnose_command, apptracer::kPrintsResults},
    {apptracer::add_report_command, apptracer::kWritesFiles},
    {apptracer::add_schema_command, apptracer::kWritesFiles},
};

std::vector<CLI::App*> all_commands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

// `apptracer help [COMMAND]`: the same as `apptracer [COMMAND] --help`.
void add_help_command(CLI::App& app, apptracer::CommandResult& result) {
  auto* cmd = app.add_subcommand("help", "Show the commands, or one command's options");
  cmd->group("Help");
  auto name = std::make_shared<std::string>();
  cmd->add_option("command", *name, "The command to show");
  cmd->callback([&app, &result, name] {
    result = [&app, name] {
      if (name->empty()) {
        // app.help() would show the help of the command running: `help`.
        std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
        return 0;
      }
      for (CLI::App* command : all_commands(app)) {
        if (command->get_name() == *name) {
          std::cout << command->help(app.get_name());
          return 0;
        }
      }
      std::vector<std::string> names;
      for (CLI::App* command : all_commands(app)) names.push_back(command->get_name());
      std::string meant = apptracer::closest_command(*name, names);
      throw apptracer::UsageError("'" + *name + "' is not a command" +
                                  (meant.empty() ? "" : "; did you mean '" + meant + "'?"));
    };
  });
}

}  // namespace

int main(int argc, char** argv) {
  write_errors_instead_of_sigpipe();
  // Blocks of 128 KiB and more mapped each on its own, so that what is freed
  // leaves the resident set: glibc otherwise raises this threshold to the
  // size of each such block freed (up to 32 MiB), and the vectors under it
  // that a phase frees stay in the heap (60-70 MiB of diagnose's and the
  // report's peaks on a million kernels).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  // Named, so the usage line says `apptracer`, not the path it was run by.
  CLI::App app{"apptracer: trace CUDA programs and rebuild their data-flow graph", "apptracer"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", std::string("apptracer ") + apptracer::kVersion);
  // Errors are one line, like every other apptracer error; a mistyped
  // command gets the one it was probably meant to be.
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    std::string meant = apptracer::command_suggestion(*failed, error);
    return "apptracer: " + (meant.empty() ? apptracer::one_line(error.what()) : meant) +
           " (see --help)\n";
  });
  apptracer::CommandResult result;
  for (const CommandEntry& command : kCommands) {
    command.add(app, result);
    all_commands(app).back()->group(command.group);
  }
  add_help_command(app, result);
  apptracer::accept_comma_lists(app);
  try {
    app.parse(argc, argv);
    apptracer::resolve_output_options();
    apptracer::declare_command_inputs(parsed_input_files());
    return check_standard_output(result ? result() : 0);
  } catch (const CLI::ParseError& error) {
    // Help and the version exit 0; a command line CLI11 cannot parse is a
    // usage error, exit 2 as for every command-line tool.
    return app.exit(error) == 0 ? 0 : kUsageError;
  } catch (const apptracer::UsageError& error) {
    std::fprintf(stderr, "apptracer: %s (see --help)\n", apptracer::one_line(error.what()).c_str());
    return kUsageError;
  } catch (const std::ios_base::failure&) {
    return failed_standard_output(0);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "apptracer: %s\n", apptracer::one_line(error.what()).c_str());
    return 1;
  }
}
