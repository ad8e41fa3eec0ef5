#include "analyzer/diff/profile_diff.h"

#include <algorithm>
#include <stdexcept>

#include "apptracer/saturating.h"

namespace apptracer::diff {

namespace {

struct Row {
  std::string category;
  std::string name;
  std::string route;
  std::string change;
  std::vector<int64_t> a, b;

  int64_t difference(size_t measure) const { return saturating_sub(b[measure], a[measure]); }
};

std::string change_of(const std::vector<int64_t>* a, const std::vector<int64_t>* b) {
  if (!a) return "appeared";
  if (!b) return "disappeared";
  return *a == *b ? "same" : "changed";
}

// Every key of either profile, once, with its measures in each (zeros where
// absent).
std::vector<Row> side_by_side(const Profile& a, const Profile& b) {
  std::map<ProfileKey, std::pair<const std::vector<int64_t>*, const std::vector<int64_t>*>> keys;
  for (const auto& [key, entry] : a.entries) keys[key].first = &entry;
  for (const auto& [key, entry] : b.entries) keys[key].second = &entry;
  std::vector<int64_t> zeros(a.measures.size(), 0);
  std::vector<Row> rows;
  for (const auto& [key, entries] : keys) {
    rows.push_back({key.category, key.name, key.route, change_of(entries.first, entries.second),
                    entries.first ? *entries.first : zeros, entries.second ? *entries.second : zeros});
  }
  return rows;
}

// Pairs what disappeared from a route with what appeared on it, in name
// order, into one row: the same work moved to another path.
std::vector<Row> pair_changed_paths(std::vector<Row> rows) {
  using Route = std::pair<std::string, std::string>;
  std::map<Route, std::vector<Row>> gone, came;
  std::vector<Row> paired;
  for (Row& row : rows) {
    if (!row.route.empty() && row.change == "disappeared") {
      gone[{row.category, row.route}].push_back(std::move(row));
    } else if (!row.route.empty() && row.change == "appeared") {
      came[{row.category, row.route}].push_back(std::move(row));
    } else {
      paired.push_back(std::move(row));
    }
  }
  for (auto& [route, before] : gone) {
    std::vector<Row>& after = came[route];
    size_t pairs = std::min(before.size(), after.size());
    for (size_t i = 0; i < pairs; ++i) {
      paired.push_back({route.first, before[i].name + " -> " + after[i].name, route.second,
                        "path changed", before[i].a, after[i].b});
    }
    paired.insert(paired.end(), before.begin() + pairs, before.end());
    after.erase(after.begin(), after.begin() + pairs);
  }
  for (auto& [route, after] : came) paired.insert(paired.end(), after.begin(), after.end());
  return paired;
}

uint64_t magnitude(int64_t value) {
  // Unsigned: |INT64_MIN| does not fit an int64_t.
  return value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
}

}  // namespace

Table diff_profiles(const std::string& table_name, const Profile& a, const Profile& b,
                    const std::vector<std::string>& impacts) {
  if (a.measures != b.measures) throw std::invalid_argument("diff: profiles measure different things");
  std::vector<size_t> order;
  for (const std::string& impact : impacts) {
    auto impact_at = std::find(a.measures.begin(), a.measures.end(), impact);
    if (impact_at == a.measures.end()) throw std::invalid_argument("diff: no measure " + impact);
    order.push_back(static_cast<size_t>(impact_at - a.measures.begin()));
  }
  for (size_t m = 0; m < a.measures.size(); ++m) {
    if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
  }
  std::vector<Row> rows = pair_changed_paths(side_by_side(a, b));
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& x, const Row& y) {
    for (size_t m : order) {
      if (magnitude(x.difference(m)) != magnitude(y.difference(m))) {
        return magnitude(x.difference(m)) > magnitude(y.difference(m));
      }
    }
    return false;
  });
  Table table{table_name, {"category", "name", "change"}, {}};
  for (const std::string& measure : a.measures) {
    table.columns.insert(table.columns.end(), {measure + "_a", measure + "_b", measure + "_diff"});
  }
  for (const Row& row : rows) {
    std::vector<Cell> cells{row.category, row.name, row.change};
    for (size_t m = 0; m < a.measures.size(); ++m) {
      cells.insert(cells.end(), {row.a[m], row.b[m], row.difference(m)});
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

}  // namespace apptracer::diff
