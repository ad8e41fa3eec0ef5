// The output options every command takes, declared once (docs/cli.md):
//   - a command that prints results: --format table|csv|json (--json and
//     --csv are its aliases), -o FILE (default standard output), -f/--force;
//   - a command that writes files: -o FILE and -f/--force, and --format where
//     it writes several kinds of file.
// Where -o's extension names a format (.csv, .json, .pftrace, .dot, ...),
// that format is the one written unless --format says otherwise; a --format
// the extension contradicts is refused as a usage error.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/output_file.h"

namespace apptracer {

// A command line that cannot work as given (a format -o contradicts, a
// missing choice): main says so in one line and exits 2, as for an unknown
// option.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kind of output a command can write, and the extensions that name it.
struct FileFormat {
  std::string name;
  std::vector<std::string> extensions;  // ".json"
};

struct OutputOptions {
  CLI::App* command = nullptr;
  std::string path;      // -o as given; "" when not given
  std::string format;    // after parsing: --format, else -o's extension's, else the default
  bool force = false;    // -f/--force
  CLI::Option* output_option = nullptr;
  CLI::Option* force_option = nullptr;

  // Declared by the command; read by resolve().
  std::vector<FileFormat> formats;
  std::string default_format;  // "": none (-o's extension or --format must say)
  std::string format_given;    // --format (or an alias) as given
  std::string alias_given;     // --json / --csv, kept apart to catch `--format csv --json`
};

// table, csv and json: what a command that prints results can print.
const std::vector<FileFormat>& result_formats();

// Declares --format table|csv|json (with aliases --json, --csv), -o FILE and
// -f/--force on a command that prints results.
std::shared_ptr<OutputOptions> printed_results(CLI::App* command);

// Declares -o FILE (described by `output_help`) and -f/--force on a command
// that writes files, and --format when it can write several `formats`: the
// first is the default unless `has_default_format` is false (then -o's
// extension or --format must say).
std::shared_ptr<OutputOptions> written_files(CLI::App* command, const std::string& output_help,
                                             const std::vector<FileFormat>& formats = {},
                                             bool has_default_format = true);

// Settles the format of every output option of the command that was parsed:
// --format, else -o's extension's, else the default. Throws UsageError when
// they disagree, or when no format can be told. main calls it after parsing.
void resolve_output_options();

// The format -o's extension names among `formats`, or "" when it names none.
std::string format_named_by(const std::string& path, const std::vector<FileFormat>& formats);

// Where a command that prints results writes: -o's file (by OutputFile's
// rules) or standard output.
class PrintedOutput {
 public:
  PrintedOutput(const OutputOptions& options, const std::vector<std::string>& inputs);
  std::ostream& stream() { return file_.stream(); }
  void commit() { file_.commit(); }

 private:
  OutputFile file_;
};

// Declares that the values of a repeatable `option` may hold commas (a path
// and its bandwidths, an NVTX range's name), so a comma does not split them
// as it does every other repeatable option's (accept_comma_lists). Returns it.
CLI::Option* values_hold_commas(CLI::Option* option);

// `-r kernels,copies` as `-r kernels -r copies`: every repeatable option of
// every command of `app`, except those values_hold_commas names.
void accept_comma_lists(CLI::App& app);

}  // namespace apptracer
