"""Does the --exact DVDG agree with the default one where the default was right?

    exact_agreement.py TRACE APPTRACER

TRACE was recorded with `record --exact`. Both graphs come from it: the one
the GPU's exact accesses give, and `dvdg --ignore-exact`'s (kernels' accesses
from their signatures, as without --exact). The signature heuristic only
widens what a kernel touches (an assumed read-write pointer, a pointer
reaching to its region's end), so every dependence the GPU really had must
hold in the default graph too, directly or through the extra versions the
widened writes made: for each exact edge "P's value read by R", R must be
reachable from P in the default graph. Where it is not, the default graph
missed a real dependence (an access outside every argument): listed, and
the check fails. What the default adds and the exact graph drops (false
dependences) is counted, not judged. Exit status 0 when they agree.
"""
import json
import subprocess
import sys
from collections import defaultdict


def graph(apptracer, trace, *options):
    result = subprocess.run([apptracer, "dvdg", "--no-store", *options, trace, "--json", "-"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"exact_agreement: dvdg {' '.join(options)} failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def dependences(g):
    """(producer, consumer) pairs of operations, each named by (kind, trace row id)
    so the two graphs' operations match whatever their graph ids."""
    op_key = {op["id"]: (op["kind"], op["source_id"]) for op in g["ops"]}
    producer = {v["id"]: v["producer_op"] for v in g["values"]}
    pairs = set()
    for edge in g["edges"]:
        made_by = producer.get(edge["src"])
        if made_by is not None and made_by in op_key and edge["op"] in op_key:
            pairs.add((op_key[made_by], op_key[edge["op"]]))
    return pairs, {key: op["name"] for op in g["ops"] for key in [op_key[op["id"]]]}


def reachable(pairs):
    after = defaultdict(set)
    for p, r in pairs:
        after[p].add(r)
    memo = {}

    def closure(op):
        if op not in memo:
            seen, stack = set(), [op]
            while stack:
                for nxt in after[stack.pop()]:
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)
            memo[op] = seen
        return memo[op]
    return closure


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    trace, apptracer = sys.argv[1:]
    exact, names = dependences(graph(apptracer, trace))
    default, _ = dependences(graph(apptracer, trace, "--ignore-exact"))
    implied = reachable(default)
    missed = sorted((p, r) for p, r in exact if r not in implied(p))
    exact_closure = reachable(exact)
    false_deps = sum(1 for p, r in default if r not in exact_closure(p))
    print(f"exact graph: {len(exact)} dependences between operations; default graph: {len(default)}")
    print(f"identical: {len(exact & default)}; exact ones the default holds through widened "
          f"writes: {len(exact) - len(exact & default) - len(missed)}")
    print(f"default dependences --exact shows false: {false_deps}")
    for p, r in missed[:20]:
        print(f"MISSED {names.get(p, p)} -> {names.get(r, r)}")
    ok = not missed and exact
    print(f"{'ok  ' if ok else 'FAIL'} every dependence the GPU had is in the default graph "
          f"({len(missed)} missed of {len(exact)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
