#!/usr/bin/env python3
"""docs/schema.md is what `apptracer schema --format markdown` prints now, so
the schema's documentation cannot drift from tables.def.

    schema_doc_test.py APPTRACER DOCS_SCHEMA_MD
"""
import difflib
import subprocess
import sys

apptracer, doc = sys.argv[1], sys.argv[2]
printed = subprocess.run([apptracer, "schema", "--format", "markdown"], check=True,
                         capture_output=True, text=True).stdout
with open(doc, encoding="utf-8") as f:
    committed = f.read()

# A schema document without the tables a trace is made of would compare nothing.
for heading in ("## `api_calls`", "## `kernels`", "## `dvdg_edges`", "### enum `copy_kind`"):
    if heading not in printed:
        print(f"FAIL: the command's Markdown lacks '{heading}'")
        sys.exit(1)

if printed != committed:
    diff = difflib.unified_diff(committed.splitlines(), printed.splitlines(), doc,
                                "apptracer schema --format markdown", lineterm="", n=1)
    print("\n".join(list(diff)[:60]))
    print(f"FAIL: {doc} differs from the schema; regenerate it with "
          f"`apptracer schema --format markdown > docs/schema.md`")
    sys.exit(1)
print(f"schema doc: {len(printed.splitlines())} lines, as the command prints them")
