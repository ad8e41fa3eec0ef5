#include "analyzer/trace/read_only_vfs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace apptracer {

namespace {

constexpr const char* kVfsName = "apptracer-read-only";
// SQLite's lock bytes (os_unix.c): a writer in a transaction holds RESERVED
// on the database; every connection to a WAL database holds the DMS byte of
// its -shm file.
constexpr off_t kReservedByte = 0x40000001;
constexpr off_t kShmDmsByte = 128;
constexpr unsigned char kJournalMagic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};

sqlite3_vfs* real_vfs() { return sqlite3_vfs_find(nullptr); }

uint32_t big_endian32(const unsigned char* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

bool read_exactly(int fd, void* buffer, size_t size, off_t offset) {
  return pread(fd, buffer, size, offset) == static_cast<ssize_t>(size);
}

// The pages a hot rollback journal saved: what the database held before the
// interrupted write (the format is SQLite's, pager.c: "journal file format").
struct SavedPages {
  int journal = -1;
  uint32_t page_size = 0;
  int64_t original_bytes = 0;                      // database size before the write
  std::unordered_map<uint32_t, off_t> page_offset;  // page number -> its bytes in the journal

  ~SavedPages() {
    if (journal >= 0) close(journal);
  }

  // False when the journal cannot be read as one (then nothing is overlaid
  // and the database is read as it is).
  bool load(const std::string& journal_path) {
    journal = open(journal_path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat info {};
    if (journal < 0 || fstat(journal, &info) != 0) return false;
    off_t size = info.st_size;
    off_t header = 0;
    uint32_t sector = 0;
    std::vector<unsigned char> page;
    for (bool first = true; header + 28 <= size; first = false) {
      unsigned char fields[28];
      if (!read_exactly(journal, fields, sizeof fields, header) ||
          std::memcmp(fields, kJournalMagic, sizeof kJournalMagic) != 0) {
        break;
      }
      uint32_t records = big_endian32(fields + 8);
      uint32_t checksum_start = big_endian32(fields + 12);
      if (first) {
        original_bytes = int64_t{big_endian32(fields + 16)};
        sector = big_endian32(fields + 20);
        page_size = big_endian32(fields + 24);
        bool powers = page_size >= 512 && page_size <= 65536 && (page_size & (page_size - 1)) == 0 &&
                      sector >= 32 && sector <= 65536 && (sector & (sector - 1)) == 0;
        if (!powers) return false;
        original_bytes *= page_size;
        page.resize(page_size);
      }
      off_t record = header + sector;
      const off_t record_size = off_t{page_size} + 8;
      if (records == 0xffffffffu) records = static_cast<uint32_t>((size - record) / record_size);
      for (uint32_t i = 0; i < records && record + record_size <= size; ++i, record += record_size) {
        unsigned char number[4];
        unsigned char stored[4];
        if (!read_exactly(journal, number, 4, record) ||
            !read_exactly(journal, page.data(), page_size, record + 4) ||
            !read_exactly(journal, stored, 4, record + 4 + page_size)) {
          return true;
        }
        uint32_t checksum = checksum_start;
        for (int64_t at = int64_t{page_size} - 200; at > 0; at -= 200) checksum += page[at];
        uint32_t page_number = big_endian32(number);
        // SQLite's rollback stops at the first record that fails its checksum.
        if (checksum != big_endian32(stored) || page_number == 0) return true;
        page_offset.emplace(page_number, record + 4);
      }
      header = ((record + sector - 1) / sector) * sector;
    }
    return page_size != 0;
  }
};

// The WAL index a WAL database needs, in this process's memory (what the
// -shm file would hold, shared with no one).
struct PrivateShm {
  std::vector<void*> regions;
  ~PrivateShm() {
    for (void* region : regions) std::free(region);
  }
};

// Our file: SQLite's default file object follows it in the same allocation.
struct File {
  sqlite3_file base;
  sqlite3_file* real;
  PrivateShm* shm;
  SavedPages* saved;
};

File* ours(sqlite3_file* file) { return reinterpret_cast<File*>(file); }
sqlite3_file* real(sqlite3_file* file) { return ours(file)->real; }

int file_close(sqlite3_file* file) {
  File* f = ours(file);
  delete f->shm;
  delete f->saved;
  f->shm = nullptr;
  f->saved = nullptr;
  return f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
}

int file_read(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  File* f = ours(file);
  int rc = f->real->pMethods->xRead(f->real, buffer, amount, offset);
  SavedPages* saved = f->saved;
  if (!saved || (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)) return rc;
  // What the journal saved replaces what the interrupted write left.
  auto* bytes = static_cast<unsigned char*>(buffer);
  int64_t page_size = saved->page_size;
  for (int64_t page = offset / page_size; page * page_size < offset + amount; ++page) {
    auto found = saved->page_offset.find(static_cast<uint32_t>(page + 1));
    if (found == saved->page_offset.end()) continue;
    int64_t from = std::max<int64_t>(offset, page * page_size);
    int64_t to = std::min<int64_t>(offset + amount, (page + 1) * page_size);
    if (!read_exactly(saved->journal, bytes + (from - offset), static_cast<size_t>(to - from),
                      found->second + (from - page * page_size))) {
      return SQLITE_IOERR_READ;
    }
  }
  if (offset + amount > saved->original_bytes) return SQLITE_IOERR_SHORT_READ;
  return SQLITE_OK;
}

int file_write(sqlite3_file*, const void*, int, sqlite3_int64) { return SQLITE_READONLY; }
int file_truncate(sqlite3_file*, sqlite3_int64) { return SQLITE_READONLY; }
int file_sync(sqlite3_file*, int) { return SQLITE_OK; }

int file_size(sqlite3_file* file, sqlite3_int64* size) {
  if (SavedPages* saved = ours(file)->saved) {
    *size = saved->original_bytes;
    return SQLITE_OK;
  }
  return real(file)->pMethods->xFileSize(real(file), size);
}

int file_lock(sqlite3_file* file, int level) { return real(file)->pMethods->xLock(real(file), level); }
int file_unlock(sqlite3_file* file, int level) {
  return real(file)->pMethods->xUnlock(real(file), level);
}
int file_check_reserved(sqlite3_file* file, int* held) {
  return real(file)->pMethods->xCheckReservedLock(real(file), held);
}
int file_control(sqlite3_file* file, int op, void* argument) {
  return real(file)->pMethods->xFileControl(real(file), op, argument);
}
int file_sector_size(sqlite3_file* file) { return real(file)->pMethods->xSectorSize(real(file)); }
int file_characteristics(sqlite3_file* file) {
  return real(file)->pMethods->xDeviceCharacteristics(real(file));
}

int shm_map(sqlite3_file* file, int region, int size, int, void volatile** mapped) {
  File* f = ours(file);
  if (!f->shm) f->shm = new (std::nothrow) PrivateShm;
  if (!f->shm) return SQLITE_NOMEM;
  std::vector<void*>& regions = f->shm->regions;
  while (static_cast<int>(regions.size()) <= region) {
    void* memory = std::calloc(1, static_cast<size_t>(size));
    if (!memory) return SQLITE_NOMEM;
    regions.push_back(memory);
  }
  *mapped = regions[static_cast<size_t>(region)];
  return SQLITE_OK;
}
int shm_lock(sqlite3_file*, int, int, int) { return SQLITE_OK; }  // no one else sees it
void shm_barrier(sqlite3_file*) { __sync_synchronize(); }
int shm_unmap(sqlite3_file* file, int) {
  File* f = ours(file);
  delete f->shm;
  f->shm = nullptr;
  return SQLITE_OK;
}
// No memory mapping: every page comes through file_read (and the journal).
int file_fetch(sqlite3_file*, sqlite3_int64, int, void** page) {
  *page = nullptr;
  return SQLITE_OK;
}
int file_unfetch(sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; }

const sqlite3_io_methods kMethods = {
    3,           file_close,   file_read,          file_write,       file_truncate,
    file_sync,   file_size,    file_lock,          file_unlock,      file_check_reserved,
    file_control, file_sector_size, file_characteristics, shm_map,   shm_lock,
    shm_barrier, shm_unmap,    file_fetch,         file_unfetch,
};

int vfs_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  // SQLite's own scratch files (temporary tables, sorts) are private and
  // deleted on close: opened as usual (our File is larger than theirs).
  constexpr int kTraceFiles = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL |
                              SQLITE_OPEN_SUPER_JOURNAL;
  if (!(flags & kTraceFiles)) return real_vfs()->xOpen(real_vfs(), name, file, flags, out_flags);
  File* f = ours(file);
  f->base.pMethods = nullptr;
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->shm = nullptr;
  f->saved = nullptr;
  // Whatever SQLite asks for (a WAL file is opened read-write), nothing is
  // created or written.
  flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_DELETEONCLOSE)) |
          SQLITE_OPEN_READONLY;
  int rc = real_vfs()->xOpen(real_vfs(), name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  f->base.pMethods = &kMethods;
  if ((flags & SQLITE_OPEN_MAIN_DB) && name && sqlite3_uri_boolean(name, "apptracer_rollback", 0)) {
    f->saved = new (std::nothrow) SavedPages;
    if (!f->saved || !f->saved->load(std::string(name) + "-journal")) {
      delete f->saved;
      f->saved = nullptr;
    }
  }
  return SQLITE_OK;
}

int vfs_delete(sqlite3_vfs*, const char*, int) { return SQLITE_READONLY; }

int vfs_access(sqlite3_vfs*, const char* name, int flags, int* result) {
  return real_vfs()->xAccess(real_vfs(), name, flags, result);
}
int vfs_full_pathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return real_vfs()->xFullPathname(real_vfs(), name, size, out);
}
void* vfs_dlopen(sqlite3_vfs*, const char* name) { return real_vfs()->xDlOpen(real_vfs(), name); }
void vfs_dlerror(sqlite3_vfs*, int size, char* out) { real_vfs()->xDlError(real_vfs(), size, out); }
void (*vfs_dlsym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return real_vfs()->xDlSym(real_vfs(), handle, symbol);
}
void vfs_dlclose(sqlite3_vfs*, void* handle) { real_vfs()->xDlClose(real_vfs(), handle); }
int vfs_randomness(sqlite3_vfs*, int size, char* out) {
  return real_vfs()->xRandomness(real_vfs(), size, out);
}
int vfs_sleep(sqlite3_vfs*, int microseconds) {
  return real_vfs()->xSleep(real_vfs(), microseconds);
}
int vfs_current_time(sqlite3_vfs*, double* now) {
  return real_vfs()->xCurrentTime(real_vfs(), now);
}
int vfs_last_error(sqlite3_vfs*, int size, char* out) {
  return real_vfs()->xGetLastError(real_vfs(), size, out);
}
int vfs_current_time64(sqlite3_vfs*, sqlite3_int64* now) {
  return real_vfs()->xCurrentTimeInt64(real_vfs(), now);
}

}  // namespace

const char* read_only_vfs_name() {
  static std::once_flag registered;
  std::call_once(registered, [] {
    static sqlite3_vfs vfs{};
    vfs.iVersion = 2;
    vfs.szOsFile = static_cast<int>(sizeof(File)) + real_vfs()->szOsFile;
    vfs.mxPathname = real_vfs()->mxPathname;
    vfs.zName = kVfsName;
    vfs.xOpen = vfs_open;
    vfs.xDelete = vfs_delete;
    vfs.xAccess = vfs_access;
    vfs.xFullPathname = vfs_full_pathname;
    vfs.xDlOpen = vfs_dlopen;
    vfs.xDlError = vfs_dlerror;
    vfs.xDlSym = vfs_dlsym;
    vfs.xDlClose = vfs_dlclose;
    vfs.xRandomness = vfs_randomness;
    vfs.xSleep = vfs_sleep;
    vfs.xCurrentTime = vfs_current_time;
    vfs.xGetLastError = vfs_last_error;
    vfs.xCurrentTimeInt64 = vfs_current_time64;
    sqlite3_vfs_register(&vfs, 0);
  });
  return kVfsName;
}

namespace {

// Whether another process holds a lock on `byte` of the file at `path`.
bool locked_by_another(const std::string& path, off_t byte) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = byte;
  probe.l_len = 1;
  bool locked = fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  close(fd);
  return locked;
}

}  // namespace

bool wal_in_use(const char* path) { return locked_by_another(std::string(path) + "-shm", kShmDmsByte); }

bool has_hot_journal(const char* path) {
  std::string journal = std::string(path) + "-journal";
  int fd = open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char first = 0;
  bool started = read_exactly(fd, &first, 1, 0) && first != 0;
  close(fd);
  if (!started) return false;
  // A writer in the middle of its transaction holds RESERVED: its journal is
  // not hot, and SQLite's own locking lets us read past it.
  return !locked_by_another(path, kReservedByte);
}

}  // namespace apptracer
