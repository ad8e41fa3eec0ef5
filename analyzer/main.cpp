// `apptracer`: records traces and analyzes them.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "output_file.h"
#include "trace_file.h"

namespace {

// A full disk or a closed pipe on standard output fails the command like any
// other write error (`apptracer stats t.db > /dev/full`).
int check_standard_output(int code) {
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "apptracer: writing standard output failed: %s\n", std::strerror(errno));
    return code == 0 ? 1 : code;
  }
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
  CLI::App app{"apptracer: trace CUDA programs and rebuild their data-flow graph"};
  app.require_subcommand(1);
  // Errors are one line, like every other apptracer error.
  app.failure_message([](const CLI::App*, const CLI::Error& error) {
    return "apptracer: " + apptracer::one_line(error.what()) + " (see --help)\n";
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

  apptracer::add_diagnose_command(app, result);
  apptracer::add_report_command(app, result);
  apptracer::add_schema_command(app, result);
  try {
    app.parse(argc, argv);
    apptracer::declare_command_inputs(parsed_input_files());
    return check_standard_output(result ? result() : 0);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "apptracer: %s\n", apptracer::one_line(error.what()).c_str());
    return 1;
  }
}
