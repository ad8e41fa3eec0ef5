// `apptracer query TRACE "SQL" [--format table|csv|json] [-o FILE]`: SQL on a trace,
// opened read-only; a statement that would write is refused.
#include <iostream>
#include <memory>
#include <string>

#include "analyzer/commands.h"
#include "analyzer/query/sql_query.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

struct QueryOptions {
  std::string trace;
  std::string sql;
  std::shared_ptr<OutputOptions> output;
  int64_t memory_limit_mib = kDefaultQueryMemoryMib;
  int64_t timeout_s = kDefaultQueryTimeoutS;
};

// A CLI check: an integer from 1 to `most` (CLI's own range checks print
// doubles' ranges with hundreds of digits).
CLI::Validator from_one_to(int64_t most, const std::string& unit) {
  return CLI::Validator(
      [most, unit](std::string& text) -> std::string {
        int64_t value = 0;
        if (CLI::detail::lexical_cast(text, value) && value >= 1 && value <= most) return "";
        return "give 1 to " + std::to_string(most) + " " + unit + ", not '" + text + "'";
      },
      "");
}

int run_query(const QueryOptions& options) {
  PrintedOutput printed(*options.output, {options.trace});
  Database db = open_trace(options.trace, TraceAccess::ReadOnly);
  limit_query_memory(options.memory_limit_mib);
  try {
    TableStream out(printed.stream(), parse_output_format(options.output->format));
    run_read_only_query(db, options.sql, out, options.timeout_s);
    out.finish();
    printed.commit();
  } catch (const QueryError& error) {
    throw QueryError(options.trace + ": " + error.what());
  }
  return 0;
}

}  // namespace

void add_query_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("query", "Run one read-only SQL statement on a trace");
  auto options = std::make_shared<QueryOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  cmd->add_option("sql", options->sql, "SQL statement (SELECT, WITH, read-only PRAGMA)")->required();
  options->output = printed_results(cmd);
  cmd->add_option("--memory-limit", options->memory_limit_mib,
                  "Memory the query may use, in MiB (sorts, DISTINCT, recursive queries; default " +
                      std::to_string(kDefaultQueryMemoryMib) + ")")
      ->type_name("MIB")
      ->check(from_one_to(kMostQueryMemoryMib, "MiB"));
  cmd->add_option("--timeout", options->timeout_s,
                  "Seconds the query may run before it is stopped (default " +
                      std::to_string(kDefaultQueryTimeoutS) + ")")
      ->type_name("SECONDS")
      ->check(from_one_to(kMostQueryTimeoutS, "seconds"));
  cmd->callback([&result, options] { result = [options] {
      return reading_trace(options->trace, [&] { return run_query(*options); });
    }; });
}

}  // namespace apptracer
