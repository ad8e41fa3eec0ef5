#!/usr/bin/env python3
"""What the repository's text points to is in the repository, for any reader:

- no file names the design notes kept outside the repository;
- no issue or pull-request numbers (the word issue, PR or bug followed by a
  number, or a number after "#"): they mean nothing to a reader of the code, a
  script or a test;
- every relative link of every Markdown file resolves to a file, and every
  #fragment to a heading of that file.

    references_test.py SOURCE_DIR

Scans the files git tracks or would track (every file under SOURCE_DIR
without git), text only. Checks itself first on strings that must and must not be flagged.
"""
import os
import re
import subprocess
import sys

# Spelled in pieces so that this file does not name them itself.
OUTSIDE_NOTES = re.compile(r"\b(?:DESIGN|GPU)" + re.escape(".md"))
ISSUE_NUMBER = re.compile(
    r"\b(?:issues?|pull requests?|PRs?|tickets?|bugs?)\s*#?\d+\b"  # issue N, issue #N, PR N
    r"|(?<![\w&#/'\"])#\d+\b",                                     # #N, (#N)
    re.IGNORECASE)
# "#N" that is no issue: how the analyzer names allocations in its output
# ("alloc #3 device", "sub-allocation #7", "#12 device 4096 B rw"), and how
# demangled C++ names number lambdas ("{lambda()#3}", in kernel names).
ALLOCATION_LABEL = re.compile(
    r"(?:\balloc(?:ation)?\s+|\bsub-allocation\s+)#\d+"
    r"|#\d+\s+(?:device|pinned|pageable|managed|mapped|write-combined|registered|pool)\b"
    r"|\{lambda\([^)]*\)#\d+\}")

MARKDOWN_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def reference_problems(text):
    """(line number, problem) for each outside-notes name or issue number."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in OUTSIDE_NOTES.finditer(line):
            problems.append((number, f"names {match.group(0)}, which is not in the repository"))
        allowed = [m.span() for m in ALLOCATION_LABEL.finditer(line)]
        for match in ISSUE_NUMBER.finditer(line):
            if not any(start <= match.start() < end for start, end in allowed):
                problems.append((number, f"issue number '{match.group(0)}'"))
    return problems


def github_anchors(text):
    """The #fragments GitHub gives the headings of a Markdown text."""
    anchors, seen, fenced = set(), {}, False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def links(text):
    """(line number, target) of every Markdown link outside code blocks."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
        for match in MARKDOWN_LINK.finditer(line):
            found.append((number, match.group(1) or match.group(2)))
    return found


def link_problems(path, text, read):
    """(line number, problem) for each relative link that does not resolve."""
    problems = []
    for number, target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # https:, mailto:
        file_part, _, fragment = target.partition("#")
        linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        linked_text = read(linked) if file_part else text
        if linked_text is None:
            problems.append((number, f"link to {target}: no such file"))
        elif fragment and linked.endswith(".md") and fragment not in github_anchors(linked_text):
            problems.append((number, f"link to {target}: no such heading"))
    return problems


def self_check():
    # Assembled, so that this file holds none of them on one line.
    must_flag = [f"see issue {19}", f"(issue {15})", f"issue #{18}", f"Issue {14}'s",
                 f"fixed in #{18}", f"(#{7})", f"PR {12}", "read " + "DESIGN" + ".md",
                 "GPU" + ".md says"]
    must_pass = ["alloc #3 (device, 4 MiB)", "sub-allocation #7 of alloc #3",
                 "\"#12 device 4096 B rw; #13 pinned host\"", "&#10;", "color '#888'",
                 "issues a copy", "Fig. 6.1", "CUDA error 400", "#include <cstdio>",
                 "::{lambda(float)#1}, std::array"]
    failures = [s for s in must_flag if not reference_problems(s)]
    failures += [s for s in must_pass if reference_problems(s)]
    doc = "# Title\n## A `b` c\n## A `b` c\n```\n# not a heading\n```\n"
    files = {"d/x.md": doc, "d/y.md": ""}
    good = "# Here\n[a](x.md#title) [b](#here) [c](x.md#a-b-c-1) [d](../d/y.md) [e](https://x.org/#no)"
    bad = "[a](z.md) [b](#nothing) [c](x.md#not-a-heading) ![d](img.png)"
    if link_problems("d/t.md", good, files.get):
        failures.append(good)
    if len(link_problems("d/t.md", bad, files.get)) != 4:
        failures.append(bad)
    for failure in failures:
        print(f"FAIL: the checks misjudge: {failure}")
    return not failures


def tracked_files(source):
    try:
        listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], check=True,
                                capture_output=True).stdout.decode().split("\0")
        return [name for name in listed if name]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for directory, subdirectories, files in os.walk(source):
            subdirectories[:] = [d for d in subdirectories
                                 if not d.startswith((".git", "build")) and d != "node_modules"]
            names += [os.path.relpath(os.path.join(directory, f), source) for f in files]
        return names


def main():
    source = sys.argv[1]
    if not self_check():
        return 1
    texts = {}
    for name in tracked_files(source):
        try:
            with open(os.path.join(source, name), "rb") as f:
                data = f.read()
        except OSError:
            continue  # deleted but not yet committed
        if b"\0" not in data:
            texts[name] = data.decode("utf-8", errors="replace")

    def read(name):
        if name in texts:
            return texts[name]
        return "" if os.path.exists(os.path.join(source, name)) else None

    problems, link_count = [], 0
    for name, text in sorted(texts.items()):
        if name.endswith("package-lock.json"):
            continue  # npm's record of the report's dependencies
        problems += [(name, n, p) for n, p in reference_problems(text)]
        if name.endswith(".md"):
            link_count += len(links(text))
            problems += [(name, n, p) for n, p in link_problems(name, text, read)]
    for name, number, problem in problems:
        print(f"{name}:{number}: {problem}")
    markdown = sum(name.endswith(".md") for name in texts)
    if len(texts) < 100 or markdown < 5 or link_count < 20:
        print(f"FAIL: too little checked: {len(texts)} files, {markdown} Markdown, {link_count} links")
        return 1
    print(f"references: {len(texts)} files, {markdown} Markdown files, {link_count} links; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
