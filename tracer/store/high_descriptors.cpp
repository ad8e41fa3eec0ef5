#include "store/high_descriptors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/inside_tracer.h"

namespace apptracer {

namespace {

using OpenFunction = int (*)(const char*, int, int);
OpenFunction sqlite_open = nullptr;

// The claimed file the next open on this thread must be (ClaimedFileCheck).
thread_local const ClaimedOutput* expected_file = nullptr;
thread_local bool refused_file = false;

bool is_expected_file(int fd) {
  struct stat info {};
  return fstat(fd, &info) == 0 && static_cast<uint64_t>(info.st_dev) == expected_file->device &&
         static_cast<uint64_t>(info.st_ino) == expected_file->inode;
}

int open_high(const char* path, int flags, int mode) {
  int fd = sqlite_open(path, flags, mode);
  if (fd >= 0 && expected_file && thread_inside_tracer) {
    bool expected = is_expected_file(fd);
    expected_file = nullptr;
    if (!expected) {
      close(fd);
      refused_file = true;
      errno = EEXIST;
      return -1;
    }
  }
  if (fd < 0 || !thread_inside_tracer || fd >= tracer_descriptor_floor()) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, tracer_descriptor_floor());
  if (high < 0) return fd;  // no room up there: keep it where it is
  close(fd);
  return high;
}

}  // namespace

ClaimedFileCheck::ClaimedFileCheck(const ClaimedOutput& claimed) {
  expected_file = &claimed;
  refused_file = false;
}

ClaimedFileCheck::~ClaimedFileCheck() { expected_file = nullptr; }

bool ClaimedFileCheck::refused() const { return refused_file; }

int tracer_descriptor_floor() {
  // Below the soft limit, so it always fits; bash keeps its own descriptors
  // from 10 up (255 for a script), and programs take the lowest free ones.
  static const int floor = [] {
    rlimit limit{};
    rlim_t soft = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
    if (soft == RLIM_INFINITY) soft = 1 << 20;
    return static_cast<int>(std::min<rlim_t>(soft - soft / 8, 900));
  }();
  return floor;
}

bool keep_sqlite_descriptors_high() {
  static bool installed = [] {
    sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    if (!vfs || vfs->iVersion < 3 || !vfs->xGetSystemCall || !vfs->xSetSystemCall) return false;
    sqlite_open = reinterpret_cast<OpenFunction>(vfs->xGetSystemCall(vfs, "open"));
    if (!sqlite_open) return false;
    return vfs->xSetSystemCall(vfs, "open", reinterpret_cast<sqlite3_syscall_ptr>(open_high)) ==
           SQLITE_OK;
  }();
  return installed;
}

}  // namespace apptracer
