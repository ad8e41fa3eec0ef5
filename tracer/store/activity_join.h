// Joining GPU activity (start and end on the GPU) to the row its API call
// made, by correlation id, in whichever order the two reach the writer.
//
// A row waits in memory for its activity and is inserted once, complete:
// writing it first and updating it later would double the writer's work per
// launch. A row whose activity has not come within its wait (ActivityWait:
// writer passes and time) is inserted without it and remembered a while longer ("late", by
// its id alone: the row is in the database): if its activity still comes,
// the row is read back and stored again, whole. Activity whose
// row never comes (graph launches, work from untraced entry points) becomes
// a row of its own after the same wait.
//
// `Traits` says how activity fills a row: apply(row, activity, first),
// activity_only(activity) -> Row, and kMoreActivityMayCome (a copy may reach
// the GPU as several transfers; a kernel or memset runs once).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apptracer/records.h"

namespace apptracer {

// How long a row waits for its GPU activity.
struct ActivityWait {
  // Writer passes a row waits before it is stored without its activity (0:
  // GPU activity is not recorded in this process).
  int hold_passes = 2;
  // And at least this long since the pass before the one that brought it:
  // the writer passes as often as a buffer fills (every few milliseconds in
  // a training loop) while the GPU may run a whole step behind the launches,
  // and a row stored before its activity comes is read back and stored
  // again, whole.
  uint64_t hold_ns = 0;
  // Passes a row stored without its activity is kept, in case it comes.
  int late_passes = 25;
};

template <typename Row, typename Traits>
class ActivityJoin {
 public:
  // `insert(row, replace)` stores a row and sets its id (replace: stored
  // before); `load(id)` reads a stored row back (nothing: no such row).
  ActivityJoin(ActivityWait wait, std::function<void(Row&, bool replace)> insert,
               std::function<std::optional<Row>(int64_t id)> load)
      : wait_(wait),
        insert_(std::move(insert)),
        load_(std::move(load)) {}

  // The API-side row of a call: `outer` is the correlation id GPU activity of
  // runtime-launched work carries, `own` the id of the (nested) call that
  // made it. `awaiting_more`: something else must arrive before it is stored
  // (kernel arguments, see update()).
  void add_row(Row row, uint32_t outer, uint32_t own, bool awaiting_more = false) {
    Pending pending{std::move(row), pass_, last_pass_ns_, false, awaiting_more, own, outer, true};
    take_held(pending, outer);
    if (own != outer) take_held(pending, own);
    if (pending.has_activity && !pending.awaiting_more) {
      store(pending, outer);
      return;
    }
    auto older = index_.find(outer);
    if (older != index_.end()) {
      // A second row under the same call: the older one gives up its claim.
      Pending& old = slot(older->second);
      flush(outer, old);
      old.live = false;
      index_.erase(older);
    }
    pending.outer = outer;
    index_[outer] = first_sequence_ + (slots_.size() - front_);
    slots_.push_back(std::move(pending));
    if (own != outer) aliases_[own] = outer;
  }

  // Changes the row of call `outer` wherever it is: still waiting (`completes`:
  // it awaits nothing more but its activity) or already stored (stored again).
  template <typename Change>
  void update(uint32_t outer, Change&& change, bool completes) {
    if (Pending* pending = find(outer)) {
      change(pending->row);
      if (completes) pending->awaiting_more = false;
      if (pending->has_activity && !pending->awaiting_more) {
        store(*pending, outer);
        retire(*pending);
      }
      return;
    }
    Late* late = find_late(outer);
    std::optional<Row> row = late ? load_(late->row_id) : std::nullopt;
    if (row) {
      change(*row);
      insert_(*row, true);
      ++stored_again_;
    }
  }

  void add_activity(const Record& activity) {
    uint32_t id = activity.correlation_id;
    Pending* pending = find(id);
    if (!pending) {
      auto alias = aliases_.find(id);
      if (alias != aliases_.end()) pending = find(alias->second);
    }
    if (pending && (!pending->has_activity || Traits::kMoreActivityMayCome)) {
      Traits::apply(pending->row, activity, !pending->has_activity);
      pending->has_activity = true;
      if (!pending->awaiting_more) {
        store(*pending, pending->outer);
        retire(*pending);
      }
      return;
    }
    Late* late = find_late(id);
    std::optional<Row> row;
    if (late && (!late->has_activity || Traits::kMoreActivityMayCome)) row = load_(late->row_id);
    if (row) {
      Traits::apply(*row, activity, !late->has_activity);
      late->has_activity = true;
      insert_(*row, true);
      ++stored_again_;
      return;
    }
    held_[id].push_back(Held{activity, pass_, last_pass_ns_});
  }

  // Once per writer pass, `pass_ns` when it began draining: rows and
  // activity that waited long enough are stored.
  void end_pass(uint64_t pass_ns) {
    ++pass_;
    // Oldest first, so rows stored together keep the order their calls came
    // in; the rows after the first that must wait on are younger still.
    for (size_t i = front_; i < slots_.size(); ++i) {
      Pending& pending = slots_[i];
      if (!pending.live) continue;
      if (!waited_enough(pending.pass, pending.since_ns, pass_ns)) break;
      flush(pending.outer, pending);
      retire(pending);
    }
    drop_retired();
    for (auto it = held_.begin(); it != held_.end();) {
      const Held& oldest = it->second.front();
      if (waited_enough(oldest.pass, oldest.since_ns, pass_ns)) {
        for (const Held& held : it->second) store_activity_only(held.record);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
    while (late_front_ < late_rows_.size() && late_rows_[late_front_].pass + wait_.late_passes < pass_) {
      late_index_.erase(late_rows_[late_front_].id);
      ++late_front_;
      ++late_first_sequence_;
    }
    if (late_front_ * 2 >= late_rows_.size()) {
      late_rows_.erase(late_rows_.begin(), late_rows_.begin() + static_cast<long>(late_front_));
      late_front_ = 0;
    }
    last_pass_ns_ = pass_ns;
  }

  // Whether a row has waited a whole pass for activity: time to ask CUPTI
  // for what it holds.
  bool waiting() const {
    for (size_t i = front_; i < slots_.size(); ++i) {
      const Pending& pending = slots_[i];
      if (pending.pass == pass_) return false;  // this pass's rows, and all after
      if (pending.live && !pending.has_activity) return true;
    }
    return false;
  }

  // Rows stored again because what they waited for came after they were
  // stored (the work the hold saves).
  uint64_t stored_again() const { return stored_again_; }

  // The end: everything still waiting is stored as it is.
  void finish() {
    for (size_t i = front_; i < slots_.size(); ++i) {
      if (slots_[i].live) insert_(slots_[i].row, false);
    }
    slots_.clear();
    front_ = 0;
    index_.clear();
    first_sequence_ = 0;
    aliases_.clear();
    for (auto& [id, held] : held_) {
      for (const Held& h : held) store_activity_only(h.record);
    }
    held_.clear();
    late_index_.clear();
    late_rows_.clear();
    late_front_ = 0;
    late_first_sequence_ = 0;
  }

 private:
  struct Pending {
    Row row;
    int64_t pass;      // the passes that had ended when it came
    uint64_t since_ns;  // when the pass before it began
    bool has_activity;
    bool awaiting_more;
    uint32_t own;
    uint32_t outer;
    bool live;  // false once stored: its slot waits to be dropped from the front
  };
  struct Held {
    Record record;
    int64_t pass;
    uint64_t since_ns;
  };
  struct Late {
    int64_t row_id;
    int64_t pass;  // when it was remembered
    uint32_t id;
    bool has_activity;
  };

  // Activity that came before its row. A copy takes all its transfers; a
  // kernel or memset takes one (others under the same id are other work).
  void take_held(Pending& pending, uint32_t id) {
    auto held = held_.find(id);
    if (held == held_.end()) return;
    auto& records = held->second;
    size_t taken = 0;
    while (taken < records.size() &&
           (taken == 0 || Traits::kMoreActivityMayCome) &&
           (!pending.has_activity || Traits::kMoreActivityMayCome)) {
      Traits::apply(pending.row, records[taken].record, !pending.has_activity);
      pending.has_activity = true;
      ++taken;
    }
    records.erase(records.begin(), records.begin() + static_cast<long>(taken));
    if (records.empty()) held_.erase(held);
  }

  Pending& slot(uint64_t sequence) { return slots_[front_ + (sequence - first_sequence_)]; }

  Pending* find(uint32_t outer) {
    auto it = index_.find(outer);
    return it == index_.end() ? nullptr : &slot(it->second);
  }

  void retire(Pending& pending) {
    if (pending.own != pending.outer) aliases_.erase(pending.own);
    index_.erase(pending.outer);
    pending.live = false;
  }

  void drop_retired() {
    while (front_ < slots_.size() && !slots_[front_].live) {
      ++front_;
      ++first_sequence_;
    }
    // Dropped slots are erased in bulk once they are half the vector: each
    // row moves at most about once, and the storage is reused.
    if (front_ * 2 >= slots_.size()) {
      slots_.erase(slots_.begin(), slots_.begin() + static_cast<long>(front_));
      front_ = 0;
    }
  }

  void store(Pending& pending, uint32_t outer) {
    insert_(pending.row, false);
    if (Traits::kMoreActivityMayCome) remember_late(outer, pending);
  }

  // Stored without (all of) its activity: remembered in case it comes.
  void flush(uint32_t outer, Pending& pending) {
    insert_(pending.row, false);
    remember_late(outer, pending);
  }

  void remember_late(uint32_t outer, const Pending& pending) {
    for (uint32_t id : {outer, pending.own}) {
      late_index_[id] = late_first_sequence_ + (late_rows_.size() - late_front_);
      late_rows_.push_back(Late{*pending.row.id.value, pass_, id, pending.has_activity});
      if (pending.own == outer) break;
    }
  }

  Late* find_late(uint32_t id) {
    auto it = late_index_.find(id);
    return it == late_index_.end() ? nullptr
                                   : &late_rows_[late_front_ + (it->second - late_first_sequence_)];
  }

  void store_activity_only(const Record& activity) {
    Row row = Traits::activity_only(activity);
    insert_(row, false);
  }

  bool waited_enough(int64_t came_at_pass, uint64_t since_ns, uint64_t pass_ns) const {
    return pass_ - came_at_pass > wait_.hold_passes &&
           (wait_.hold_ns == 0 || (pass_ns > since_ns && pass_ns - since_ns >= wait_.hold_ns));
  }

  ActivityWait wait_;
  std::function<void(Row&, bool)> insert_;
  std::function<std::optional<Row>(int64_t)> load_;
  int64_t pass_ = 0;
  uint64_t last_pass_ns_ = 0;  // when the last ended pass began
  uint64_t stored_again_ = 0;
  // Waiting rows, oldest first, from slots_[front_]. A vector, not a deque:
  // a deque block holds one or two rows this size, so each row cost a malloc.
  std::vector<Pending> slots_;
  size_t front_ = 0;
  uint64_t first_sequence_ = 0;  // sequence number of slots_[front_]
  std::unordered_map<uint32_t, uint64_t> index_;           // outer correlation id -> sequence
  std::unordered_map<uint32_t, uint32_t> aliases_;        // own -> outer, for nested calls
  std::unordered_map<uint32_t, std::vector<Held>> held_;  // activity before its row
  // Stored rows whose activity may still come, oldest first from
  // late_rows_[late_front_], found by id through late_index_ (id -> sequence).
  // Every copy is remembered for `late_passes` passes, which can be millions
  // when the writer is behind: a few words each in a reused vector, not the
  // row (a copy's row was 450 bytes, and faulting in pages for them took a
  // fifth of the writer's time on a copy loop).
  std::vector<Late> late_rows_;
  size_t late_front_ = 0;
  uint64_t late_first_sequence_ = 0;
  std::unordered_map<uint32_t, uint64_t> late_index_;
};

}  // namespace apptracer
