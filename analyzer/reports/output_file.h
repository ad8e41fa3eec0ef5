// Writing an output file all at once: into a temporary file next to it,
// renamed over the target only when complete, so a failed run never leaves a
// truncated file behind. Refuses to write over the input trace.
#pragma once

#include <fstream>
#include <string>

namespace apptracer {

class OutputFile {
 public:
  // Throws std::runtime_error when `path` is `input` or cannot be created.
  OutputFile(const std::string& path, const std::string& input);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& temporary_path() const { return temporary_; }
  // Flushes and moves the file into place; throws on any write error.
  void commit();

 private:
  std::string path_;
  std::string temporary_;
  std::ofstream out_;
  bool committed_ = false;
};

// `trace` with its extension (if any) replaced by `extension` (".pftrace").
std::string replace_extension(const std::string& trace, const std::string& extension);

}  // namespace apptracer
