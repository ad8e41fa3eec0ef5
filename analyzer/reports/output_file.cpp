#include "output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace apptracer {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  return stat(a.c_str(), &x) == 0 && stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const std::string& input)
    : path_(path), temporary_(path + ".tmp" + std::to_string(getpid())) {
  if (path == input || same_file(path, input)) {
    throw std::runtime_error(path + ": refusing to overwrite the input trace; choose another -o");
  }
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error(path + ": cannot create output file");
}

OutputFile::~OutputFile() {
  if (!committed_) {
    out_.close();
    std::remove(temporary_.c_str());
  }
}

void OutputFile::commit() {
  out_.flush();
  out_.close();
  if (!out_) throw std::runtime_error(path_ + ": write failed (disk full?)");
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error(path_ + ": cannot move the finished file into place");
  }
  committed_ = true;
}

std::string replace_extension(const std::string& trace, const std::string& extension) {
  size_t slash = trace.rfind('/');
  size_t dot = trace.rfind('.');
  bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return (has_extension ? trace.substr(0, dot) : trace) + extension;
}

}  // namespace apptracer
