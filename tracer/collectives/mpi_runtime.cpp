#include "collectives/mpi_runtime.h"

#include <atomic>
#include <cstring>
#include <string>

namespace apptracer::mpi {

const char* const kLibraries[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so", nullptr};

namespace {

std::atomic<int> world_rank{-1};
// Communicators this process created as their rank 0 (Score-P's counter).
std::atomic<uint32_t> created_as_root{0};

Handle handle_at(void* object) { return reinterpret_cast<Handle>(object); }

template <typename F>
void look_up(F& function, void* address) {
  function = reinterpret_cast<F>(address);
}

}  // namespace

Runtime& Runtime::get() {
  static Runtime* runtime = new Runtime;  // never destroyed: MPI may be called from exit handlers
  return *runtime;
}

void* Runtime::symbol(const char* name) const {
  void* found = library_ ? dlsym(library_, name) : nullptr;
  return found ? found : dlsym(RTLD_DEFAULT, name);
}

Runtime::Runtime() {
  for (const char* const* soname = kLibraries; *soname && !library_; ++soname) {
    library_ = dlopen(*soname, RTLD_LAZY | RTLD_NOLOAD);
  }
  comm_world_ = handle_at(symbol("ompi_mpi_comm_world"));
  comm_null_ = handle_at(symbol("ompi_mpi_comm_null"));
  byte_ = handle_at(symbol("ompi_mpi_byte"));
  look_up(type_size_, symbol("PMPI_Type_size"));
  look_up(comm_rank_, symbol("PMPI_Comm_rank"));
  look_up(comm_size_, symbol("PMPI_Comm_size"));
  look_up(get_count_, symbol("PMPI_Get_count"));
  look_up(test_cancelled_, symbol("PMPI_Test_cancelled"));
  look_up(bcast_, symbol("PMPI_Bcast"));
  look_up(send_, symbol("PMPI_Send"));
  look_up(recv_, symbol("PMPI_Recv"));
  readable_ = comm_world_ && comm_null_ && byte_ && type_size_ && comm_rank_ && comm_size_ &&
              get_count_ && bcast_ && send_ && recv_;
  static const std::pair<const char*, DataType> types[] = {
      {"ompi_mpi_byte", DataType::Uint8},          {"ompi_mpi_char", DataType::Int8},
      {"ompi_mpi_signed_char", DataType::Int8},    {"ompi_mpi_unsigned_char", DataType::Uint8},
      {"ompi_mpi_int8_t", DataType::Int8},         {"ompi_mpi_uint8_t", DataType::Uint8},
      {"ompi_mpi_short", DataType::Int16},         {"ompi_mpi_int16_t", DataType::Int16},
      {"ompi_mpi_int", DataType::Int32},           {"ompi_mpi_int32_t", DataType::Int32},
      {"ompi_mpi_unsigned", DataType::Uint32},     {"ompi_mpi_uint32_t", DataType::Uint32},
      {"ompi_mpi_long", DataType::Int64},          {"ompi_mpi_long_long_int", DataType::Int64},
      {"ompi_mpi_int64_t", DataType::Int64},       {"ompi_mpi_unsigned_long", DataType::Uint64},
      {"ompi_mpi_uint64_t", DataType::Uint64},     {"ompi_mpi_float", DataType::Float32},
      {"ompi_mpi_double", DataType::Float64},
  };
  for (const auto& [name, type] : types) {
    if (Handle h = handle_at(symbol(name))) data_types_.emplace_back(h, type);
  }
  static const std::pair<const char*, ReduceOp> ops[] = {
      {"ompi_mpi_op_sum", ReduceOp::Sum}, {"ompi_mpi_op_prod", ReduceOp::Prod},
      {"ompi_mpi_op_max", ReduceOp::Max}, {"ompi_mpi_op_min", ReduceOp::Min}};
  for (const auto& [name, op] : ops) {
    if (Handle h = handle_at(symbol(name))) reduce_ops_.emplace_back(h, op);
  }
}

DataType Runtime::data_type(Handle datatype) const {
  for (const auto& [handle, type] : data_types_) {
    if (handle == datatype) return type;
  }
  return DataType::Other;
}

ReduceOp Runtime::reduce_op(Handle op) const {
  for (const auto& [handle, known] : reduce_ops_) {
    if (handle == op) return known;
  }
  return ReduceOp::Other;
}

int Runtime::type_size(Handle datatype) const {
  int size = 0;
  if (!type_size_ || type_size_(datatype, &size) != kSuccess || size < 0) return 0;
  return size;
}

int Runtime::comm_rank(Handle comm) const {
  int rank = -1;
  if (!comm_rank_ || comm_rank_(comm, &rank) != kSuccess) return -1;
  return rank;
}

int Runtime::comm_size(Handle comm) const {
  int size = -1;
  if (!comm_size_ || comm_size_(comm, &size) != kSuccess) return -1;
  return size;
}

uint64_t Runtime::received_bytes(const Status& status) const {
  int count = 0;
  if (!get_count_ || get_count_(&status, byte_, &count) != kSuccess || count < 0) return UINT64_MAX;
  return static_cast<uint64_t>(count);
}

bool Runtime::cancelled(const Status& status) const {
  int flag = 0;
  return test_cancelled_ && test_cancelled_(&status, &flag) == kSuccess && flag;
}

int Runtime::bcast(void* buffer, int count, Handle datatype, int root, Handle comm) const {
  return bcast_(buffer, count, datatype, root, comm);
}

int Runtime::send(const void* buffer, int count, Handle datatype, int peer, int tag,
                  Handle comm) const {
  return send_(buffer, count, datatype, peer, tag, comm);
}

int Runtime::recv(void* buffer, int count, Handle datatype, int peer, int tag, Handle comm) const {
  Status status{};
  return recv_(buffer, count, datatype, peer, tag, comm, &status);
}

// --- communicators ----------------------------------------------------------------

namespace {

int current_world_rank(const Runtime& mpi) {
  int rank = world_rank.load(std::memory_order_relaxed);
  if (rank < 0) {
    rank = mpi.comm_rank(mpi.comm_world());
    world_rank.store(rank, std::memory_order_relaxed);
  }
  return rank;
}

void announce(CollectiveCapture& capture, const Runtime& mpi, Handle handle, CommState* state,
              uint64_t parent_comm_id) {
  comm_registry().bind(handle, state);
  CommunicatorFacts facts;
  facts.handle = handle;
  facts.parent_comm_id = parent_comm_id;
  facts.world_rank = current_world_rank(mpi);
  emit_communicator(capture, *state, facts);
}

}  // namespace

CommState* comm_state(CollectiveCapture& capture, Handle comm) {
  if (CommState* state = comm_registry().by_handle(comm)) return state;
  const Runtime& mpi = Runtime::get();
  int rank = mpi.comm_rank(comm);
  int size = mpi.comm_size(comm);
  CommState* state = comm == mpi.comm_world()
                         ? comm_registry().find_or_create(CommLibrary::Mpi, 0, rank, size)
                         : comm_registry().create_local(CommLibrary::Mpi, rank, size);
  announce(capture, mpi, comm, state, 0);
  return state;
}

void on_comm_created(CollectiveCapture& capture, Handle parent, Handle created) {
  const Runtime& mpi = Runtime::get();
  if (!mpi.readable() || created == 0 || created == mpi.comm_null()) return;
  int rank = mpi.comm_rank(created);
  int size = mpi.comm_size(created);
  uint64_t comm_id = 0;
  if (rank == 0) {
    uint32_t count = created_as_root.fetch_add(1, std::memory_order_relaxed) + 1;
    comm_id = static_cast<uint64_t>(current_world_rank(mpi)) << 32 | count;
  }
  if (size > 1) mpi.bcast(&comm_id, sizeof comm_id, mpi.byte_type(), 0, created);
  CommState* parent_state = comm_registry().by_handle(parent);
  announce(capture, mpi, created,
           comm_registry().find_or_create(CommLibrary::Mpi, comm_id, rank, size),
           parent_state ? parent_state->comm_id : 0);
}

namespace {

// Score-P's synchronization: world rank 0 exchanges a few zero-byte
// messages with each rank; the round trip with the least time gives that
// rank's offset (rank 0's time at the middle of the trip minus the rank's
// time when it answered). Nothing else can be in flight: MPI_Init has not
// returned to the program yet.
void synchronize_clocks(CollectiveCapture& capture, const Runtime& mpi, int rank, int size) {
  constexpr int kRounds = 10;
  constexpr int kTag = 0x41505452;  // "APTR"
  Handle world = mpi.comm_world();
  int64_t result[2] = {0, 0};  // offset to add to this rank's times, best round trip
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      int64_t best[2] = {0, INT64_MAX};
      for (int round = 0; round < kRounds; ++round) {
        uint64_t sent = capture.now_ns();
        mpi.send(nullptr, 0, mpi.byte_type(), peer, kTag, world);
        uint64_t answered = 0;
        mpi.recv(&answered, sizeof answered, mpi.byte_type(), peer, kTag, world);
        uint64_t back = capture.now_ns();
        auto trip = static_cast<int64_t>(back - sent);
        if (trip < best[1]) {
          best[0] = static_cast<int64_t>(sent + trip / 2) - static_cast<int64_t>(answered);
          best[1] = trip;
        }
      }
      mpi.send(best, sizeof best, mpi.byte_type(), peer, kTag, world);
    }
  } else {
    for (int round = 0; round < kRounds; ++round) {
      mpi.recv(nullptr, 0, mpi.byte_type(), 0, kTag, world);
      uint64_t now = capture.now_ns();
      mpi.send(&now, sizeof now, mpi.byte_type(), 0, kTag, world);
    }
    mpi.recv(result, sizeof result, mpi.byte_type(), 0, kTag, world);
  }
  capture.set_meta("clock_offset_ns", std::to_string(result[0]));
  capture.set_meta("clock_sync",
                   rank == 0 ? std::string("reference: MPI world rank 0")
                             : "MPI ping-pong with world rank 0 at MPI_Init; best round trip " +
                                   std::to_string(result[1]) + " ns");
}

}  // namespace

void on_initialized(CollectiveCapture& capture) {
  const Runtime& mpi = Runtime::get();
  if (!mpi.readable()) {
    capture.set_meta("mpi", "not recorded: only Open MPI's ABI is supported");
    return;
  }
  int rank = mpi.comm_rank(mpi.comm_world());
  int size = mpi.comm_size(mpi.comm_world());
  world_rank.store(rank, std::memory_order_relaxed);
  capture.set_meta("mpi_world_rank", std::to_string(rank));
  capture.set_meta("mpi_world_size", std::to_string(size));
  comm_state(capture, mpi.comm_world());
  if (size > 1) synchronize_clocks(capture, mpi, rank, size);
}

// --- requests ------------------------------------------------------------------------

namespace {
size_t slot_of(Handle request) {
  return static_cast<size_t>(((request >> 3) * 0x9e3779b97f4a7c15ull) >> 48) % Requests::kSlots;
}
}  // namespace

void Requests::add(Handle request, uint64_t op_id, bool receives) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t value = op_id << 1 | (receives ? 1 : 0);
  Slot* reusable = nullptr;
  size_t start = slot_of(request);
  for (size_t i = 0; i < kSlots; ++i) {
    Slot& slot = slots_[(start + i) % kSlots];
    if (slot.request == request && slot.value > 1) {
      slot.value = value;  // a request object reused while we still held it (freed, not waited)
      return;
    }
    if (slot.value <= 1 && !reusable) reusable = &slot;
    if (slot.request == 0 && slot.value == 0) break;  // end of the probe chain
  }
  if (!reusable) return;  // full: the operation stays without a completion time
  reusable->request = request;
  reusable->value = value;
}

uint64_t Requests::take(Handle request, bool& receives) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t start = slot_of(request);
  for (size_t i = 0; i < kSlots; ++i) {
    Slot& slot = slots_[(start + i) % kSlots];
    if (slot.request == 0 && slot.value == 0) return 0;
    if (slot.request == request && slot.value > 1) {
      uint64_t value = slot.value;
      slot.value = 1;
      receives = value & 1;
      return value >> 1;
    }
  }
  return 0;
}

Requests& requests() {
  static Requests* table = new Requests;
  return *table;
}

}  // namespace apptracer::mpi
