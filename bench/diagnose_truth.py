"""Findings against the fixed program (GPU): for each bad/fixed pair of
test_apps/diagnose_cases.cu whose rule prices a saving, the bad program is
traced and diagnosed, and the rule's estimated saving is set beside what
fixing it saved: the median of the bad program's own time (its "work_ms")
minus the fixed one's, both untraced, in interleaved rounds.

    python3 diagnose_truth.py DIST [ROUNDS] [--system FILE] [--keep DIR]
    python3 diagnose_truth.py DIST --from DIR [--system FILE]
    python3 diagnose_truth.py DIST [ROUNDS] --frameworks [--only SCENARIO,...] [--system FILE]
                              [--keep DIR | --from DIR]

Prints a Markdown table (scenario, rule, estimated saving, measured saving,
error) and "result diagnose-truth.SCENARIO.{estimated,measured}_ms V" lines.
--keep DIR keeps what was measured: each bad program's trace (SCENARIO.db),
its fixed twin's (SCENARIO.fixed.db, to compare what the fix changed) and
every round's times (times.json). --from DIR estimates again from kept
traces and times, without a GPU: how a change to a rule's model fares
against the same measurements.

--frameworks does the same for the PyTorch programs of framework_twins.py
(a launch-bound training step vs the same step replayed as a CUDA graph,
a pageable batch copy vs pinned + non_blocking, loss.item() each step vs
never, on that launch-bound step and on a GPU-bound one whose batch the
host prepares each step) and the JAX ones of jax_twins.py (jax_split: a
flax training step split over separately jitted functions vs the same
functions jitted as one step; diagnose prices no saving where XLA already
launched most of the work as command buffers, and the table says "no
saving estimated"; jax_shapes: a jitted step fed four batch sizes, compiled
again at each, vs every batch padded to one size), per step: the findings' saving per steady step,
and what `whatif` predicts the fix saves per step (--graphs for the CUDA graph and the
one jitted step, --pin --non-blocking for pinned memory copied with non_blocking=True, --no-syncs
for the .item() taken out), beside the
measured steps' time saved per step; and a
memory table for the twins whose rule prices bytes (a loss kept each step
vs its value alone: memory_leak's bytes at the peak beside the bad twin's
peak less the fixed one's, torch.cuda.max_memory_allocated), and one for
the twins whose rule prices the whole run (xla_compile's saving beside the
bad twin's timed steps' time less the fixed one's). The bad
twin is traced in every round (framework_SCENARIO.db, then .1.db, .2.db
...): the table gives the median of the runs' estimates, and each run's
follows it; a second table prices the same runs again, each given its
round's untraced bad step as --untraced-step. --only SCENARIO,... runs
those twins alone. whatif and
diagnose price with a system file: --system FILE, else one measured first
with `apptracer links --quick` (kept as system.json with --keep, read back
with --from).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# Scenario -> the rule whose saving it prices, and what `apptracer record`
# needs to see it (docs/diagnose.md; test_apps/check_trace.py asserts each).
PRICED = {
    "pageable": ("pageable_copy", ()), "small_copies": ("small_copies", ()),
    "sync_copy": ("sync_copy", ()), "sync_memset": ("sync_memset", ()),
    "redundant": ("redundant_copy", ()), "no_overlap": ("no_copy_compute_overlap", ()),
    "sync_api": ("sync_api", ()), "gpu_gap": ("gpu_idle_gap", ()),
    "churn": ("allocation_churn", ()), "launch_bound": ("launch_bound_kernels", ()),
    "um_faults": ("um_on_demand_migration", ("--unified-memory", "all")),
    "um_thrash": ("um_thrashing", ("--unified-memory", "all")),
    "numa": ("numa_far_host_buffer", ()),
}
SKIPPED = 77
# Framework twin scenario -> the program that runs it: PyTorch's twins, and JAX's in a program
# of their own (torch's CUDA context beside XLA's would distort their timing).
TWIN_PROGRAMS = {**dict.fromkeys(("launch_bound", "pageable", "item", "item_stall", "leak"), "framework_twins.py"),
                 **dict.fromkeys(("jax_split", "jax_shapes"), "jax_twins.py")}
# Framework twin scenario -> the rule whose saving per step it prices.
FRAMEWORK_PRICED = {"launch_bound": "launch_bound_kernels", "pageable": "pageable_copy",
                    "item": "sync_api", "item_stall": "sync_api", "jax_split": "launch_bound_kernels"}
# Framework twin scenario -> the rule whose saving in bytes (at the peak) it prices.
FRAMEWORK_MEMORY = {"leak": "memory_leak"}
# Framework twin scenario -> the rule whose saving over the whole run (not per step) it prices.
FRAMEWORK_RUN_PRICED = {"jax_shapes": "xla_compile"}
# The per-step table's columns.
PER_STEP_COLUMNS = ("scenario", "rule", "estimated saving per step (ms)", "error", "whatif",
                    "predicted saving per step (ms)", "error", "measured saving per step (ms)",
                    "predicted fixed step (ms)", "measured fixed step (ms)", "error")
# Framework twin scenario -> the whatif change that is its fix.
FRAMEWORK_WHATIF = {"launch_bound": "--graphs", "pageable": "--pin --non-blocking", "item": "--no-syncs",
                    "item_stall": "--no-syncs", "jax_split": "--graphs"}


def work_ms(program, scenario, variant):
    """The scenario's own time in ms, or None where it cannot run here."""
    done = subprocess.run([program, scenario, variant, "--time"], capture_output=True, text=True,
                          timeout=300)
    found = re.search(r"work_ms ([0-9.]+)", done.stderr)
    if done.returncode == SKIPPED or not found:
        return None
    return float(found.group(1))


def record(apptracer, program, scenario, variant, record_args, trace):
    subprocess.run([apptracer, "record", "-f", *record_args, "-o", trace, "--", program, scenario, variant],
                   check=True, capture_output=True, timeout=300)


def estimated_ms(apptracer, trace, rule, system):
    command = [apptracer, "diagnose", "--json", "--all", trace] + (["--system", system] if system else [])
    findings = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)["findings"]
    savings = [f["saving_ns"] for f in findings if f["rule"] == rule and f["saving_ns"] is not None]
    return sum(savings) / 1e6 if savings else None


def measure(program, rounds):
    """Per scenario, its bad and fixed variants' times over interleaved rounds."""
    times = {}
    for scenario in PRICED:
        times[scenario] = {"bad": [], "fixed": []}
        for _ in range(rounds):
            for variant in times[scenario]:
                value = work_ms(program, scenario, variant)
                if value is not None:
                    times[scenario][variant].append(value)
    return times


def twin_command(scenario, variant):
    """The command line that runs a framework twin."""
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), TWIN_PROGRAMS[scenario])
    return [sys.executable, program, scenario, variant]


def twin_run(scenario, variant):
    """A framework twin's measured time per step in ms, its peak of
    allocated bytes and its timed steps' whole time in ms, or None where it cannot run."""
    done = subprocess.run([*twin_command(scenario, variant), "--time"], capture_output=True,
                          text=True, timeout=600)
    work = re.search(r"work_ms ([0-9.]+)", done.stderr)
    steps = re.search(r"steps ([0-9]+)", done.stderr)
    peak = re.search(r"peak_bytes ([0-9]+)", done.stderr)
    if done.returncode != 0 or not work or not steps or not peak:
        return None
    return float(work.group(1)) / int(steps.group(1)), int(peak.group(1)), float(work.group(1))


def untraced_step_args(untraced_step_ms):
    """--untraced-step for diagnose and whatif, where the step was timed untraced."""
    return ["--untraced-step", f"{untraced_step_ms:.4f}"] if untraced_step_ms else []


def rule_findings(apptracer, trace, rule, system, untraced_step_ms=None):
    """The rule's findings on the trace (`diagnose --json --all`), priced
    against `untraced_step_ms` where given."""
    command = ([apptracer, "diagnose", "--json", "--all", trace] + (["--system", system] if system else [])
               + untraced_step_args(untraced_step_ms))
    findings = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)["findings"]
    return [f for f in findings if f["rule"] == rule]


def savings(findings, field, unit=1):
    """The sum of `field` over findings in `unit`s, or None where none has it."""
    values = [f[field] for f in findings if f.get(field) is not None]
    return sum(values) / unit if values else None


def unpriced(each_findings):
    """The estimate's cell where no run priced a saving: whether the rule
    found the problem and left its saving unknown, or found nothing."""
    found = sum(1 for findings in each_findings if findings)
    return f"unknown (found in {found} of {len(each_findings)} runs)" if found else "not found"


def predicted_per_step_ms(apptracer, trace, change, system, untraced_step_ms=None):
    """What `whatif CHANGE` predicts per step, over the steady steps
    (--graphs), else over the NVTX "step" ranges: (the saving, the fixed
    step's time), or (None, None). The saving is the baseline step's less
    the prediction: the traced step's less what tracing is known to add, or,
    with `untraced_step_ms`, the untraced step's."""
    command = ([apptracer, "whatif", trace, "--system", system, *change.split(), "--format", "json"]
               + untraced_step_args(untraced_step_ms))
    phases = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)["phases"]
    for kind, name in (("steps", "steady steps"), ("nvtx", "step")):
        for phase in phases:
            if phase["kind"] == kind and phase["name"] == name and phase["count"] > 0:
                count = phase["count"] * 1e6
                return (phase["baseline_ns"] - phase["predicted_ns"]) / count, phase["predicted_ns"] / count
    return None, None


def table_header(*columns):
    """A Markdown table's header: its columns and the line under them."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def shown(ms):
    return "-" if ms is None else f"{ms:.3f}"


def relative_error(estimated, measured):
    if estimated is None:
        return "no saving estimated"
    return f"{(estimated - measured) / measured:+.0%}" if measured > 0 else "fix measured no faster"


def framework_system(apptracer, work, kept, system):
    """The system file diagnose and whatif price with: given, kept, or measured now."""
    if system:
        return system
    path = os.path.join(work, "system.json")
    if not kept:
        subprocess.run([apptracer, "links", "--quick", "--force", "-o", path], check=True, capture_output=True,
                       timeout=600)
    return path if os.path.exists(path) else None


def framework_trace(work, scenario, round_index):
    """Round 0's trace keeps the name one traced run had."""
    suffix = "" if round_index == 0 else f".{round_index}"
    return os.path.join(work, f"framework_{scenario}{suffix}.db")


def kept_framework_traces(work, scenario):
    """The scenario's traced runs kept in `work`, in round order."""
    traces = []
    while os.path.exists(framework_trace(work, scenario, len(traces))):
        traces.append(framework_trace(work, scenario, len(traces)))
    return traces


def median_of(values):
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def framework_times(apptracer, rounds, work, kept, scenarios):
    """Per scenario, its twins' times per step and peaks over interleaved
    rounds, the bad twin traced in each; read back from `work` when kept."""
    path = os.path.join(work, "framework_times.json")
    if kept:
        with open(path) as file:
            return json.load(file)
    # The bad program is traced in every round too, beside its untraced
    # runs: one traced run's step is as noisy as an untraced one's (the
    # same traced twin took 5.3 and 7.1 ms a step on two machines), and a
    # saving estimated from it carries all of that.
    times = {scenario: {"bad": [], "fixed": [], "bad_peak": [], "fixed_peak": [], "bad_work": [], "fixed_work": []}
             for scenario in scenarios}
    for round_index in range(rounds):
        for scenario in scenarios:
            for variant in ("bad", "fixed"):
                measured = twin_run(scenario, variant)
                if measured is not None:
                    times[scenario][variant].append(measured[0])
                    times[scenario][f"{variant}_peak"].append(measured[1])
                    times[scenario][f"{variant}_work"].append(measured[2])
            if times[scenario]["bad"]:
                subprocess.run([apptracer, "record", "-f", "-o", framework_trace(work, scenario, round_index),
                                "--", *twin_command(scenario, "bad")],
                               check=True, capture_output=True, timeout=600)
    with open(path, "w") as file:
        json.dump(times, file)
    return times


def measured_pairs(times, rules, field, header):
    """Each twin of `rules` that was measured, as (scenario, rule, bad, fixed)
    from its `bad_FIELD` and `fixed_FIELD` values, after the table's header;
    a twin that could not run gets a line saying so instead."""
    measured_twins = [s for s in rules if s in times]
    if measured_twins:
        print()
        table_header(*header)
    for scenario in measured_twins:
        bad, fixed = times[scenario].get(f"bad_{field}"), times[scenario].get(f"fixed_{field}")
        if not bad or not fixed:
            print(f"| {scenario} | {rules[scenario]} | | cannot run here (needs its framework and a GPU) |"
                  + " |" * (len(header) - 4))
            continue
        yield scenario, rules[scenario], bad, fixed


def memory_twins(apptracer, times, work, system):
    """The twins whose rule prices bytes: its saving at the peak beside the
    bad twin's peak less the fixed one's."""
    results = []
    for scenario, rule, bad, fixed in measured_pairs(
            times, FRAMEWORK_MEMORY, "peak", ("scenario", "rule", "estimated saving (MiB)", "measured saving (MiB)",
                                             "error", "bad peak (MiB)", "fixed peak (MiB)")):
        mib = 1 << 20
        measured = (statistics.median(bad) - statistics.median(fixed)) / mib
        estimated = median_of([savings(rule_findings(apptracer, trace, rule, system), "saving_bytes", mib)
                               for trace in kept_framework_traces(work, scenario)])
        print(f"| {scenario} | {rule} | {shown(estimated)} | {measured:.3f} | {relative_error(estimated, measured)} | "
              f"{statistics.median(bad) / mib:.1f} | {statistics.median(fixed) / mib:.1f} |", flush=True)
        results.append(f"result diagnose-truth.framework_{scenario}.measured_mib {measured:.3f}")
        if estimated is not None:
            results.append(f"result diagnose-truth.framework_{scenario}.estimated_mib {estimated:.3f}")
    return results


def run_priced_twins(apptracer, times, work, system):
    """The twins whose rule prices a saving over the whole run: its saving
    beside the bad twin's timed steps' time less the fixed one's."""
    results = []
    for scenario, rule, bad, fixed in measured_pairs(
            times, FRAMEWORK_RUN_PRICED, "work", ("scenario", "rule", "estimated saving (ms)", "error",
                                                  "measured saving (ms)", "bad run (ms)", "fixed run (ms)")):
        measured = statistics.median(bad) - statistics.median(fixed)
        each_findings = [rule_findings(apptracer, trace, rule, system) for trace in kept_framework_traces(work, scenario)]
        each_estimate = [savings(findings, "saving_ns", 1e6) for findings in each_findings]
        estimated = median_of(each_estimate)
        estimate_cell = shown(estimated) if estimated is not None else unpriced(each_findings)
        if len(each_estimate) > 1:
            estimate_cell += f" (runs {', '.join(shown(e) for e in each_estimate)})"
        print(f"| {scenario} | {rule} | {estimate_cell} | "
              f"{relative_error(estimated, measured)} | {measured:.3f} | {statistics.median(bad):.3f} | "
              f"{statistics.median(fixed):.3f} |", flush=True)
        results.append(f"result diagnose-truth.framework_{scenario}.measured_ms {measured:.3f}")
        if estimated is not None:
            results.append(f"result diagnose-truth.framework_{scenario}.estimated_ms {estimated:.3f}")
    return results


def priced_twin(apptracer, times, work, system, scenario, untraced, results, spreads):
    """One row of the per-step table: the rule's saving and whatif's
    prediction over the twin's traced runs, beside what the fix measured;
    `untraced`: each run priced against its round's untraced bad step."""
    rule = FRAMEWORK_PRICED[scenario]
    bad, fixed = times[scenario]["bad"], times[scenario]["fixed"]
    if not bad or not fixed:
        print(f"| {scenario} | {rule} | | cannot run here (needs its framework and a GPU) | | | | | | | |")
        return
    measured = statistics.median(bad) - statistics.median(fixed)
    traces = kept_framework_traces(work, scenario)
    steps = [bad[i] if untraced and i < len(bad) else None for i in range(len(traces))]
    change = FRAMEWORK_WHATIF.get(scenario)
    try:
        each_findings = [rule_findings(apptracer, trace, rule, system, step) for trace, step in zip(traces, steps)]
        each_prediction = [predicted_per_step_ms(apptracer, trace, change, system, step) if change and system
                           else (None, None) for trace, step in zip(traces, steps)]
    except subprocess.CalledProcessError as refused:
        # A trace without steady steps is refused an untraced step: the row says so.
        print(f"| {scenario} | {rule} | | {refused.stderr.strip().splitlines()[-1]} | | | | | | | |")
        return
    each_estimate = [savings(findings, "saving_per_step_ns", 1e6) for findings in each_findings]
    estimated = median_of(each_estimate)
    predicted = median_of([saving for saving, _ in each_prediction])
    fixed_step = median_of([step for _, step in each_prediction])
    label = f"{scenario} (--untraced-step)" if untraced else scenario
    spread = (f"{label}: {len(traces)} traced run(s), estimated {', '.join(shown(e) for e in each_estimate)} ms"
              + (f", predicted {', '.join(shown(p) for p, _ in each_prediction)} ms" if change and system else ""))
    if untraced:
        # Each run was priced against its own round's untraced step, so its
        # error is against its own round's saving (that step less the fixed
        # twin's median): the rounds' savings spread more than the pricing.
        rounds = [bad[i] - statistics.median(fixed) for i in range(len(traces))]
        spread += (f"; each against its round's measured {', '.join(shown(m) for m in rounds)} ms: estimated "
                   + ", ".join(relative_error(e, m) if e is not None else "no saving" if f else "no finding"
                               for e, f, m in zip(each_estimate, each_findings, rounds))
                   + (", predicted " + ", ".join(relative_error(p, m) for (p, _), m in zip(each_prediction, rounds))
                      if change and system else ""))
    spreads.append(spread)
    fixed_measured = statistics.median(fixed)
    estimate_cell = shown(estimated) if estimated is not None else unpriced(each_findings)
    print(f"| {scenario} | {rule} | {estimate_cell} | {relative_error(estimated, measured)} | "
          f"{change or 'none'} | {shown(predicted)} | {relative_error(predicted, measured) if change else ''} | "
          f"{measured:.3f} | {shown(fixed_step)} | {fixed_measured:.3f} | "
          f"{relative_error(fixed_step, fixed_measured) if fixed_step is not None else ''} |", flush=True)
    key = f"framework_{scenario}" + ("_untraced_step" if untraced else "")
    if not untraced:
        results.append(f"result diagnose-truth.{key}.measured_ms_per_step {measured:.4f}")
    if estimated is not None:
        results.append(f"result diagnose-truth.{key}.estimated_ms_per_step {estimated:.4f}")
    if predicted is not None:
        results.append(f"result diagnose-truth.{key}.predicted_ms_per_step {predicted:.4f}")
        results.append(f"result diagnose-truth.{key}.predicted_fixed_step_ms {fixed_step:.4f}")


def frameworks(apptracer, rounds, work, kept, system, only):
    """The framework twins: per step, estimated and predicted against measured."""
    scenarios = [s for s in [*FRAMEWORK_PRICED, *FRAMEWORK_MEMORY, *FRAMEWORK_RUN_PRICED] if not only or s in only]
    # Bytes are priced without the link model: measure one only for time.
    if any(s in FRAMEWORK_PRICED for s in scenarios):
        system = framework_system(apptracer, work, kept, system)
    print(f"system file: {system or 'none (diagnose prices from the trace; no whatif)'}")
    times = framework_times(apptracer, rounds, work, kept, scenarios)
    timed = [s for s in FRAMEWORK_PRICED if s in times]
    if timed:
        table_header(*PER_STEP_COLUMNS)
    results, spreads = [], []
    for scenario in timed:
        priced_twin(apptracer, times, work, system, scenario, False, results, spreads)
    # The same runs priced against their round's untraced bad step, as a
    # user who timed the program without tracing gives it (--untraced-step).
    if timed and system:
        print("\nPriced against the untraced step (--untraced-step: each traced run given its round's "
              "untraced bad step):")
        table_header(*PER_STEP_COLUMNS)
        for scenario in timed:
            priced_twin(apptracer, times, work, system, scenario, True, results, spreads)
    results += memory_twins(apptracer, times, work, system)
    results += run_priced_twins(apptracer, times, work, system)
    print("\nPer traced run (the tables give their medians):")
    print("\n".join(spreads))
    print("\n".join(results))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dist")
    parser.add_argument("rounds", nargs="?", type=int, default=5)
    parser.add_argument("--system")
    parser.add_argument("--frameworks", action="store_true",
                        help="the PyTorch and JAX twins of framework_twins.py and jax_twins.py "
                             "instead of diagnose_cases")
    parser.add_argument("--only", type=lambda text: set(text.split(",")), default=set(),
                        help="with --frameworks: these twins alone (comma-separated)")
    kept = parser.add_mutually_exclusive_group()
    kept.add_argument("--keep", help="keep the traces and times here")
    kept.add_argument("--from", dest="kept", help="estimate from the traces and times kept here")
    args = parser.parse_args()
    unknown = args.only - set(TWIN_PROGRAMS)
    if unknown:
        parser.error(f"--only: no twin named {', '.join(sorted(unknown))}")
    apptracer = os.path.join(args.dist, "bin", "apptracer")
    if args.frameworks:
        with tempfile.TemporaryDirectory() as temporary:
            work = args.kept or args.keep or temporary
            os.makedirs(work, exist_ok=True)
            frameworks(apptracer, args.rounds, work, args.kept, args.system, args.only)
        return
    program = os.path.join(args.dist, "test_apps", "diagnose_cases")
    table_header("scenario", "rule", "estimated saving (ms)", "measured saving (ms)", "error")
    results = []
    with tempfile.TemporaryDirectory() as temporary:
        work = args.kept or args.keep or temporary
        if args.kept:
            with open(os.path.join(work, "times.json")) as file:
                times = json.load(file)
        else:
            os.makedirs(work, exist_ok=True)
            times = measure(program, args.rounds)
            if args.keep:
                with open(os.path.join(work, "times.json"), "w") as file:
                    json.dump(times, file)
        for scenario, (rule, record_args) in PRICED.items():
            bad, fixed = times.get(scenario, {}).get("bad"), times.get(scenario, {}).get("fixed")
            if not bad or not fixed:
                print(f"| {scenario} | {rule} | | | cannot run here |")
                continue
            measured = statistics.median(bad) - statistics.median(fixed)
            trace = os.path.join(work, f"{scenario}.db")
            if not args.kept:
                record(apptracer, program, scenario, "bad", record_args, trace)
                if args.keep:
                    record(apptracer, program, scenario, "fixed", record_args,
                           os.path.join(work, f"{scenario}.fixed.db"))
            estimated = estimated_ms(apptracer, trace, rule, args.system)
            error = "no saving estimated" if estimated is None else (
                f"{(estimated - measured) / measured:+.0%}" if measured > 0 else "fix measured no faster")
            print(f"| {scenario} | {rule} | {'-' if estimated is None else f'{estimated:.2f}'} | "
                  f"{measured:.2f} | {error} |", flush=True)
            results.append(f"result diagnose-truth.{scenario}.measured_ms {measured:.3f}")
            if estimated is not None:
                results.append(f"result diagnose-truth.{scenario}.estimated_ms {estimated:.3f}")
    print("\n".join(results))


if __name__ == "__main__":
    main()
