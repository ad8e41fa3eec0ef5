#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "analyzer/dvdg/exporters.h"

extern char** environ;

namespace apptracer::dvdg {

namespace {

bool dot_installed() {
  const char* path = std::getenv("PATH");
  std::string directories = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= directories.size()) {
    size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    std::string candidate = directories.substr(start, end - start) + "/dot";
    if (access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// A temporary file holding the DOT text, removed when this goes away.
class TemporaryDotFile {
 public:
  explicit TemporaryDotFile(const std::string& text) {
    const char* directory = std::getenv("TMPDIR");
    path_ = std::string(directory && *directory ? directory : "/tmp") + "/apptracer-dvdg-XXXXXX";
    int fd = mkstemp(path_.data());
    if (fd < 0)
      throw std::runtime_error("cannot create a temporary file in " +
                               path_.substr(0, path_.rfind('/')));
    bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    if (!written) {
      unlink(path_.c_str());
      throw std::runtime_error("cannot write the temporary file " + path_);
    }
  }
  ~TemporaryDotFile() { unlink(path_.c_str()); }
  TemporaryDotFile(const TemporaryDotFile&) = delete;
  TemporaryDotFile& operator=(const TemporaryDotFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

// `dot` reads a file rather than a pipe, so a `dot` that fails early cannot
// kill us with SIGPIPE, and no shell sees the file names.
void render_svg(const std::string& dot_text, const std::string& svg_path) {
  if (!dot_installed()) {
    throw std::runtime_error(
        "--svg needs Graphviz's 'dot' (apt-get install graphviz); use --dot instead");
  }
  // Checked here so a bad path is our one-line error, not Graphviz's.
  if (!std::ofstream(svg_path)) throw std::runtime_error("cannot write " + svg_path);
  TemporaryDotFile input(dot_text);
  std::string output_flag = "-o" + svg_path;
  char* const argv[] = {const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), output_flag.data(),
                        const_cast<char*>(input.path().c_str()), nullptr};
  pid_t child = 0;
  if (posix_spawnp(&child, "dot", nullptr, nullptr, argv, environ) != 0) {
    throw std::runtime_error("cannot run 'dot' to render " + svg_path);
  }
  int status = 0;
  if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("'dot' failed to render " + svg_path);
  }
}

}  // namespace apptracer::dvdg
