#!/usr/bin/env python3
"""Every command of `apptracer --help` keeps the command-line convention
(docs/cli.md): its group's output options, exit status 2 for a usage error
and 1 for a runtime error (each one line), `apptracer help COMMAND`, format
from -o's extension with a contradicting --format refused, comma lists,
plain CSV, no overwriting without -f.

usage: cli_convention_test.py APPTRACER EXAMPLES_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

APPTRACER = os.path.abspath(sys.argv[1])
EXAMPLES = os.path.abspath(sys.argv[2])
PRINTS = "Commands that print results"
WRITES = "Commands that write files"
failures = []
SCRATCH = None


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(*arguments):
    # In the scratch folder: a command that wrote to its default name leaves nothing behind.
    return subprocess.run([APPTRACER, *arguments], capture_output=True, text=True, cwd=SCRATCH, timeout=120)


def one_line_error(result, what):
    lines = result.stderr.splitlines()
    check(len(lines) == 1 and lines[0].startswith("apptracer: "),
          f"{what}: stderr is not one 'apptracer: ' line: {result.stderr!r}")


def command_groups():
    """{command: group} from `apptracer --help`'s groups."""
    result = run("--help")
    check(result.returncode == 0, f"--help exits {result.returncode}")
    groups, group = {}, None
    for line in result.stdout.splitlines():
        heading = re.match(r"^(\S.*):$", line)
        if heading:
            group = heading.group(1)
            continue
        entry = re.match(r"^  (\w+)\s", line)
        if entry and group and group.startswith("Commands"):
            groups[entry.group(1)] = group
    return groups


# How to run each command on its inputs: TRACE stands for a trace, OUT for a
# file in the scratch folder. A command missing here fails the test: say how
# it is run (a command that reads no input, or only from a GPU, says None).
def arguments_of(trace, system, scratch):
    out = os.path.join(scratch, "out")
    return {
        "info": [trace],
        "stats": [trace, "-r", "kernels"],
        "query": [trace, "SELECT count(*) AS n FROM kernels"],
        "diff": [trace, trace, "--no-dvdg"],
        "diagnose": [trace],
        "whatif": [trace, "--system", system],
        "timeline": [trace, "-o", out + ".pftrace"],
        "merge": [trace, "-o", out + ".db"],
        "dvdg": [trace, "--no-store", "-o", out + ".dot"],
        "report": [trace, "-o", out + ".html"],
        "schema": [],
        "record": ["-o", out + ".db", "--host-allocations=all", "--", "sh", "-c", "true"],
        "links": None,
    }


def options_of(help_text):
    return set(re.findall(r"(?:^|[\s,])(-[-\w]+)", help_text))


def check_help(command, group):
    via_help = run("help", command)
    via_flag = run(command, "--help")
    check(via_help.returncode == 0, f"help {command} exits {via_help.returncode}")
    check(via_help.stdout == via_flag.stdout, f"help {command} differs from {command} --help")
    usage = via_help.stdout.splitlines()[1] if via_help.stdout.count("\n") > 1 else via_help.stdout
    check(f"apptracer {command}" in via_help.stdout and os.path.dirname(APPTRACER) not in via_help.stdout,
          f"help {command}: the usage line should say 'apptracer {command}', not the binary's path: {usage!r}")
    options = options_of(via_help.stdout)
    wanted = {"-o", "--output", "-f", "--force"}
    if group.startswith(PRINTS):
        wanted |= {"--format", "--json", "--csv"}
        check("--format FORMAT:{table,csv,json}" in via_help.stdout, f"{command}: --format is not table|csv|json")
    missing = wanted - options
    check(not missing, f"{command} ({group}) lacks {sorted(missing)}")
    # -f is --force everywhere: never a short form of anything else.
    check(re.search(r"-f,--force\b", via_help.stdout), f"{command}: -f is not --force")


def check_usage_errors(command, arguments):
    bad = run(command, "--no-such-option", *(arguments or []))
    check(bad.returncode == 2, f"{command} --no-such-option exits {bad.returncode}, not 2")
    one_line_error(bad, f"{command} --no-such-option")


def check_missing_input(command, arguments, trace):
    if not arguments or trace not in arguments:
        return
    missing = [a if a != trace else "/nonexistent/trace.db" for a in arguments]
    result = run(command, *missing)
    check(result.returncode == 1, f"{command} on a missing trace exits {result.returncode}, not 1")
    one_line_error(result, f"{command} on a missing trace")
    if arguments[0] == trace:
        bare = run(command)
        check(bare.returncode == 2, f"{command} without its trace exits {bare.returncode}, not 2")
        one_line_error(bare, f"{command} without its trace")


def check_outputs(command, group, arguments, scratch):
    """-o FILE: written there, never replaced without -f; for a command that
    prints results, the format from -o's extension and a contradiction refused."""
    if arguments is None:
        return
    given = list(arguments)
    if "-o" in given:
        index = given.index("-o")
        target = given[index + 1]
        del given[index:index + 2]
    else:
        target = os.path.join(scratch, f"{command}.json" if group.startswith(PRINTS) else f"{command}.out")
        if command == "schema":
            target = os.path.join(scratch, "schema.json")
    if os.path.exists(target):
        os.remove(target)
    first = run(command, "-o", target, *given)
    if not check(first.returncode == 0, f"{command} -o {target} exits {first.returncode}: {first.stderr}"):
        return
    check(os.path.exists(target), f"{command} -o {target} wrote nothing")
    again = run(command, "-o", target, *given)
    check(again.returncode == 1, f"{command} -o EXISTING exits {again.returncode}, not 1")
    one_line_error(again, f"{command} -o EXISTING")
    forced = run(command, "-o", target, "-f", *given)
    check(forced.returncode == 0, f"{command} -o EXISTING -f exits {forced.returncode}: {forced.stderr}")
    if not group.startswith(PRINTS):
        return
    with open(target, errors="replace") as written:
        try:
            json.load(written)
        except ValueError:
            failures.append(f"{command} -o {target}: not JSON (the extension says JSON)")
    csv_path = os.path.join(scratch, f"{command}.csv")
    by_name = run(command, "-o", csv_path, *given)
    if check(by_name.returncode == 0 and os.path.exists(csv_path),
             f"{command} -o {csv_path} exits {by_name.returncode}, wrote {os.path.exists(csv_path)}: {by_name.stderr}"):
        # Plain CSV: a header first; output of several tables puts a
        # `# NAME` line before each table's header (docs/cli.md).
        with open(csv_path, errors="replace") as written:
            lines = written.read().splitlines()
        check(lines and lines[0] and (not lines[0].startswith("#") or
                                      (lines[0].startswith("# ") and len(lines) > 1 and lines[1])),
              f"{command} -o x.csv: {lines[:2]!r} is not CSV")
        if command in ("stats", "query", "diagnose"):  # one table each, as run here
            check(not any(line.startswith("#") for line in lines),
                  f"{command} -o x.csv: one table with a comment line: {lines[:2]!r}")
    contradiction = run(command, "--format", "csv", "-o", os.path.join(scratch, f"{command}.2.json"), *given)
    check(contradiction.returncode == 2, f"{command} --format csv -o x.json exits {contradiction.returncode}, not 2")
    one_line_error(contradiction, f"{command} --format csv -o x.json")
    alias = run(command, "--json", *given)
    check(alias.returncode == 0 and alias.stdout.lstrip()[:1] in "[{",
          f"{command} --json (alias of --format json) exits {alias.returncode}: {alias.stdout[:80]!r}")


def main():
    groups = command_groups()
    check(len(groups) >= 13, f"--help lists only {sorted(groups)}")
    for command, group in groups.items():
        check(group.startswith(PRINTS) or group.startswith(WRITES), f"{command} is in no group: {group}")
    with tempfile.TemporaryDirectory() as scratch:
        global SCRATCH
        SCRATCH = scratch
        trace = os.path.join(scratch, "vector_add.db")
        shutil.copy(os.path.join(EXAMPLES, "vector_add.db"), trace)
        system = os.path.join(EXAMPLES, "h200.system.json")
        table = arguments_of(trace, system, scratch)
        for command, group in groups.items():
            if not check(command in table, f"{command}: the test does not know how to run it"):
                continue
            check_help(command, group)
            check_usage_errors(command, table[command])
            check_missing_input(command, table[command], trace)
            check_outputs(command, group, table[command], scratch)

        # Comma lists: -r a,b is -r a -r b.
        listed = run("stats", trace, "-r", "kernels,copies", "--format", "json")
        if check(listed.returncode == 0, f"stats -r kernels,copies exits {listed.returncode}: {listed.stderr}"):
            check(set(json.loads(listed.stdout)) >= {"kernels", "copies"},
                  f"stats -r kernels,copies printed {sorted(json.loads(listed.stdout))}")
        # A writer of several formats: the extension chooses, a contradiction is refused.
        timeline = os.path.join(scratch, "t.json")
        wrong = run("timeline", trace, "--format", "perfetto", "-o", timeline)
        check(wrong.returncode == 2, f"timeline --format perfetto -o t.json exits {wrong.returncode}")
        schema = os.path.join(scratch, "schema.md")
        markdown = run("schema", "-o", schema)
        if check(markdown.returncode == 0, f"schema -o schema.md exits {markdown.returncode}"):
            with open(schema) as written:
                check(written.read().startswith("# Trace schema"), "schema -o x.md is not Markdown")
        unnamed = run("dvdg", trace, "--no-store", "-o", os.path.join(scratch, "graph.txt"))
        check(unnamed.returncode == 2, f"dvdg -o graph.txt (no format) exits {unnamed.returncode}, not 2")


        for flag in ("-V", "--version"):
            version = run(flag)
            check(version.returncode == 0 and version.stdout.startswith("apptracer "),
                  f"{flag}: exit {version.returncode}, {version.stdout!r}")
        unknown = run("help", "stat")
        check(unknown.returncode == 2 and "stats" in unknown.stderr,
              f"help stat: exit {unknown.returncode}, {unknown.stderr!r}")
        listing = run("help")
        check(listing.returncode == 0 and PRINTS in listing.stdout, "help without a command lists no commands")

    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(groups)} commands checked, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
