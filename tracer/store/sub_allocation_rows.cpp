#include "store/sub_allocation_rows.h"

#include <algorithm>
#include <cstdio>

#include "base/log.h"
#include "frameworks/sub_allocation_events.h"

namespace apptracer {

namespace {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

SubAllocationRows::SubAllocationRows(Database& db, const AddressResolver& resolver,
                                     SetMeta set_meta)
    : resolver_(resolver),
      set_meta_(std::move(set_meta)),
      rows_(db),
      set_free_requested_(db.prepare("UPDATE sub_allocations SET free_requested_ns = ? WHERE id = ?")),
      set_free_(db.prepare("UPDATE sub_allocations SET free_ns = ?, free_tid = ? WHERE id = ?")) {}

// The first event of an allocator must lie in CUDA memory the tracer saw: a
// segment is an allocation exactly (its cudaMalloc came just before, on the
// same thread), mapped pages and blocks lie inside allocations.
bool SubAllocationRows::passes_check(const SubAllocationRecord& e) {
  Check& check = checks_.emplace(e.allocator, Check::Pending).first->second;
  if (check != Check::Pending) return check == Check::Passed;
  uint64_t last = e.address + (e.bytes ? e.bytes - 1 : 0);
  Resolved first = resolver_.find(e.address, e.ns);
  Resolved end = resolver_.find(last, e.ns);
  bool inside = first.alloc_id && end.alloc_id && is_device_memory(first.memory);
  bool ok = inside;
  if (e.event == SubAllocationEvent::SegmentAlloc) {
    Resolved after = resolver_.find(e.address + e.bytes, e.ns);
    ok = inside && first.offset == 0 && end.alloc_id == first.alloc_id &&
         after.alloc_id != first.alloc_id;
  }
  const char* name = frameworks::meta_name(e.allocator);
  if (ok) {
    check = Check::Passed;
    return true;
  }
  check = Check::Refused;
  frameworks::refuse_allocator(e.allocator);
  std::string why = "refused: its first event (" + hex(e.address) + ", " +
                    std::to_string(e.bytes) +
                    " bytes) matches no CUDA allocation the tracer saw; its blocks are not recorded";
  log_warn("{} allocator {}", name, why);
  set_meta_(std::string("sub_allocations.") + name + ".events", why);
  return false;
}

void SubAllocationRows::write(const Record& r) { waiting_.push_back(r); }

void SubAllocationRows::handle(const Record& r) {
  const SubAllocationRecord& e = r.sub_allocation;
  switch (e.event) {
    case SubAllocationEvent::Alloc:
      if (passes_check(e)) add_block(r);
      break;
    case SubAllocationEvent::FreeRequested:
    case SubAllocationEvent::Free:
      if (checks_.count(e.allocator) && checks_[e.allocator] == Check::Passed)
        free_block(r, e.event == SubAllocationEvent::Free);
      break;
    // Segments are rows of allocations already (their cudaMalloc or cuMemMap):
    // they only serve the check.
    case SubAllocationEvent::SegmentAlloc:
    case SubAllocationEvent::SegmentMap:
      passes_check(e);
      break;
    case SubAllocationEvent::SegmentFree:
    case SubAllocationEvent::SegmentUnmap: break;
  }
}

void SubAllocationRows::add_block(const Record& r) {
  const SubAllocationRecord& e = r.sub_allocation;
  Resolved parent = resolver_.find(e.address, e.ns);
  SubAllocationRow row;
  row.allocator = e.allocator;
  row.parent_alloc_id = parent.alloc_id;
  row.parent_offset = parent.offset;
  row.address = static_cast<int64_t>(e.address);
  row.bytes = static_cast<int64_t>(e.bytes);
  if (e.block_bytes) row.block_bytes = static_cast<int64_t>(e.block_bytes);
  if (e.device >= 0) row.device = e.device;
  // CuPy's hooks name no stream.
  if (e.allocator == SubAllocator::PytorchCaching) row.stream_handle = static_cast<int64_t>(e.stream);
  if (e.pool_id != 0) row.pool_id = e.pool_id;
  row.alloc_ns = static_cast<int64_t>(e.ns);
  row.alloc_tid = r.tid;
  row.id = next_id_++;
  Open open{*row.id.value, e.ns, false};
  held_.emplace(open.row_id, row);
  // Frees of this block that arrived first: the earliest at or after it.
  Key key{e.allocator, e.address};
  auto pending = pending_frees_.find(key);
  if (pending != pending_frees_.end()) {
    std::vector<PendingFree>& frees = pending->second;
    std::sort(frees.begin(), frees.end(),
              [](const PendingFree& a, const PendingFree& b) { return a.ns < b.ns; });
    for (bool completed : {false, true}) {
      auto it = std::find_if(frees.begin(), frees.end(), [&](const PendingFree& f) {
        return f.completed == completed && f.ns >= e.ns;
      });
      if (it == frees.end()) continue;
      apply_free(open, it->ns, it->tid, completed);
      frees.erase(it);
    }
    if (frees.empty()) pending_frees_.erase(pending);
    if (open.row_id < 0) return;
  }
  open_[key].push_back(open);
}

void SubAllocationRows::free_block(const Record& r, bool completed) {
  const SubAllocationRecord& e = r.sub_allocation;
  Key key{e.allocator, e.address};
  auto found = open_.find(key);
  // The latest block at this address allocated before the free (a later
  // reuse may already be here, from another thread's buffer).
  if (found != open_.end()) {
    std::vector<Open>& blocks = found->second;
    auto best = blocks.end();
    for (auto it = blocks.begin(); it != blocks.end(); ++it) {
      if (it->alloc_ns > e.ns || (!completed && it->free_requested)) continue;
      if (best == blocks.end() || it->alloc_ns > best->alloc_ns) best = it;
    }
    if (best != blocks.end()) {
      apply_free(*best, e.ns, r.tid, completed);
      if (best->row_id < 0) blocks.erase(best);
      if (blocks.empty()) open_.erase(found);
      return;
    }
  }
  pending_frees_[key].push_back({e.ns, r.tid, completed});
}

// A completed free closes the row: row_id becomes -1.
void SubAllocationRows::apply_free(Open& open, uint64_t ns, uint32_t tid, bool completed) {
  auto held = held_.find(open.row_id);
  if (held != held_.end()) {
    SubAllocationRow& row = held->second;
    if (completed) {
      row.free_ns = static_cast<int64_t>(ns);
      row.free_tid = tid;
      rows_.add(row);
      held_.erase(held);
      open.row_id = -1;
    } else {
      row.free_requested_ns = static_cast<int64_t>(ns);
      open.free_requested = true;
    }
    return;
  }
  if (completed) {
    set_free_.bind(1, static_cast<int64_t>(ns))
        .bind(2, static_cast<int64_t>(tid))
        .bind(3, open.row_id)
        .run();
    open.row_id = -1;
  } else {
    set_free_requested_.bind(1, static_cast<int64_t>(ns)).bind(2, open.row_id).run();
    open.free_requested = true;
  }
}

void SubAllocationRows::end_pass(uint64_t drained_before) {
  // Sorted by (time, arrival), so two events of one thread at the same clock
  // reading keep their order; keys rather than the records, which a sort
  // moved at a cost near that of storing their rows.
  order_.clear();
  for (size_t i = 0; i < waiting_.size(); ++i) order_.emplace_back(waiting_[i].sub_allocation.ns, i);
  std::sort(order_.begin(), order_.end());
  later_.clear();
  for (const auto& [ns, i] : order_) {
    if (ns < drained_before) {
      handle(waiting_[i]);
    } else {
      later_.push_back(waiting_[i]);
    }
  }
  waiting_.swap(later_);
  for (const auto& [id, row] : held_) rows_.add(row);
  held_.clear();
  rows_.flush();
}

void SubAllocationRows::finish() {
  end_pass(UINT64_MAX);
  size_t unmatched = 0;
  for (const auto& [key, frees] : pending_frees_) unmatched += frees.size();
  if (unmatched > 0) {
    set_meta_("sub_allocations.unmatched_frees",
              std::to_string(unmatched) + " frees of blocks whose allocation was not recorded "
                                          "(allocated before the tracker was attached)");
  }
}

}  // namespace apptracer
