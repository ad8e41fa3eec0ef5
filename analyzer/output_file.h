// Every file an analyzer command writes goes through OutputFile, so all of
// them follow one set of rules (docs/cli.md, "Output files"):
//   - never one of the command's inputs (its traces, system files: those
//     given to OutputFile and those its command line declared): compared as
//     files (device and inode), not by name, so a hard link, a symbolic link
//     or another spelling is caught too;
//   - an existing file is replaced only with --force;
//   - a regular file (or a new name) is written to a temporary file in the
//     same directory and renamed over the target only when complete, so a
//     failed run never leaves a truncated file; a symbolic link keeps pointing
//     where it did and its target is replaced;
//   - "-" is standard output, and a device or FIFO is written straight
//     through: it is never replaced by a regular file.
#pragma once

#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace apptracer {

class OutputFile {
 public:
  // Checks the rules and prepares the write. Throws std::runtime_error with a
  // one-line message naming `path`.
  OutputFile(const std::string& path, const std::vector<std::string>& inputs, bool force);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Write the output either to stream() or, for a tool that writes by name
  // (SQLite, Graphviz), to the file at file_path(); not both.
  std::ostream& stream();
  const std::string& file_path();

  // Flushes and puts the output in place; throws on any write error.
  void commit();

  const std::string& path() const { return path_; }

 private:
  enum class Target { NewOrRegular, Stream };

  std::string path_;      // as the user gave it
  std::string target_;    // where it goes: `path_`, or the file a symlink names
  Target kind_ = Target::NewOrRegular;
  bool replaces_ = false;  // the target exists (and --force was given)
  std::string temporary_;  // regular targets: beside the target; streams: under TMPDIR
  std::ofstream file_;
  bool committed_ = false;
};

// The files the running command reads, as its command line names them (main
// passes those of the options declared with input_files, commands.h). Every
// OutputFile is checked against them as well as against its own `inputs`;
// so is standard output at once (`apptracer stats t.db >> t.db`). Throws
// std::runtime_error naming the input.
void declare_command_inputs(const std::vector<std::string>& paths);

// `trace` with its extension (if any) replaced by `extension` (".pftrace").
std::string replace_extension(const std::string& trace, const std::string& extension);

}  // namespace apptracer
