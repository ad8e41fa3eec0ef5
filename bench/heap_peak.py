#!/usr/bin/env python3
"""What is live at a program's heap peak, by allocating site, from a
heaptrack record (CPU). heaptrack_print lists each site's own peak, which
comes at different times for different sites; this replays the record's
allocations and frees to the moment the heap was largest and sums what is
live then by the site's frames in the repository (the analyzer's code).

    heaptrack -o OUT apptracer report TRACE ...
    python3 heap_peak.py OUT.zst [--after N] [--frames K] [--top N] [--under DIR]

--after N: the largest moment after the Nth allocation or free (a later
phase's peak); --frames K: the innermost K frames under DIR (default: the
repository's root, found from this file) name a site; --top N: how many sites.
Reads heaptrack's interpreted format (version 3; .zst and .gz through zstd
and gzip, else plain text). Prints "peak X MiB at event N of M" and a line
per site: live MiB, then its frames, innermost first.
"""
import argparse
import collections
import gzip
import os
import subprocess
import sys


def lines(path):
    if path.endswith(".zst"):
        with subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE, text=True) as unzip:
            yield from unzip.stdout
    elif path.endswith(".gz"):
        with gzip.open(path, "rt") as file:
            yield from file
    else:
        with open(path) as file:
            yield from file


class Record:
    """The record's tables: strings, instruction pointers (each a list of
    (function, file, line), an inlined call's innermost first), trace nodes
    (ip, parent) and allocation kinds (size, trace)."""

    def __init__(self):
        self.strings = [None]
        self.ips = [None]
        self.traces = [None]
        self.allocations = []

    def read(self, line):
        kind = line[0]
        if kind == "s":
            # "s <length> <text>": the text may hold spaces.
            self.strings.append(line[2:].rstrip("\n").partition(" ")[2])
        elif kind == "i":
            fields = line.split()[3:]  # after "i", the ip and its module
            self.ips.append([(self.strings[int(fields[j], 16)], self.strings[int(fields[j + 1], 16)],
                              int(fields[j + 2], 16)) for j in range(0, len(fields) - 2, 3)])
        elif kind == "t":
            ip, parent = line.split()[1:3]
            self.traces.append((int(ip, 16), int(parent, 16)))
        elif kind == "a":
            size, trace = line.split()[1:3]
            self.allocations.append((int(size, 16), int(trace, 16)))

    def site(self, trace, under, frames):
        named = []
        while trace and len(named) < frames:
            ip, trace = self.traces[trace]
            for function, file, line in self.ips[ip] or []:
                if file and file.startswith(under):
                    named.append(f"{function}@{os.path.relpath(file, under)}:{line}")
        return " < ".join(named[:frames]) or "(no frame under the root)"


def peak(path, after):
    """The record, and the largest live bytes at or after event `after`
    and the event they were reached at."""
    record = Record()
    live = most = 0
    at = events = 0
    for line in lines(path):
        if line[0] in "+-":
            size = record.allocations[int(line[2:], 16)][0]
            live += size if line[0] == "+" else -size
            events += 1
            if events >= after and live > most:
                most, at = live, events
        else:
            record.read(line)
    return record, most, at, events


def live_at(path, event):
    """How many of each allocation kind are live after `event` events."""
    count = collections.Counter()
    events = 0
    for line in lines(path):
        if line[0] in "+-" and events < event:
            count[int(line[2:], 16)] += 1 if line[0] == "+" else -1
            events += 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("record")
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--frames", type=int, default=3)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--under", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args()
    if not os.path.exists(args.record):
        sys.exit(f"heap_peak.py: no such record: {args.record}")
    record, most, at, events = peak(args.record, args.after)
    print(f"peak {most / 2**20:.1f} MiB at event {at} of {events}")
    by_site = collections.Counter()
    for kind, count in live_at(args.record, at).items():
        if count > 0:
            size, trace = record.allocations[kind]
            by_site[record.site(trace, os.path.join(args.under, ""), args.frames)] += size * count
    for site, size in by_site.most_common(args.top):
        print(f"{size / 2**20:9.1f} MiB  {site}")


if __name__ == "__main__":
    main()
