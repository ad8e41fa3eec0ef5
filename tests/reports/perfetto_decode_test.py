#!/usr/bin/env python3
"""Decodes `apptracer timeline` output with Perfetto's official schema.

Usage: perfetto_decode_test.py APPTRACER MAKE_SAMPLE_TRACE WORKDIR

Uses perfetto_trace_pb2 from the `perfetto` package on PyPI when it is
installed, and exits 77 (reported by ctest as skipped) when it is not; the
C++ timeline tests decode the same file with our own proto in any case.
"""
import os
import subprocess
import sys

SKIP = 77


def main():
    apptracer, make_sample_trace, workdir = sys.argv[1:4]
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    except ImportError as error:
        print(f"SKIP: Python package 'perfetto' not importable ({error}); "
              "pip install perfetto to run this test", file=sys.stderr)
        return SKIP

    os.makedirs(workdir, exist_ok=True)
    trace = os.path.join(workdir, "sample.db")
    timeline = os.path.join(workdir, "sample.pftrace")
    subprocess.run([make_sample_trace, trace], check=True)
    subprocess.run([apptracer, "timeline", trace, "--force", "-o", timeline], check=True)

    decoded = pb.Trace()
    with open(timeline, "rb") as f:
        decoded.ParseFromString(f.read())

    tracks = {}
    begins = ends = 0
    flow_starts, flow_ends = {}, {}
    names = set()
    for packet in decoded.packet:
        if packet.HasField("track_descriptor"):
            descriptor = packet.track_descriptor
            tracks[descriptor.uuid] = descriptor
            continue
        event = packet.track_event
        assert event.track_uuid in tracks, f"event on undeclared track {event.track_uuid}"
        if event.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            begins += 1
            names.add(event.name)
            for flow in event.flow_ids:
                flow_starts[flow] = flow_starts.get(flow, 0) + 1
            for flow in event.terminating_flow_ids:
                flow_ends[flow] = flow_ends.get(flow, 0) + 1
        elif event.type == pb.TrackEvent.TYPE_SLICE_END:
            ends += 1

    processes = [t for t in tracks.values() if t.HasField("process")]
    threads = [t for t in tracks.values() if t.HasField("thread")]
    checks = [
        ("tracks", len(tracks), 8),
        ("process tracks", len(processes), 1),
        ("thread tracks", len(threads), 2),
        ("pid", processes[0].process.pid if processes else None, 4242),
        ("process name", processes[0].process.process_name if processes else None, "vector_add"),
        ("slice begins", begins, 23),
        ("slice ends", ends, 23),
        ("flows started", len(flow_starts), 7),
        ("flows ended", len(flow_ends), 7),
        ("flows matched", set(flow_starts) == set(flow_ends), True),
        ("kernel slice", "vec_add(float*, float*)" in names, True),
        ("copy slice", "memcpy HtoD" in names, True),
    ]
    failed = [(what, got, want) for what, got, want in checks if got != want]
    for what, got, want in failed:
        print(f"FAIL: {what}: got {got!r}, want {want!r}", file=sys.stderr)
    if not failed:
        print(f"ok: {len(tracks)} tracks, {begins} slices, {len(flow_starts)} flows")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
