// Turns records into rows of the trace database (schema in common/).
//
// Runs on the writer thread only. Besides plain inserts it does the two joins
// that cannot wait for the analyzer without losing information:
//  * addresses are resolved to the allocation that held them at the time
//    (the registry knows lifetimes; the analyzer would only see the rows);
//  * GPU activity is joined to its API-side row by correlation id, in
//    whichever order the two arrive. Activity with no API-side row (graph
//    launches, work from untraced entry points) becomes a row of its own.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocation_registry.h"
#include "apptracer/records.h"
#include "apptracer/sqlite.h"

namespace apptracer {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t total_memory_bytes = 0;
  int sm_count = 0;
  int numa_node = -1;
};

// Host blocks (host_blocks.h): where they resolve once they are rows, and how
// one becomes a row when a kernel argument is the first to touch it.
struct HostBlockResolution {
  const AllocationRegistry* registry = nullptr;
  std::function<std::optional<Record>(uint64_t address, uint64_t ns)> promote;
};

class TraceStore {
 public:
  // Creates the database at `path` (which must not exist) with the schema,
  // in WAL mode, with meta.status = incomplete. Addresses resolve in
  // `registry` (CUDA's allocations) first, then in host blocks.
  TraceStore(const std::string& path, const AllocationRegistry& registry,
             HostBlockResolution host = {});

  void begin();
  void commit();

  void write(const Record* records, size_t count);
  void write_string(uint32_t id, const std::string& text);
  void write_device(const DeviceInfo& device);
  void set_meta(const std::string& key, const std::string& value);

  // Called once per writer pass: activity still waiting for its API row after
  // two passes will never get one and is stored on its own.
  void end_pass();

  // Stores everything still held back and returns per-table row counts.
  std::vector<std::pair<std::string, int64_t>> finish();

  // Moves the WAL into the main file so the trace is one self-contained file.
  void checkpoint();

 private:
  struct Resolved {
    std::optional<int64_t> alloc_id;
    std::optional<int64_t> offset;
    MemoryKind memory = MemoryKind::Unknown;
    std::optional<int64_t> device;
    std::optional<int64_t> numa_node;  // host memory whose node was known when it was registered
  };
  struct AwaitingRow {
    int64_t row_id;
    uint64_t other_key;  // the row's other join key (its own when there is one)
  };
  struct HeldActivity {
    Record record;
    int passes = 0;
  };

  Resolved resolve(uint64_t address, uint64_t ns) const;
  uint32_t demangled_id(uint32_t name_id);

  void write_api_call(const Record& r);
  void write_allocation(const Record& r);
  void write_free(const Record& r);
  void write_memcpy(const Record& r);
  void write_memset(const Record& r);
  int64_t insert_memcpy_row(const Record& r);
  int64_t insert_kernel_row(const Record& r);
  int64_t insert_memset_row(const Record& r);
  void write_kernel(const Record& r);
  void write_sync(const Record& r);
  void write_stream_event(const Record& r);
  void write_thread(const Record& r);
  void write_activity(const Record& r);
  void write_kernel_args(const Record& r);

  // How a kernel accesses memory through parameter `index`, from its
  // demangled signature; nullopt when the parameter is not a pointer.
  struct Access {
    AccessKind kind;
    AccessSource source;
  };
  std::optional<Access> access_of(uint32_t name_id, uint16_t index);

  // Joins: an API-side row waits for its activity, or takes held activity.
  void await_activity(const Record& r, int64_t row_id);
  void forget_awaiting(uint64_t key, int64_t row_id);
  bool take_held_activity(const Record& r, int64_t row_id);
  void apply_activity(const Record& activity, int64_t row_id);
  void insert_activity_only(const Record& activity);

  static uint64_t join_key(uint32_t correlation_id, RecordType api_side_type);

  Database db_;
  const AllocationRegistry& registry_;
  HostBlockResolution host_;
  // Frees that reached the writer before their allocation's row (another
  // thread's buffer, drained later): applied when the row arrives.
  struct PendingFree {
    std::optional<int64_t> correlation_id;
    uint64_t ns;
  };
  std::unordered_map<uint64_t, PendingFree> pending_frees_;
  Statement insert_api_call_, insert_allocation_, update_free_, insert_memcpy_, insert_memset_,
      insert_kernel_, insert_sync_, insert_stream_event_, insert_thread_, insert_string_,
      update_memcpy_gpu_, update_memset_gpu_, update_kernel_gpu_, upsert_meta_,
      insert_device_;
  std::unordered_map<uint64_t, std::deque<AwaitingRow>> awaiting_;  // join key -> rows
  std::unordered_map<uint64_t, std::deque<HeldActivity>> held_;    // join key -> activity
  struct CopyWithActivity {
    int64_t row_id;
    int passes;
  };
  std::unordered_map<uint32_t, CopyWithActivity> copies_with_activity_;  // correlation id
  std::unordered_map<uint32_t, uint32_t> demangled_;               // name id -> demangled id
  std::unordered_map<const char*, uint32_t> api_name_ids_;         // CUPTI function name -> id
  struct LaunchAwaitingArgs {
    int64_t row_id;
    uint64_t api_start_ns;
    uint32_t name_id;
  };
  std::unordered_map<uint32_t, LaunchAwaitingArgs> launches_awaiting_args_;  // own correlation id
  // Per name id: the parameter types, or nullopt without a signature.
  std::unordered_map<uint32_t, std::optional<std::vector<std::string>>> signatures_;
  Statement insert_kernel_arg_;

  // Unified memory: placement hints and CUPTI's counter records.
  void write_mem_advice(const Record& r);
  void write_um_event(const Record& r);
  Statement insert_mem_advice_, insert_um_event_;
};

}  // namespace apptracer
