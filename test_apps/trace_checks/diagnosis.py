"""Diagnose scenarios (diagnose_cases.cu): for each rule of `apptracer
diagnose`, a bad program and its fixed twin doing the same work the way the
fix says, so each rule is shown to fire on the problem it names and to be
silent once it is fixed. The bad one must have the rule's finding, with a
fix, its rows and a cost (its saving where the rule gives one). The
scenarios that launch kernels run again under --exact, where the fixed twins
must also read nothing uninitialized.
"""
from .analyses import diagnose_findings, dvdg_json, uninitialized_reads
from .base import UM_ALL, Case

# Rules whose findings are about correctness: no time cost.
CORRECTNESS_RULES = {"uninitialized_read"}


def check_diagnosis(rule, bad, more=None):
    """The bad program has a `rule` finding (with a cost, a fix and its rows);
    its fixed twin has none. `more(c, findings)` checks the bad one further."""
    def check(c, t):
        findings = diagnose_findings(c, t)
        mine = [f for f in findings if f["rule"] == rule]
        if not bad:
            c.equal([f["what"] for f in mine], [], f"no {rule} finding in the fixed twin")
            return
        c.expect(mine, f"a {rule} finding (found: {sorted({f['rule'] for f in findings})})")
        for f in mine:
            c.expect(f["fix"] and f["where"]["rows"], f"{rule}: a fix and rows: {f}")
            c.expect(rule in CORRECTNESS_RULES or f["cost_ns"] > 0, f"{rule}: a cost: {f}")
        if more and mine:
            more(c, mine)
    return check


def redundant_both_ways(c, findings):
    whats = " | ".join(f["what"] for f in findings)
    c.expect("back to" in whats, f"data copied back unchanged: {whats}")
    c.expect("already holds" in whats, f"weights uploaded again: {whats}")


def churn_device_and_pinned(c, findings):
    kinds = " | ".join(f["what"] for f in findings)
    c.expect("device allocations" in kinds and "pinned host allocations" in kinds,
             f"device and pinned churn: {kinds}")


def has_saving(c, findings):
    c.expect(all((f["saving_ns"] or 0) > 0 for f in findings), f"a saving: {findings}")


def check_diagnosis_exact(rule, bad, more):
    plain = check_diagnosis(rule, bad, more)

    def check(c, t):
        c.equal(t.meta("exact"), "on", "meta.exact")
        plain(c, t)
        if not bad:
            c.equal(uninitialized_reads(dvdg_json(c, t)), [], "the fixed twin reads nothing uninitialized")
    return check


DIAGNOSIS_CASES = {
    "pageable": ("pageable_copy", None), "small_copies": ("small_copies", has_saving),
    "sync_copy": ("sync_copy", None), "sync_memset": ("sync_memset", has_saving),
    "redundant": ("redundant_copy", redundant_both_ways),
    "no_overlap": ("no_copy_compute_overlap", has_saving), "sync_api": ("sync_api", has_saving),
    "gpu_gap": ("gpu_idle_gap", has_saving), "churn": ("allocation_churn", churn_device_and_pinned),
    "launch_bound": ("launch_bound_kernels", has_saving), "uninitialized": ("uninitialized_read", None),
    "never_read": ("written_never_read", None), "never_used": ("allocation_never_used", None),
    "um_faults": ("um_on_demand_migration", None), "um_thrash": ("um_thrashing", None),
    "numa": ("numa_far_host_buffer", None),
}
# The unified-memory rules read migrations, which are recorded only when asked for.
DIAGNOSIS_RECORD_ARGS = {"um_faults": UM_ALL, "um_thrash": UM_ALL}
# The scenarios that launch kernels, again under --exact: the same finding
# for the bad program and none for the fixed one, which reads nothing
# uninitialized either (what the sanitizer saw only sharpens the graph).
DIAGNOSIS_KERNEL_SCENARIOS = ["redundant", "no_overlap", "sync_api", "gpu_gap", "churn", "launch_bound",
                              "uninitialized", "never_read", "never_used", "um_faults", "um_thrash"]


def scenario_cases():
    """diag_SCENARIO_bad and diag_SCENARIO_fixed for every scenario, and the
    same with _exact for those that launch kernels."""
    cases = {}
    for scenario, (rule, more) in DIAGNOSIS_CASES.items():
        for variant in ("bad", "fixed"):
            cases[f"diag_{scenario}_{variant}"] = Case(
                check_diagnosis(rule, variant == "bad", more), "diagnose_cases", [scenario, variant],
                record_args=DIAGNOSIS_RECORD_ARGS.get(scenario, ()))
    for scenario in DIAGNOSIS_KERNEL_SCENARIOS:
        rule, more = DIAGNOSIS_CASES[scenario]
        for variant in ("bad", "fixed"):
            cases[f"diag_{scenario}_{variant}_exact"] = Case(
                check_diagnosis_exact(rule, variant == "bad", more), "diagnose_cases", [scenario, variant],
                record_args=list(DIAGNOSIS_RECORD_ARGS.get(scenario, ())) + ["--exact"])
    return cases


CASES = scenario_cases()
