// Memory held for nothing, from the memory model (analyzer/memory): pieces
// live at their device's peak that were never used, allocated long before
// their first use or freed long after their last; free space an allocator
// keeps cached at the peak; live memory growing step after step (a leak).
// Each finding's saving is the bytes it takes off the peak (saving_bytes).
// One problem is one finding: a device's pieces held for the same reason
// are one, with its pieces grouped by producer (or allocating site) in a
// table inside, the most bytes first.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "analyzer/diagnose/rules.h"
#include "analyzer/diagnose/site_groups.h"
#include "analyzer/dvdg/labels.h"
#include "analyzer/memory/memory_whatif.h"

namespace apptracer::diagnose {

namespace {

using memory::DeviceMemory;
using memory::MemoryItem;
using memory::Owner;

// Memory the program (or its framework, for it) made: a library's and a
// segment's cache are not the program's pieces.
bool programs_piece(const MemoryItem& item) {
  return !item.is_segment() && !memory::is_library_memory(item.owner);
}

const DeviceMemory* device_of(const TraceFacts& facts, const MemoryItem& item) {
  for (const DeviceMemory& device : facts.memory_model.devices) {
    if (facts.memory_model.on_device(item, device)) return &device;
  }
  return nullptr;
}

std::optional<int64_t> peak_of(const TraceFacts& facts, const MemoryItem& item) {
  const DeviceMemory* device = device_of(facts, item);
  if (!device || device->peak_ns.empty()) return std::nullopt;
  return device->at_ns;
}

std::string piece_name(const TraceFacts& facts, const MemoryItem& item) {
  if (item.kind == MemoryItem::Kind::Allocation) return allocation_name(facts, item.id);
  return "block #" + std::to_string(item.id) + " (" + memory::owner_name(item.owner, item.allocator) + ", " +
         dvdg::format_bytes(item.bytes) + ")";
}

// Pieces of one device and producer (else allocating site and size),
// numbers in NVTX range names aside ("step 12"), reported as one.
struct Group {
  std::vector<uint32_t> items;
  // Where a rule found them: every piece of the same kind as these (made by
  // the same kernel or copy, of the same size), wherever in the run, with
  // the stretch it held for nothing. A fix in the program (a line moved in
  // its step) frees all of them, not only those at the peak.
  std::vector<std::pair<uint32_t, std::pair<int64_t, int64_t>>> alike;
  int64_t bytes = 0;
  int64_t idle_ns = 0;  // the longest unused stretch among them
  size_t steps = 0;     // memory_leak: how many steps made its pieces
};

std::string group_key(const TraceFacts& facts, const MemoryItem& item) {
  const memory::ItemOrigin& origin = facts.memory_model.origin(item);
  std::string key = std::to_string(origin.process) + "|" + memory::device_name(origin.device) + "|" +
                    memory::owner_name(item.owner, item.allocator) + "|";
  if (item.producer != memory::kNoOp) {
    memory::Producer producer = facts.producers->of(facts.graph, item.producer);
    return key + producer.name + "|" + without_numbers(producer.nvtx, "");
  }
  // No producer: its allocating call and NVTX range, and its size.
  const HostCall* call = facts.ops().call(origin.call);
  return key + (call ? std::string(call->name) : std::string("?")) + "|" +
         without_numbers(facts.ops().nvtx_at(call ? std::optional<int64_t>(call->tid()) : std::nullopt, item.alloc_ns), "") +
         "|" + std::to_string(item.bytes);
}

// Where the group's first piece came from: its producer's name and NVTX
// ranges, else the call (and ranges) that allocated it.
void locate_piece(const RuleContext& context, Finding& finding, const MemoryItem& item) {
  locate(context, finding, context.facts.memory_model.origin(item).call, item.alloc_ns);
  if (item.producer == memory::kNoOp) return;
  memory::Producer producer = context.facts.producers->of(context.facts.graph, item.producer);
  add_name(finding, producer.name);
  if (!producer.nvtx.empty()) finding.nvtx = producer.nvtx;
}

// One device's groups: one finding, its groups the most bytes first.
struct DeviceGroups {
  std::vector<const Group*> groups;
  int64_t bytes = 0;
  int64_t idle_ns = 0;
  size_t pieces = 0;
};

std::vector<DeviceGroups> by_device(const TraceFacts& facts, const std::map<std::string, Group>& groups) {
  std::map<std::pair<trace::ProcessId, int64_t>, DeviceGroups> devices;
  for (const auto& [key, group] : groups) {
    const MemoryItem& first = facts.memory_model.items[group.items.front()];
    const memory::ItemOrigin& origin = facts.memory_model.origin(first);
    DeviceGroups& device = devices[{origin.process, origin.device.value_or(-1)}];
    device.groups.push_back(&group);
    device.bytes = saturating_add(device.bytes, group.bytes);
    device.idle_ns = std::max(device.idle_ns, group.idle_ns);
    device.pieces += group.items.size();
  }
  std::vector<DeviceGroups> found;
  for (auto& [where, device] : devices) {
    std::stable_sort(device.groups.begin(), device.groups.end(),
                     [](const Group* a, const Group* b) { return a->bytes > b->bytes; });
    found.push_back(std::move(device));
  }
  return found;
}

const MemoryItem& first_of(const TraceFacts& facts, const DeviceGroups& device) {
  return facts.memory_model.items[device.groups.front()->items.front()];
}

// The finding's rows (every piece), names (the three largest groups'
// producers) and place (the largest group's first piece).
void add_groups(const RuleContext& context, Finding& finding, const DeviceGroups& device) {
  locate_piece(context, finding, first_of(context.facts, device));
  for (const Group* group : device.groups) {
    for (uint32_t index : group->items) {
      const MemoryItem& item = context.facts.memory_model.items[index];
      add_row(context, finding, item.kind == MemoryItem::Kind::Block ? "sub_allocations" : "allocations", item.id);
    }
  }
}

Cell text_or_null(const std::string& text) {
  Cell cell;
  if (!text.empty()) cell = text;
  return cell;
}

// Names, the most frequent first: one, two, or two and how many others.
std::string most_frequent(const std::vector<std::string>& names, const char* others) {
  std::vector<std::pair<std::string_view, size_t>> counts;  // in the order first seen
  for (const std::string& name : names) {
    auto found = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
    if (found == counts.end()) {
      counts.emplace_back(name, 1);
    } else {
      ++found->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (size_t i = 0; i < counts.size() && i < 2; ++i) text += (i ? ", " : "") + std::string(counts[i].first);
  if (counts.size() > 2) text += " and " + std::to_string(counts.size() - 2) + " other " + others;
  return text;
}

// The modules and ops the group's pieces were made in. Alike pieces (one
// kernel's, of one size) can come from all over the model (the casts of
// every layer's gradient), so the first piece's module would name one layer
// for all of them; and in a trace that records 1 op in 16 (the default) a
// piece's launch may have none recorded. "" where no piece tried has one.
std::pair<std::string, std::string> made_in(const RuleContext& context, const Group& group) {
  constexpr size_t kPiecesTried = 256;
  const TraceFacts& facts = context.facts;
  std::vector<std::string> modules, ops;
  for (size_t i = 0; i < group.items.size() && i < kPiecesTried; ++i) {
    const MemoryItem& item = facts.memory_model.items[group.items[i]];
    if (item.producer == memory::kNoOp) continue;
    memory::Producer producer = facts.producers->of(facts.graph, item.producer);
    if (!producer.module.empty()) modules.push_back(std::move(producer.module));
    if (!producer.op.empty()) ops.push_back(std::move(producer.op));
  }
  return {most_frequent(modules, "modules"), most_frequent(ops, "ops")};
}

// The groups as the finding's table: who made each group's pieces (the
// producing op, else the allocating call), in which modules and ops, how
// many, their bytes and (held_ns) the longest unused stretch among them.
void add_group_table(const RuleContext& context, Finding& finding, const DeviceGroups& device, bool held) {
  const TraceFacts& facts = context.facts;
  finding.details = {"pieces", {"made_by", "module", "op", "pieces", "bytes"}, {}};
  if (held) finding.details.columns.push_back("held_ns");
  for (size_t g = 0; g < device.groups.size(); ++g) {
    const Group& group = *device.groups[g];
    const MemoryItem& first = facts.memory_model.items[group.items.front()];
    std::vector<Cell> row;
    if (first.producer != memory::kNoOp) {
      memory::Producer producer = facts.producers->of(facts.graph, first.producer);
      if (g < 3) add_name(finding, producer.name);
      row.emplace_back(producer.name);
      auto [modules, ops] = made_in(context, group);
      row.push_back(text_or_null(modules));
      row.push_back(text_or_null(ops));
    } else {
      const HostCall* call = facts.ops().call(facts.memory_model.origin(first).call);
      row.emplace_back(call ? std::string(call->name) : std::string("?"));
      row.resize(3);
    }
    row.emplace_back(static_cast<int64_t>(group.items.size()));
    row.emplace_back(group.bytes);
    if (held) row.emplace_back(group.idle_ns);
    finding.details.rows.push_back(std::move(row));
  }
}

// The device's peak of live memory (caches not counted, as
// torch.cuda.max_memory_allocated counts none) as recorded, and with each
// piece of `device` absent for its unused stretch: what fixing them all
// leaves. The peak can move where they were not live, so the saving can be
// less than their bytes.
std::pair<int64_t, int64_t> live_peak_before_and_after(const TraceFacts& facts, const DeviceGroups& device) {
  const MemoryItem& first = first_of(facts, device);
  const memory::ItemOrigin& first_origin = facts.memory_model.origin(first);
  const std::vector<MemoryItem>& items = facts.memory_model.items;
  auto counted = [&](const MemoryItem& item) {
    const memory::ItemOrigin& origin = facts.memory_model.origin(item);
    return origin.process == first_origin.process && origin.device == first_origin.device && !item.is_segment();
  };
  // Millions of tensor blocks: their changes are two lists of the items'
  // positions, by allocation and by end, 4 bytes a change, held once at
  // their size and merged as read (not (time, bytes) pairs, 16 bytes each).
  size_t allocated = 0, ended = 0;
  for (const MemoryItem& item : items) {
    if (!counted(item)) continue;
    ++allocated;
    if (item.end_ns) ++ended;
  }
  std::vector<uint32_t> by_alloc, by_end;
  by_alloc.reserve(allocated);
  by_end.reserve(ended);
  for (uint32_t i = 0; i < items.size(); ++i) {
    if (!counted(items[i])) continue;
    by_alloc.push_back(i);
    if (items[i].end_ns) by_end.push_back(i);
  }
  std::sort(by_alloc.begin(), by_alloc.end(), [&](uint32_t a, uint32_t b) { return items[a].alloc_ns < items[b].alloc_ns; });
  std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) { return *items[a].end_ns < *items[b].end_ns; });
  // The most live after all the changes at some time (before any: none),
  // those of `more` (time, bytes; sorted) beside the items'.
  auto most_live = [&](const std::vector<std::pair<int64_t, int64_t>>& more) {
    size_t a = 0, e = 0, m = 0;
    int64_t live = 0, peak = 0;
    for (;;) {
      int64_t at = INT64_MAX;
      if (a < by_alloc.size()) at = std::min(at, items[by_alloc[a]].alloc_ns);
      if (e < by_end.size()) at = std::min(at, *items[by_end[e]].end_ns);
      if (m < more.size()) at = std::min(at, more[m].first);
      if (at == INT64_MAX) return peak;
      for (; a < by_alloc.size() && items[by_alloc[a]].alloc_ns == at; ++a) live = saturating_add(live, items[by_alloc[a]].bytes);
      for (; e < by_end.size() && *items[by_end[e]].end_ns == at; ++e) live = saturating_add(live, -items[by_end[e]].bytes);
      for (; m < more.size() && more[m].first == at; ++m) live = saturating_add(live, more[m].second);
      peak = std::max(peak, live);
    }
  };
  std::vector<std::pair<int64_t, int64_t>> unused;
  for (const Group* group : device.groups) {
    for (const auto& [index, stretch] : group->alike) {
      int64_t bytes = items[index].bytes;
      unused.emplace_back(stretch.first, -bytes);
      unused.emplace_back(stretch.second, bytes);
    }
  }
  std::sort(unused.begin(), unused.end());
  return {most_live({}), most_live(unused)};
}

// A GPU whose peak stayed under `roomy_peak_share` of its memory could hold
// that much more already: bytes saved there buy nothing the program feels
// now, so the finding is minor (after the others, out of the default view).
// Host memory, and a GPU whose size the trace does not say, keep theirs.
// Growth (memory_leak) is never minor: a longer run reaches any size.
void minor_with_room_to_spare(const RuleContext& context, const memory::ItemOrigin& where, Finding& f) {
  const TraceFacts& facts = context.facts;
  const DeviceMemory* memory = nullptr;
  for (const DeviceMemory& d : facts.memory_model.devices) {
    if (d.process == where.process && d.device == where.device) memory = &d;
  }
  const trace::Device* gpu = nullptr;
  for (const trace::Device& d : facts.ops().devices()) {
    if (where.device && d.row->process == where.process && d.id() == *where.device) gpu = &d;
  }
  if (!memory || !gpu || gpu->row->total_memory_bytes.value_or(0) <= 0) return;
  int64_t capacity = *gpu->row->total_memory_bytes;
  double share = static_cast<double>(memory->peak_bytes) / static_cast<double>(capacity);
  if (share >= context.limits.roomy_peak_share) return;
  f.minor = true;
  f.estimate += std::string(f.estimate.empty() ? "" : "; ") + memory::device_name(where.device) + "'s peak, " +
                dvdg::format_bytes(memory->peak_bytes) + ", is " + std::to_string(static_cast<int>(100 * share + 0.5)) +
                "% of its " + dvdg::format_bytes(capacity) + ": the memory saved is not needed now";
}

// A finding of `rule` about one device's groups: its place, rows, names and
// table, and the bytes it takes off the peak: the peak's fall where the
// groups know their unused stretches, else all of their bytes. `fixed`
// says what the fix does to each piece ("freed right after its last use").
Finding device_finding(const RuleContext& context, const char* rule, const DeviceGroups& device, bool held,
                       const std::string& fixed = "") {
  Finding f;
  f.rule = rule;
  add_groups(context, f, device);
  add_group_table(context, f, device, held);
  f.saving_bytes = device.bytes;
  if (!fixed.empty()) {
    auto [before, after] = live_peak_before_and_after(context.facts, device);
    f.saving_bytes = std::max<int64_t>(0, before - after);
    f.estimate = "the fall of " + memory::device_name(context.facts.memory_model.origin(first_of(context.facts, device)).device) +
                 "'s peak of live memory with each piece " + fixed + " (" + dvdg::format_bytes(before) + " -> " +
                 dvdg::format_bytes(after) + "; the peak can move where they were not live)";
  }
  return f;
}

// Whether fixing them lowers the peak by a piece's worth: where another
// moment is as high without them, the pieces cost nothing, and the finding
// would only take a place among the few shown.
bool lowers_the_peak(const RuleContext& context, const Finding& finding) {
  return finding.saving_bytes >= context.limits.min_memory_bytes;
}

// "23 pieces of pytorch tensors memory (44.7 MiB)", a single block by its id;
// several groups: how many producers (or sites) made them.
std::string pieces(const TraceFacts& facts, const DeviceGroups& device) {
  const MemoryItem& first = first_of(facts, device);
  if (device.pieces == 1) return piece_name(facts, first);
  std::string owner = memory::owner_name(first.owner, first.allocator);
  for (const Group* group : device.groups) {
    const MemoryItem& item = facts.memory_model.items[group->items.front()];
    if (memory::owner_name(item.owner, item.allocator) != owner) owner = "program";
  }
  std::string text = std::to_string(device.pieces) + " pieces of " + owner + " memory (" +
                     dvdg::format_bytes(device.bytes) + ")";
  if (device.groups.size() > 1) text += " from " + std::to_string(device.groups.size()) + " producers or sites";
  return text;
}

std::string on_device(const TraceFacts& facts, const MemoryItem& item) {
  return memory::device_name(facts.memory_model.origin(item).device);
}

const char* is_are(const DeviceGroups& device) { return device.pieces == 1 ? " is " : " are "; }

// What makes pieces alike: who made them (the kernel, or the copy's
// direction; nobody for pieces never written) and their size, on one device
// of one process.
using PieceKind = std::tuple<trace::ProcessId, int64_t, int, int64_t, int64_t>;

PieceKind kind_of(const TraceFacts& facts, const MemoryItem& item) {
  int made_by = -1;
  int64_t name = -1;
  if (item.producer != memory::kNoOp) {
    const dvdg::Op& op = facts.graph.ops[item.producer];
    made_by = static_cast<int>(op.kind);
    name = op.kind == trace::OpKind::Kernel ? op.name_id : static_cast<int64_t>(op.copy_kind);
  }
  const memory::ItemOrigin& origin = facts.memory_model.origin(item);
  return {origin.process, origin.device.value_or(-1), made_by, name, item.bytes};
}

// An unused stretch of each piece, from `unused` (none: the piece does not
// qualify; stretches shorter than its second argument do not), that holds
// its device's peak: the pieces grouped, groups of fewer than
// min_memory_bytes left out; each group's `alike` from the whole run.
template <typename Unused>
std::map<std::string, Group> held_unused_at_peak(const RuleContext& context, Unused&& unused) {
  const TraceFacts& facts = context.facts;
  std::map<std::string, Group> groups;
  for (uint32_t i = 0; i < facts.memory_model.items.size(); ++i) {
    const MemoryItem& item = facts.memory_model.items[i];
    if (!programs_piece(item)) continue;
    std::optional<int64_t> peak = peak_of(facts, item);
    if (!peak || !item.live_at(*peak)) continue;
    std::optional<std::pair<int64_t, int64_t>> stretch = unused(item, context.limits.min_memory_idle_ns);
    if (!stretch || stretch->first > *peak || stretch->second <= *peak) continue;
    Group& group = groups[group_key(facts, item)];
    group.items.push_back(i);
    group.bytes = saturating_add(group.bytes, item.bytes);
    group.idle_ns = std::max(group.idle_ns, saturating_sub(stretch->second, stretch->first));
  }
  for (auto it = groups.begin(); it != groups.end();)
    it = it->second.bytes < context.limits.min_memory_bytes ? groups.erase(it) : std::next(it);
  std::map<PieceKind, Group*> kinds;
  for (auto& [key, group] : groups) {
    for (uint32_t index : group.items) kinds.emplace(kind_of(facts, facts.memory_model.items[index]), &group);
  }
  if (kinds.empty()) return groups;
  for (uint32_t i = 0; i < facts.memory_model.items.size(); ++i) {
    const MemoryItem& item = facts.memory_model.items[i];
    if (!programs_piece(item)) continue;
    auto found = kinds.find(kind_of(facts, item));
    if (found == kinds.end()) continue;
    // However short: the fix frees those held briefly too.
    if (std::optional<std::pair<int64_t, int64_t>> stretch = unused(item, 1)) found->second->alike.emplace_back(i, *stretch);
  }
  return groups;
}

// Kernels whose arguments were not recorded may have used anything live
// while they ran: (process, issued, ended) of each.
std::vector<std::tuple<trace::ProcessId, int64_t, int64_t>> opaque_kernels(const TraceFacts& facts) {
  std::vector<std::tuple<trace::ProcessId, int64_t, int64_t>> opaque;
  for (const dvdg::Op& op : facts.graph.ops) {
    if (op.arguments_unknown) opaque.emplace_back(op.process, op.issue_ns, op.end_ns);
  }
  return opaque;
}

bool maybe_used_unseen(const std::vector<std::tuple<trace::ProcessId, int64_t, int64_t>>& opaque,
                       const MemoryItem& item, trace::ProcessId process, int64_t trace_end_ns) {
  int64_t end = item.end_ns.value_or(trace_end_ns);
  return std::any_of(opaque.begin(), opaque.end(), [&](const auto& op) {
    return std::get<0>(op) == process && std::get<1>(op) <= end && std::get<2>(op) >= item.alloc_ns;
  });
}

// Every piece made on the backward pass's threads: held into the next
// step, they are gradients (or what a backward hook kept).
bool made_in_backward(const TraceFacts& facts, const DeviceGroups& device) {
  if (facts.backward_threads.empty()) return false;
  for (const Group* group : device.groups) {
    for (uint32_t index : group->items) {
      const MemoryItem& item = facts.memory_model.items[index];
      const memory::ItemOrigin& origin = facts.memory_model.origin(item);
      if (!origin.thread || !facts.backward_threads.count({origin.process, *origin.thread})) return false;
    }
  }
  return true;
}

}  // namespace

void memory_never_used(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  auto opaque = opaque_kernels(facts);
  auto groups = held_unused_at_peak(context, [&](const MemoryItem& item, int64_t) -> std::optional<std::pair<int64_t, int64_t>> {
    if (item.first_use_ns || maybe_used_unseen(opaque, item, facts.memory_model.origin(item).process, facts.end_ns())) return std::nullopt;
    return std::make_pair(item.alloc_ns, item.end_ns.value_or(INT64_MAX));
  });
  for (const DeviceGroups& device : by_device(facts, groups)) {
    const MemoryItem& first = first_of(facts, device);
    Finding f = device_finding(context, "memory_never_used", device, false, "never made");
    if (!lowers_the_peak(context, f)) continue;
    minor_with_room_to_spare(context, facts.memory_model.origin(first), f);
    add_name(f, piece_name(facts, first));
    f.what = pieces(facts, device) + " on " + on_device(facts, first) + is_are(device) +
             "live at its peak and never copied, set, or passed to a kernel";
    f.fix = "remove it (" + dvdg::format_bytes(device.bytes) + " held for nothing)";
    findings.push_back(std::move(f));
  }
}

void memory_allocated_early(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  auto groups = held_unused_at_peak(context, [&](const MemoryItem& item, int64_t min_idle_ns) -> std::optional<std::pair<int64_t, int64_t>> {
    if (!item.first_use_ns || *item.first_use_ns - item.alloc_ns < min_idle_ns)
      return std::nullopt;
    return std::make_pair(item.alloc_ns, *item.first_use_ns);
  });
  for (const DeviceGroups& device : by_device(facts, groups)) {
    const MemoryItem& first = first_of(facts, device);
    Finding f = device_finding(context, "memory_allocated_early", device, true, "allocated at its first use");
    if (!lowers_the_peak(context, f)) continue;
    minor_with_room_to_spare(context, facts.memory_model.origin(first), f);
    f.what = pieces(facts, device) + " on " + on_device(facts, first) + is_are(device) + "allocated up to " +
             format_ns(device.idle_ns) + " before first use, still unused at the peak";
    f.fix = "allocate it just before its first use" +
            (f.names.empty() ? std::string() : " (" + f.names.front() + ")");
    findings.push_back(std::move(f));
  }
}

void memory_freed_late(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  auto groups = held_unused_at_peak(context, [&](const MemoryItem& item, int64_t min_idle_ns) -> std::optional<std::pair<int64_t, int64_t>> {
    if (!item.last_use_ns) return std::nullopt;
    int64_t end = item.end_ns.value_or(facts.end_ns());
    if (end - *item.last_use_ns < min_idle_ns) return std::nullopt;
    // Never freed: held to the end of the trace, not to the end of time.
    return std::make_pair(*item.last_use_ns, end);
  });
  for (const DeviceGroups& device : by_device(facts, groups)) {
    const MemoryItem& first = first_of(facts, device);
    Finding f = device_finding(context, "memory_freed_late", device, true, "freed right after its last use");
    if (!lowers_the_peak(context, f)) continue;
    minor_with_room_to_spare(context, facts.memory_model.origin(first), f);
    bool gradients = made_in_backward(facts, device);
    f.what = pieces(facts, device) + (gradients ? " made in the backward pass (likely gradients)" : "") + " on " +
             on_device(facts, first) + is_are(device) + "held up to " + format_ns(device.idle_ns) +
             " after last use, through the peak";
    // Gradients live until the optimizer zeroes them: zeroed after the next
    // forward pass, they are held through its activations' peak.
    f.fix = gradients ? "clear the gradients as soon as the optimizer has stepped: "
                        "optimizer.zero_grad(set_to_none=True) right after optimizer.step(), "
                        "not after the next forward pass"
                      : "free it (drop the last reference) right after its last use";
    findings.push_back(std::move(f));
  }
}

void memory_cached_at_peak(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  for (const DeviceMemory& device : facts.memory_model.devices) {
    for (const memory::OwnerBytes& owner : device.at_peak) {
      if (owner.owner != Owner::FrameworkCache || owner.bytes < context.limits.min_cached_bytes ||
          static_cast<double>(owner.bytes) < context.limits.min_cached_fraction * static_cast<double>(device.peak_bytes))
        continue;
      Finding f;
      f.rule = "memory_cached_at_peak";
      std::string allocator = memory::owner_name(Owner::FrameworkTensors, owner.allocator);
      allocator = allocator.substr(0, allocator.find(' '));
      f.what = "the " + allocator + " allocator keeps " + dvdg::format_bytes(owner.bytes) + " of free space cached in " +
               std::to_string(owner.items) + " segment(s) at " + memory::device_name(device.device) + "'s peak (" +
               dvdg::format_bytes(device.peak_bytes) + " in use)";
      for (const memory::LiveItem& live : device.live_at_peak) {
        const MemoryItem& item = facts.memory_model.items[live.item];
        if (item.is_segment() && item.allocator == owner.allocator && live.bytes > 0)
          add_row(context, f, "allocations", item.id);
      }
      f.names.push_back(memory::owner_name(Owner::FrameworkCache, owner.allocator));
      f.saving_bytes = owner.bytes;
      f.estimate = "the cached bytes at the peak (at most what releasing the cache saves: fragmentation may keep some)";
      minor_with_room_to_spare(context, {device.process, device.device}, f);
      f.fix = allocator == "pytorch"
                  ? "release the cache between phases (torch.cuda.empty_cache()), or cut fragmentation with "
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                  : "release the pool's free blocks between phases (free_all_blocks())";
      findings.push_back(std::move(f));
    }
  }
}

void memory_leak(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  for (const DeviceMemory& device : facts.memory_model.devices) {
    // The first step sets things up (optimizer state, caches): growth counts after it.
    if (device.steps.size() < 4) continue;
    const memory::StepMemory& from = device.steps[1];
    const memory::StepMemory& to = device.steps.back();
    size_t growing = 0, transitions = device.steps.size() - 2;
    for (size_t s = 2; s < device.steps.size(); ++s) growing += device.steps[s].live > device.steps[s - 1].live;
    if (to.live - from.live < context.limits.min_leak_bytes || growing * 4 < transitions * 3) continue;
    // The pieces made in those steps and still live after the last one, by
    // producer; a group made in most steps is what grows.
    std::map<std::string, Group> groups;
    std::map<std::string, std::set<int64_t>> steps_seen;
    for (uint32_t i = 0; i < facts.memory_model.items.size(); ++i) {
      const MemoryItem& item = facts.memory_model.items[i];
      if (!facts.memory_model.on_device(item, device) || !programs_piece(item)) continue;
      if (item.alloc_ns < from.start_ns || item.alloc_ns >= to.end_ns || (item.end_ns && *item.end_ns < to.end_ns))
        continue;
      std::string key = group_key(facts, item);
      Group& group = groups[key];
      group.items.push_back(i);
      group.bytes = saturating_add(group.bytes, item.bytes);
      auto step = std::upper_bound(device.steps.begin(), device.steps.end(), item.alloc_ns,
                                   [](int64_t ns, const memory::StepMemory& s) { return ns < s.start_ns; });
      if (step != device.steps.begin() && item.alloc_ns < std::prev(step)->end_ns)
        steps_seen[key].insert(std::prev(step)->number);
    }
    // Groups made in most steps grow; together they are the leak.
    size_t steps = device.steps.size() - 1;
    std::map<std::string, Group> growing_groups;
    for (auto& [key, group] : groups) {
      group.steps = steps_seen[key].size();
      if (group.steps * 2 >= steps) growing_groups.emplace(key, std::move(group));
    }
    for (const DeviceGroups& kept : by_device(facts, growing_groups)) {
      if (kept.bytes < context.limits.min_leak_bytes) continue;
      int64_t at_peak = 0;
      int64_t per_step = 0;
      for (const Group* group : kept.groups) {
        for (uint32_t index : group->items) {
          const MemoryItem& item = facts.memory_model.items[index];
          if (!device.peak_ns.empty() && item.live_at(device.at_ns)) at_peak += item.bytes;
        }
        per_step += group->bytes / static_cast<int64_t>(group->steps);
      }
      Finding f = device_finding(context, "memory_leak", kept, false);
      f.what = "live memory on " + memory::device_name(device.device) + " grows from " + dvdg::format_bytes(from.live) +
               " after step " + std::to_string(from.number) + " to " + dvdg::format_bytes(to.live) + " after step " +
               std::to_string(to.number) + ": " + dvdg::format_bytes(per_step) + " a step is made and kept (" +
               std::to_string(kept.pieces) + (kept.pieces == 1 ? " block" : " blocks") + " in all)";
      f.saving_bytes = at_peak > 0 ? at_peak : kept.bytes;
      f.estimate = at_peak > 0 ? "the kept blocks' bytes at the peak"
                               : "the kept blocks' bytes after the last step (none is live at the peak)";
      // A scalar loss can be a view of its op's whole output (mse_loss's):
      // .detach() keeps that storage, .detach().clone() the value alone.
      f.fix = "stop keeping them across steps (a list they are appended to, a tensor kept for logging: keep "
              ".detach().clone(), which copies the value alone without waiting for the GPU, or .item())";
      findings.push_back(std::move(f));
    }
  }
}

}  // namespace apptracer::diagnose
