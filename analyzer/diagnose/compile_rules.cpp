// A framework's compiler at work after start-up: XLA compiles a jitted
// function again for each new input shape (or static argument) it meets, and
// the step that meets one waits for the tracing, lowering and compiling of
// it. One finding for all of it, as start-up is one; what the compiler's own
// work set off meanwhile (its autotuner's trial launches, copies and
// synchronizations, findings marked while_compiling) is folded into it.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/diagnose/rules.h"
#include "analyzer/model/median.h"

namespace apptracer::diagnose {

namespace {

// XLA's range around one compile of a jitted function: "XlaCompile:#module=
// jit_train_step#" (its backend's, passes' and assembler's ranges are parts
// of one compile).
constexpr std::string_view kCompileRange = "XlaCompile:";

// "jit_train_step" of "XlaCompile:#module=jit_train_step#".
std::string_view compiled_function(std::string_view range) {
  std::string_view rest = range.substr(kCompileRange.size());
  size_t at = rest.find("module=");
  if (at == std::string_view::npos) return rest;
  rest.remove_prefix(at + 7);
  return rest.substr(0, rest.find_first_of("#,"));
}

struct Compile {
  int64_t process = 0;
  std::string_view function;
  int64_t start_ns = 0, end_ns = 0;
  bool again = false;  // the process compiled this function before
};

// Every compile of the trace (NVTX ranges are never limited to steps), in
// order of start, each knowing whether its function was compiled before.
std::vector<Compile> compiles_of(const TraceFacts& facts) {
  std::vector<Compile> compiles;
  std::set<std::pair<int64_t, std::string_view>> seen;
  for (const NvtxRange& r : facts.ops().nvtx()) {
    if (r.name.substr(0, kCompileRange.size()) != kCompileRange) continue;
    Compile c{r.row->process, compiled_function(r.name), r.start_ns(), r.end_ns(), false};
    c.again = !seen.insert({c.process, c.function}).second;
    compiles.push_back(c);
  }
  return compiles;
}

// A stretch the finding is about: a step in which the compiler ran (or,
// without steps, the run), and how much longer it took than a step without.
struct Stretch {
  int64_t process = 0;
  int64_t number = 0;  // the step's; 0: the run
  int64_t start_ns = 0, end_ns = 0;
  int64_t excess_ns = 0;
};

std::vector<Stretch> compiling_stretches(const TraceFacts& facts) {
  std::vector<Stretch> stretches;
  const std::vector<trace::StepSpan>& steps = facts.ops().steps();
  if (steps.empty()) {
    // The run: every compile of each process, wherever its work was.
    for (const auto& [process, span] : facts.ops().span().processes) {
      int64_t ns = facts.compiled_ns(process, INT64_MIN, INT64_MAX);
      if (ns > 0) stretches.push_back({process, 0, INT64_MIN, INT64_MAX, ns});
    }
    return stretches;
  }
  // A step that compiled also holds the host's tracing and lowering of the
  // new shape, outside the compiler's ranges: its cost is what it took over
  // the median step that did not compile.
  std::vector<int64_t> plain;
  for (const trace::StepSpan& s : steps) {
    if (facts.compiled_ns(s.process, s.start_ns, s.end_ns) > 0) {
      stretches.push_back({s.process, s.number, s.start_ns, s.end_ns, 0});
    } else {
      plain.push_back(elapsed_ns(s.start_ns, s.end_ns));
    }
  }
  // Where every step compiled there is no such step: the compiler's time.
  bool none_plain = plain.empty();
  int64_t step_ns = model::middle_value(std::move(plain));
  for (Stretch& s : stretches) {
    int64_t over = none_plain ? 0 : elapsed_ns(s.start_ns, s.end_ns) - step_ns;
    s.excess_ns = std::max(facts.compiled_ns(s.process, s.start_ns, s.end_ns), over);
  }
  return stretches;
}

std::string compile_fix(trace::Framework framework) {
  if (framework != trace::Framework::Jax) {
    return "keep the compiled function's input shapes fixed (pad the last batch, bucket lengths), so that "
           "what was compiled first runs again";
  }
  return "keep a jitted function's input shapes and static arguments fixed (drop or pad the last batch, "
         "bucket sequence lengths); jax.config.update(\"jax_explain_cache_misses\", True) logs why each "
         "compile happened; a persistent cache (jax_compilation_cache_dir) keeps compiled executables "
         "between runs";
}

}  // namespace

void xla_compile(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  std::vector<Stretch> stretches = compiling_stretches(facts);
  if (stretches.empty()) return;
  std::vector<Compile> compiles = compiles_of(facts);
  // Per function: its compiles in the stretches, how many again, their time.
  struct Function {
    int64_t compiles = 0, again = 0, ns = 0;
  };
  std::map<std::string_view, Function> functions;
  int64_t cost = 0, saving = 0, count = 0;
  std::string numbers;
  for (const Stretch& s : stretches) {
    cost = saturating_add(cost, s.excess_ns);
    bool all_again = true, any = false;
    for (const Compile& c : compiles) {
      if (c.process != s.process || c.start_ns < s.start_ns || c.start_ns >= s.end_ns) continue;
      Function& f = functions[c.function];
      ++f.compiles;
      f.again += c.again;
      f.ns = saturating_add(f.ns, elapsed_ns(c.start_ns, c.end_ns));
      all_again &= c.again;
      any = true;
      ++count;
    }
    // Only a step that compiled nothing new is saved whole by fixed shapes:
    // a function met for the first time compiles once wherever it is met.
    if (any && all_again) saving = saturating_add(saving, s.excess_ns);
    if (s.number > 0 && std::count(numbers.begin(), numbers.end(), ',') < 8)
      numbers += (numbers.empty() ? "" : ", ") + std::to_string(s.number);
  }
  if (cost < context.limits.min_cost_ns) return;
  std::vector<std::pair<std::string_view, Function>> ranked(functions.begin(), functions.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  bool with_steps = !facts.ops().steps().empty();
  Finding f;
  f.rule = "xla_compile";
  int64_t again = 0;
  std::string named;
  for (size_t i = 0; i < ranked.size(); ++i) {
    again += ranked[i].second.again;
    if (i < 3) named += (i ? ", " : "") + std::string(ranked[i].first) + " " + std::to_string(ranked[i].second.compiles);
  }
  if (ranked.size() > 3) named += ", ...";
  f.what = with_steps ? "XLA compiled in " + std::to_string(stretches.size()) + " of the " +
                            std::to_string(facts.step_count()) + " steps (" + numbers +
                            (stretches.size() > 9 ? ", ..." : "") + ")" +
                            (static_cast<int64_t>(stretches.size()) < facts.step_count()
                                 ? ", which took " + format_ns(cost) + " longer than steps that did not"
                                 : ", for " + format_ns(cost))
                      : "XLA compiled for " + format_ns(cost) + " of the run";
  if (count > 0) {
    f.what += ": " + std::to_string(count) + " compile(s) of " + std::to_string(ranked.size()) + " function(s), " +
              (again == count ? "all" : std::to_string(again)) + " compiled before (" + named + ")";
  }
  f.names.push_back("XLA compile");
  f.cost_ns = cost;
  f.startup = true;  // paid once per new shape, not a share of every step
  if (saving > 0) {
    f.saving_ns = saving;
    f.estimate = "the extra time of the steps that compiled only functions compiled before (a new input "
                 "shape or static argument): with those fixed, what was compiled first runs again; a "
                 "function met for the first time compiles once wherever it is met";
  } else {
    f.estimate = with_steps ? "the steps compiled functions met for the first time: they compile once "
                              "wherever they are met"
                            : "a run without steps: which compiles are new shapes of one function is "
                              "not known apart from start-up";
  }
  f.fix = compile_fix(facts.framework);
  f.details = {"compiles", {"function", "compiles", "compiled_before", "compile_ns"}, {}};
  for (const auto& [name, fn] : ranked) f.details.rows.push_back({std::string(name), fn.compiles, fn.again, fn.ns});
  f.details.text_rows = 8;
  findings.push_back(std::move(f));
}

std::vector<Finding> fold_compiler_work(std::vector<Finding> findings) {
  auto target = std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.rule == "xla_compile"; });
  if (target == findings.end()) {
    target = std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.rule == "startup"; });
  }
  if (target == findings.end()) return findings;
  std::map<std::string, int64_t> folded;
  std::vector<Finding> kept;
  size_t into = 0;
  for (Finding& f : findings) {
    if (f.while_compiling && !f.correctness) {
      ++folded[f.rule];
      continue;
    }
    if (&f == &*target) into = kept.size();
    kept.push_back(std::move(f));
  }
  if (folded.empty()) return kept;
  std::vector<std::pair<std::string, int64_t>> by_count(folded.begin(), folded.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  int64_t total = 0;
  std::string rules;
  for (const auto& [rule, n] : by_count) {
    total += n;
    rules += (rules.empty() ? "" : ", ") + rule + " " + std::to_string(n);
  }
  kept[into].what += "; the compiler's own work then (its autotuner's copies and synchronizations: " +
                     std::to_string(total) + " findings, " + rules + ") is part of it";
  return kept;
}

}  // namespace apptracer::diagnose
