"""Does the --exact DVDG agree with the default one where the default was right?

    exact_agreement.py TRACE APPTRACER

TRACE was recorded with `record --exact`. Both graphs come from it: the one
the GPU's exact accesses give, and `dvdg --ignore-exact`'s (kernels' accesses
from their signatures, as without --exact). The signature heuristic only
widens what a kernel touches (an assumed read-write pointer, a pointer
reaching to its region's end), so every dependence the GPU really had must
hold in the default graph too, directly or through the extra versions the
widened writes made: for each exact edge "P's value read by R", R must be
reachable from P in the default graph. Where it is not, either the
signatures could not see the access (P's write or R's read lands in a
tensor or buffer none of its pointer arguments points into: the default was
wrong there, and `stats --report exact` counts it as "outside"), or the
default graph lost a dependence it had every access for: listed, and the
check fails. What the default adds and the exact graph drops (false
dependences) is counted, not judged. Exit status 0 when they agree.
"""
import json
import subprocess
import sys
from collections import defaultdict


def graph(apptracer, trace, *options):
    result = subprocess.run([apptracer, "dvdg", "--no-store", *options, trace, "--format", "json", "-o", "-"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"exact_agreement: dvdg {' '.join(options)} failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


class Dependences:
    """A graph's (producer, consumer) pairs of operations, each operation named
    by (kind, trace row id) so the two graphs' match whatever their graph ids;
    where each pair's values live; what each operation touches."""

    def __init__(self, g):
        op_key = {op["id"]: (op["kind"], op["source_id"]) for op in g["ops"]}
        self.names = {op_key[op["id"]]: op["name"] for op in g["ops"]}
        values = {v["id"]: v for v in g["values"]}
        self.pairs = defaultdict(set)  # (P, R) -> where R read what P wrote
        self.touches = defaultdict(set)  # op -> where it read or wrote
        for edge in g["edges"]:
            if edge["op"] not in op_key:
                continue
            op = op_key[edge["op"]]
            for end in (edge["src"], edge["dst"]):
                if end in values:
                    self.touches[op].add(where(values[end]))
            read = values.get(edge["src"])
            if read and read["producer_op"] in op_key:
                self.pairs[(op_key[read["producer_op"]], op)].add(where(read))


def where(value):
    """A value's tensor or buffer: its sub-allocation, else its allocation."""
    return (value["alloc_id"], value["sub_allocation_id"])


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
    exact = Dependences(graph(apptracer, trace))
    default = Dependences(graph(apptracer, trace, "--ignore-exact"))
    implied = reachable(default.pairs)
    missed = sorted((p, r) for p, r in exact.pairs if r not in implied(p))

    def unseen(pair):
        """The default could not see this dependence: P or R did not touch, by
        its signature, a tensor or buffer the GPU says carried it."""
        return any(place not in default.touches[op] for place in exact.pairs[pair] for op in pair)
    unexplained = [pair for pair in missed if not unseen(pair)]
    exact_closure = reachable(exact.pairs)
    false_deps = sum(1 for p, r in default.pairs if r not in exact_closure(p))
    common = len(exact.pairs.keys() & default.pairs.keys())
    print(f"exact graph: {len(exact.pairs)} dependences between operations; "
          f"default graph: {len(default.pairs)}")
    print(f"identical: {common}; exact ones the default holds through widened writes: "
          f"{len(exact.pairs) - common - len(missed)}")
    print(f"exact ones the default could not see (accesses outside every pointer argument): "
          f"{len(missed) - len(unexplained)}")
    print(f"default dependences --exact shows false: {false_deps}")
    for p, r in unexplained[:20]:
        print(f"MISSED {exact.names.get(p, p)[:120]} -> {exact.names.get(r, r)[:120]}")
    ok = not unexplained and exact.pairs
    print(f"{'ok  ' if ok else 'FAIL'} every dependence the GPU had whose accesses the signatures saw "
          f"is in the default graph ({len(unexplained)} missed of {len(exact.pairs)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
