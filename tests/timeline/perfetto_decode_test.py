#!/usr/bin/env python3
"""Decodes `apptracer timeline` output with Perfetto's official schema: the
sample trace's tracks, slices and flows, and the counter tracks of the
bundled unified-memory trace (device memory allocated, bytes migrated).

Usage: perfetto_decode_test.py APPTRACER MAKE_SAMPLE_TRACE WORKDIR EXAMPLES_DIR

Uses perfetto_trace_pb2 from the `perfetto` package on PyPI when it is
installed, and exits 77 (reported by ctest as skipped) when it is not; the
C++ timeline tests decode the same file with our own proto in any case.
"""
import json
import os
import sqlite3
import subprocess
import sys

SKIP = 77


def counter_values(pb, path):
    """Per counter track name: its values, in file order."""
    decoded = pb.Trace()
    with open(path, "rb") as f:
        decoded.ParseFromString(f.read())
    names, values = {}, {}
    for packet in decoded.packet:
        descriptor = packet.track_descriptor
        if packet.HasField("track_descriptor") and descriptor.HasField("counter"):
            assert descriptor.counter.unit == pb.CounterDescriptor.UNIT_SIZE_BYTES
            names[descriptor.uuid] = descriptor.name
            values[descriptor.name] = []
        elif packet.track_event.type == pb.TrackEvent.TYPE_COUNTER:
            values[names[packet.track_event.track_uuid]].append(packet.track_event.counter_value)
    return values


def check_counters(pb, apptracer, examples, workdir):
    """The UM trace's counters against its tables and `apptracer stats`."""
    trace = os.path.join(examples, "um_bandwidth_h100.db")
    timeline = os.path.join(workdir, "um.pftrace")
    subprocess.run([apptracer, "timeline", trace, "--force", "-o", timeline], check=True)
    values = counter_values(pb, timeline)
    stats = json.loads(subprocess.run([apptracer, "stats", trace, "--report", "allocations",
                                       "--format", "json"], check=True, capture_output=True,
                                      text=True).stdout)["allocations"]
    peak = next(row["peak_live_bytes"] for row in stats
                if row["place"] == "device 0" and row["kind"] == "all")
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    migrated = dict(db.execute(
        "SELECT e.name, sum(u.bytes) FROM um_events u JOIN enum_values e "
        "ON e.enum = 'um_counter_kind' AND e.value = u.counter_kind "
        "WHERE e.name IN ('bytes HtoD', 'bytes DtoH') GROUP BY e.name"))
    db.close()
    memory = values.get("GPU 0 memory allocated", [])
    return [
        ("counter tracks", sorted(values),
         ["GPU 0 memory allocated", "UM migrated DtoH", "UM migrated HtoD"]),
        ("most GPU 0 memory allocated", max(memory, default=None), peak),
        ("GPU 0 memory allocated at the end", memory[-1] if memory else None, 0),
        ("UM migrated HtoD, all", values["UM migrated HtoD"][-1], migrated["bytes HtoD"]),
        ("UM migrated DtoH, all", values["UM migrated DtoH"][-1], migrated["bytes DtoH"]),
        ("UM migrated HtoD only grows", values["UM migrated HtoD"] == sorted(values["UM migrated HtoD"]),
         True),
    ]


def main():
    apptracer, make_sample_trace, workdir, examples = sys.argv[1:5]
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
    begins = ends = counters = 0
    flow_starts, flow_ends = {}, {}
    names = set()
    interned = {}  # event names by iid, as the sequence gives them
    values = {}  # string argument values by iid
    argument_names = {}
    grids = set()  # kernels' grid arguments, resolved
    unresolved = 0
    for packet in decoded.packet:
        for entry in packet.interned_data.event_names:
            interned[entry.iid] = entry.name
        for entry in packet.interned_data.debug_annotation_string_values:
            values[entry.iid] = entry.str.decode()
        for entry in packet.interned_data.debug_annotation_names:
            argument_names[entry.iid] = entry.name
        for annotation in packet.track_event.debug_annotations:
            if annotation.HasField("string_value_iid"):
                if annotation.string_value_iid not in values:
                    unresolved += 1
                elif argument_names.get(annotation.name_iid) == "grid":
                    grids.add(values[annotation.string_value_iid])
        if packet.HasField("track_descriptor"):
            descriptor = packet.track_descriptor
            tracks[descriptor.uuid] = descriptor
            continue
        event = packet.track_event
        assert event.track_uuid in tracks, f"event on undeclared track {event.track_uuid}"
        if event.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            begins += 1
            names.add(interned.get(event.name_iid, event.name))
            for flow in event.flow_ids:
                flow_starts[flow] = flow_starts.get(flow, 0) + 1
            for flow in event.terminating_flow_ids:
                flow_ends[flow] = flow_ends.get(flow, 0) + 1
        elif event.type == pb.TrackEvent.TYPE_SLICE_END:
            ends += 1
        elif event.type == pb.TrackEvent.TYPE_COUNTER:
            counters += 1

    processes = [t for t in tracks.values() if t.HasField("process")]
    threads = [t for t in tracks.values() if t.HasField("thread")]
    checks = [
        ("tracks", len(tracks), 9),
        ("process tracks", len(processes), 1),
        ("thread tracks", len(threads), 2),
        ("pid", processes[0].process.pid if processes else None, 4242),
        ("process name", processes[0].process.process_name if processes else None, "vector_add"),
        ("slice begins", begins, 26),
        ("slice ends", ends, 26),
        ("flows started", len(flow_starts), 7),
        ("flows ended", len(flow_ends), 7),
        ("flows matched", set(flow_starts) == set(flow_ends), True),
        ("kernel slice", "vec_add(float*, float*)" in names, True),
        ("copy slice", "Memcpy HtoD (Pageable -> Device)" in names, True),
        ("counter values", counters, 6),
        ("string arguments named by an iid given before", unresolved, 0),
        ("a kernel's grid argument by iid", "4,1,1" in grids, True),
    ] + check_counters(pb, apptracer, examples, workdir)
    failed = [(what, got, want) for what, got, want in checks if got != want]
    for what, got, want in failed:
        print(f"FAIL: {what}: got {got!r}, want {want!r}", file=sys.stderr)
    if not failed:
        print(f"ok: {len(tracks)} tracks, {begins} slices, {len(flow_starts)} flows")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
