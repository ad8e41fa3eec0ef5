#include "analyzer/output_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "analyzer/removed_on_signal.h"

namespace apptracer {

namespace {

std::runtime_error error(const std::string& path, const std::string& what) {
  return std::runtime_error((path == "-" ? std::string("standard output") : path) + ": " + what);
}

// A new empty file from `pattern` (ending in XXXXXX), closed, removed if
// the user stops the command; its name.
std::string make_temporary(const std::string& pattern, const std::string& for_path) {
  std::string name = create_removed_on_signal(pattern);
  if (name.empty()) {
    throw error(for_path, std::string("cannot create a temporary file (") + std::strerror(errno) +
                              ") in " + pattern.substr(0, pattern.rfind('/') + 1));
  }
  return name;
}

void remove_temporary(const std::string& name) {
  unlink(name.c_str());
  keep_on_signal(name);
}

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::vector<std::string>& command_inputs() {
  static std::vector<std::string> inputs;
  return inputs;
}

void check_not_an_input(const std::string& path, const struct stat& output,
                        std::vector<std::string> inputs) {
  inputs.insert(inputs.end(), command_inputs().begin(), command_inputs().end());
  for (const std::string& input : inputs) {
    struct stat info {};
    if (stat(input.c_str(), &info) == 0 && info.st_dev == output.st_dev &&
        info.st_ino == output.st_ino) {
      throw error(path, "is " + (input == path ? std::string("an input") : "the input " + input) +
                            " of this command; choose another output");
    }
  }
}

mode_t default_file_mode() {
  mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

// rename() that fails instead of replacing a file someone created meanwhile.
bool rename_without_replacing(const std::string& from, const std::string& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  // A file system without RENAME_NOREPLACE: link() refuses an existing name too.
  if (link(from.c_str(), to.c_str()) != 0) return false;
  unlink(from.c_str());
  return true;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs, bool force)
    : path_(path), target_(path) {
  if (path.empty()) throw std::runtime_error("an output path is empty");
  if (path == "-") {
    kind_ = Target::Stream;
    // `... --json - >> t.db` would append to the trace.
    struct stat out {};
    if (fstat(STDOUT_FILENO, &out) == 0) check_not_an_input(path, out, inputs);
    return;
  }
  struct stat link_info {};
  if (lstat(path.c_str(), &link_info) == 0 && S_ISLNK(link_info.st_mode)) {
    char resolved[PATH_MAX];
    if (!realpath(path.c_str(), resolved)) {
      throw error(path, "a symbolic link to a missing file; remove it or choose another output");
    }
    target_ = resolved;
  }
  struct stat info {};
  if (stat(target_.c_str(), &info) != 0) return;  // a new file
  check_not_an_input(path, info, inputs);
  if (S_ISDIR(info.st_mode)) throw error(path, "is a directory; name a file");
  if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) || S_ISFIFO(info.st_mode)) {
    kind_ = Target::Stream;
    return;
  }
  if (!S_ISREG(info.st_mode)) throw error(path, "is not a regular file, device or FIFO");
  if (!force) throw error(path, "already exists; use --force to replace it");
  replaces_ = true;
}

OutputFile::~OutputFile() {
  if (file_.is_open()) file_.close();
  if (!committed_ && !temporary_.empty()) remove_temporary(temporary_);
}

std::ostream& OutputFile::stream() {
  if (kind_ == Target::Stream) {
    if (path_ == "-") return std::cout;
    file_.open(target_, std::ios::binary | std::ios::out);
  } else {
    temporary_ = make_temporary(directory_of(target_) + "/." + base_name(target_) + ".tmp-XXXXXX",
                                path_);
    file_.open(temporary_, std::ios::binary | std::ios::trunc);
  }
  if (!file_) throw error(path_, std::string("cannot open for writing: ") + std::strerror(errno));
  return file_;
}

const std::string& OutputFile::file_path() {
  if (temporary_.empty()) {
    if (kind_ == Target::Stream) {
      const char* tmpdir = std::getenv("TMPDIR");
      temporary_ = make_temporary(
          std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/apptracer-output-XXXXXX", path_);
    } else {
      temporary_ = make_temporary(
          directory_of(target_) + "/." + base_name(target_) + ".tmp-XXXXXX", path_);
    }
  }
  return temporary_;
}

void OutputFile::commit() {
  if (kind_ == Target::Stream && !temporary_.empty()) {
    // Written by name: copied into the stream target.
    std::ifstream written(temporary_, std::ios::binary);
    std::ostream& out = stream();
    char buffer[1 << 16];
    while (written.read(buffer, sizeof buffer) || written.gcount() > 0) {
      out.write(buffer, written.gcount());
    }
  }
  if (path_ == "-") {
    std::cout.flush();
    if (!std::cout) throw error(path_, std::string("write failed: ") + std::strerror(errno));
  } else if (file_.is_open()) {
    file_.close();
    if (!file_) throw error(path_, "write failed (disk full?)");
  }
  if (kind_ == Target::Stream) {
    if (!temporary_.empty()) remove_temporary(temporary_);
    committed_ = true;
    return;
  }
  struct stat old {};
  mode_t mode = replaces_ && stat(target_.c_str(), &old) == 0 ? (old.st_mode & 07777)
                                                               : default_file_mode();
  chmod(temporary_.c_str(), mode);
  bool moved = replaces_ ? std::rename(temporary_.c_str(), target_.c_str()) == 0
                         : rename_without_replacing(temporary_, target_);
  if (!moved) {
    if (errno == EEXIST) throw error(path_, "was created while this ran; use --force to replace it");
    throw error(path_, std::string("cannot move the finished file into place: ") +
                           std::strerror(errno));
  }
  keep_on_signal(temporary_);
  committed_ = true;
}

void declare_command_inputs(const std::vector<std::string>& paths) {
  command_inputs() = paths;
  struct stat out {};
  if (fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode)) check_not_an_input("-", out, {});
}

std::string replace_extension(const std::string& trace, const std::string& extension) {
  size_t slash = trace.rfind('/');
  size_t dot = trace.rfind('.');
  bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return (has_extension ? trace.substr(0, dot) : trace) + extension;
}

}  // namespace apptracer
