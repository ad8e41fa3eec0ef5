// `apptracer`: records traces and analyzes them.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "trace_file.h"

int main(int argc, char** argv) {
  CLI::App app{"apptracer: trace CUDA programs and rebuild their data-flow graph"};
  app.require_subcommand(1);
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
  try {
    app.parse(argc, argv);
    return result ? result() : 0;
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "apptracer: %s\n", error.what());
    return 1;
  }
}
