#include "analyzer/diagnose/site_groups.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "apptracer/saturating.h"
#include "analyzer/diagnose/rules.h"

namespace apptracer::diagnose {

std::string without_numbers(const std::string& text, const std::string& marker) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool at_marker = marker.empty() || (i >= marker.size() &&
                                        text.compare(i - marker.size(), marker.size(), marker) == 0);
    if (std::isdigit(static_cast<unsigned char>(text[i])) && at_marker) {
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      out += '#';
    } else {
      out += text[i++];
    }
  }
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + ";";
  return text;
}

}  // namespace

// Findings that ask for different fixes are different problems, even at one
// site (data copied back vs uploaded again): the fix, numbers aside, is part
// of the site. So is start-up: waste paid once before the steady steps is
// not the problem of every step that repeats it at the same site. A
// compiler's work is one site on whichever of its worker threads it ran.
std::string site_of(const Finding& finding) {
  return finding.rule + "|" + without_numbers(joined(finding.names), "alloc #") + "|" +
         without_numbers(finding.nvtx, "") + "|" +
         (finding.while_compiling ? without_numbers(finding.call_site, "thread ") : finding.call_site) + "|" +
         without_numbers(finding.fix, "") + (finding.startup ? "|start-up" : "");
}

std::vector<Finding> group_by_site(std::vector<Finding> findings, size_t max_rows) {
  // The costliest occurrence speaks for its site: a 20 ms straggler must not
  // hide behind the first of many 3 ms ones.
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.cost_ns > b.cost_ns; });
  std::vector<Finding> groups;
  std::unordered_map<std::string, size_t> by_site;
  std::vector<std::string> last_nvtx;
  std::vector<bool> merged;
  for (Finding& f : findings) {
    auto [found, added] = by_site.try_emplace(site_of(f), groups.size());
    if (added) {
      last_nvtx.push_back(f.nvtx);
      merged.push_back(false);
      groups.push_back(std::move(f));
      continue;
    }
    merged[found->second] = true;
    Finding& group = groups[found->second];
    group.occurrences = saturating_add(group.occurrences, f.occurrences);
    group.events = saturating_add(group.events, f.events);
    group.cost_ns = saturating_add(group.cost_ns, f.cost_ns);
    if (group.saving_ns && f.saving_ns) {
      group.saving_ns = saturating_add(*group.saving_ns, *f.saving_ns);
    } else {
      group.saving_ns.reset();
    }
    if (group.saving_bytes || f.saving_bytes)
      group.saving_bytes = saturating_add(group.saving_bytes.value_or(0), f.saving_bytes.value_or(0));
    for (const Evidence& e : f.rows) {
      if (group.rows.size() >= max_rows) break;
      if (std::find_if(group.rows.begin(), group.rows.end(), [&](const Evidence& known) {
            return known.row == e.row && known.table == e.table;
          }) == group.rows.end())
        group.rows.push_back(e);
    }
    for (const std::string& name : f.names) add_name(group, name);
    if (!f.nvtx.empty()) last_nvtx[found->second] = f.nvtx;
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    Finding& group = groups[i];
    // A rule's own group of occurrences says so itself.
    if (!merged[i]) continue;
    group.what += "; " + std::to_string(group.occurrences) +
                  " times at this site in all (other buffers or steps alike): cost and saving "
                  "are the totals";
    if (last_nvtx[i] != group.nvtx)
      group.what += ", from NVTX range " + group.nvtx + " to " + last_nvtx[i];
  }
  return groups;
}

}  // namespace apptracer::diagnose
