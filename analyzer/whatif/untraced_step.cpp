#include "analyzer/whatif/untraced_step.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "analyzer/trace/trace_file.h"
#include "analyzer/whatif/phases.h"

namespace apptracer::whatif {

namespace {

int64_t scaled(int64_t ns, double factor) {
  return static_cast<int64_t>(std::llround(static_cast<double>(ns) * factor));
}

}  // namespace

void scale_program_host_time(const ReplayInput& input, double factor, NodeTiming& t) {
  for (size_t c = 0; c < input.calls.size(); ++c) {
    const HostCall& call = input.calls[c];
    if (call.woken_by >= 0) {
      t.call_wake[c] = scaled(t.call_wake[c], factor);
    } else if (call.previous >= 0) {
      t.call_gap[c] = scaled(t.call_gap[c], factor);
    }
  }
}

FittedHostTime fit_program_host_time(int64_t target_ns, const std::function<int64_t(double)>& step_ns) {
  auto close_enough = [&](int64_t ns) { return std::llabs(ns - target_ns) * 1000 <= target_ns; };
  double low = 0, high = 1;
  int64_t at_high = step_ns(high);
  if (close_enough(at_high)) return {high, at_high, true};
  int64_t at_low = 0;
  if (at_high > target_ns) {
    at_low = step_ns(low);
    if (at_low >= target_ns) return {low, at_low, close_enough(at_low)};
  } else {
    low = high;
    at_low = at_high;
    high = kMostHostScale;
    at_high = step_ns(high);
    if (at_high <= target_ns) return {high, at_high, close_enough(at_high)};
  }
  // step_ns(low) < target < step_ns(high). False position: the step is
  // about linear in the factor, so the line through the bracket's ends
  // lands near the answer in a few replays (3-7 on real traces, where
  // halving the bracket took 12-16); halving the weight of an end kept
  // twice (Illinois) keeps a bend from stalling it.
  double below = static_cast<double>(at_low - target_ns), above = static_cast<double>(at_high - target_ns);
  int kept = 0;  // -1: low moved last, 1: high did
  for (int i = 0; i < 40 && high - low > 1e-6; ++i) {
    double next = high - above * (high - low) / (above - below);
    int64_t at_next = step_ns(next);
    if (close_enough(at_next)) return {next, at_next, true};
    if (at_next < target_ns) {
      low = next;
      at_low = at_next;
      below = static_cast<double>(at_next - target_ns);
      if (kept == -1) above /= 2;
      kept = -1;
    } else {
      high = next;
      at_high = at_next;
      above = static_cast<double>(at_next - target_ns);
      if (kept == 1) below /= 2;
      kept = 1;
    }
  }
  // The step jumps there (a wait that starts or stops holding it up): the
  // nearer side, reached where within 1%.
  bool low_nearer = target_ns - at_low <= at_high - target_ns;
  int64_t nearest = low_nearer ? at_low : at_high;
  return {low_nearer ? low : high, nearest, std::llabs(nearest - target_ns) * 100 <= target_ns};
}

FittedHostTime fit_to_untraced_step(const ReplayInput& input, const ReplayGraph& graph,
                                    const trace::ProcessSteps* steps, int64_t untraced_step_ns,
                                    const NodeTiming& timing, const std::string& trace_path) {
  auto step_ns = [&](double factor) -> int64_t {
    NodeTiming scaled_timing = timing;
    scale_program_host_time(input, factor, scaled_timing);
    Timeline line = simulate(input, graph, scaled_timing);
    std::vector<Phase> phase = steps_phase(input, steps, {&line});
    return phase.empty() ? 0 : phase[0].ns[0] / phase[0].count;
  };
  if (!steps || !steps->has_steady_steps()) {
    throw TraceError(trace::no_steady_steps_to_price(trace_path, "--untraced-step"));
  }
  return fit_program_host_time(untraced_step_ns, step_ns);
}

std::string untraced_step_note(const FittedHostTime& fitted, int64_t untraced_step_ns) {
  char text[320];
  double step_ms = static_cast<double>(untraced_step_ns) / 1e6;
  if (fitted.reached) {
    std::snprintf(text, sizeof text,
                  "priced against the untraced step of %.3f ms (--untraced-step): the program's own host time "
                  "between calls scaled by %.2f, as if tracing had slowed it by %+.0f%%, in the baseline and "
                  "the what-if alike",
                  step_ms, fitted.factor, fitted.factor > 0 ? (1 / fitted.factor - 1) * 100 : 0.0);
  } else {
    std::snprintf(text, sizeof text,
                  "--untraced-step %.3f ms is out of the baseline's reach: with the program's own host time "
                  "between calls scaled by %.2f its steady step takes %.3f ms; is it this program's step?",
                  step_ms, fitted.factor, static_cast<double>(fitted.step_ns) / 1e6);
  }
  return text;
}

}  // namespace apptracer::whatif
