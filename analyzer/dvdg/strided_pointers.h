// How far a kernel's pointer argument reaches, when the program says so by
// its launches: a kernel launched again and again on one buffer, each time at
// a pointer further the same way (a chunked pipeline's chunk i at
// base + i * stride, or a tiled one's tiles of uneven sizes one after
// another), works on the bytes between its launch and the next each time.
// Without this, a pointer reaches to the end of its region (docs/dvdg.md),
// so chunk i's kernel seemed to read every later chunk: the copy filling
// chunk i + 1 had to wait for it (a false write-after-read, which kept
// `whatif --overlap` from overlapping a one-buffer pipeline), and reads of
// chunks not yet copied in looked uninitialized.
//
// Three launches in a row moving one way make a run (two could be chance).
// Moving forward, each launch of a run reaches where the next one starts;
// the latest reaches one stride while the run's steps are all one stride,
// else to the end of its region (the last tile's size is not known).
// Moving back, each reaches where the one before it started, the first one
// stride. A pointer in a tensor block a framework allocator reported ends
// with its block (block_resolution.h). A kernel that really reads past
// its stride (a halo) loses those bytes' edges: `record --exact` records
// what it touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/dvdg/op_accesses.h"

namespace apptracer::dvdg {

class StridedPointers {
 public:
  // A launch of kernel `name_id` whose parameter at `param_offset` points
  // `offset` bytes into allocation `alloc_id`, as accesses[access_index]
  // (a `to_end` access). Launches come in launch order. Shortens the
  // access, and earlier ones of its run, once a run shows.
  void see(int64_t name_id, uint32_t param_offset, int64_t alloc_id, int64_t offset,
           size_t access_index, std::vector<Access>& accesses);

 private:
  struct Key {
    int64_t name_id;
    int64_t alloc_id;
    uint32_t param_offset;
    bool operator==(const Key& other) const {
      return name_id == other.name_id && alloc_id == other.alloc_id &&
             param_offset == other.param_offset;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      uint64_t h = static_cast<uint64_t>(key.name_id) * 0x9e3779b97f4a7c15ull;
      h ^= static_cast<uint64_t>(key.alloc_id) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
      return h ^ (key.param_offset * 0xc2b2ae3d27d4eb4full);
    }
  };
  struct Run {
    int64_t last_offset = 0;
    int64_t step = 0;       // the latest launch's offset less the one's before it
    uint32_t length = 0;    // launches in the run so far
    bool uneven = false;    // its steps differ
    size_t first = 0;       // the access of the run's first launch (length 2)
    int64_t first_end = 0;  // its end before any reach was set
    size_t last = 0;        // the access of the latest launch
    int64_t last_end = 0;
  };

  std::unordered_map<Key, Run, KeyHash> runs_;
};

}  // namespace apptracer::dvdg
