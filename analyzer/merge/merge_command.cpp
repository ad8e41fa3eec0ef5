// `apptracer merge A.db B.db ... -o ALL.db [--force]`: one trace from the
// traces of several processes (see merge.h for what the result holds).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/commands.h"
#include "analyzer/merge/merge.h"
#include "analyzer/progress.h"

namespace apptracer {

namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false;
};

int run_merge(const MergeOptions& options) {
  Progress progress("merge");
  MergeSummary summary = merge_traces(options.inputs, options.output, options.force, progress);
  std::fprintf(stderr, "apptracer: merged %lld processes (%lld rows) into %s\n",
               static_cast<long long>(summary.processes), static_cast<long long>(summary.rows),
               options.output.c_str());
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("merge", "Merge the traces of several processes into one");
  auto options = std::make_shared<MergeOptions>();
  input_files(cmd->add_option("traces", options->inputs, "Trace databases, one per process"))->required();
  auto output = written_files(cmd, "Merged trace to create");
  output->output_option->required();
  cmd->callback([&result, options, output] {
    options->output = output->path;
    options->force = output->force;
    result = [options] { return run_merge(*options); };
  });
}

}  // namespace apptracer
