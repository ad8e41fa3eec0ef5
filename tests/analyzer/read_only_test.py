#!/usr/bin/env python3
"""Read-only commands read every intact trace without changing or leaving a
file, and say in one line what is wrong with the others.

    read_only_test.py APPTRACER EXAMPLE_TRACE

- a trace cut short (its write-ahead log beside it, with or without -shm, in
  a read-only directory too) is read as far as it was committed;
- a trace whose last write was interrupted (a hot rollback journal beside it,
  as `apptracer dvdg` killed while storing leaves) is read as it was before
  that write;
- a WAL trace without its log is read as it is, creating none;
- schema versions 2 to 4 are read; older, newer and nonsense ones are one
  line naming the file; so are missing tables, and traces and system files
  the user may not read (permission denied, not "not an SQLite database");
- `dvdg` on a trace still being recorded does not store a stale graph.
As root, the read-only directories are read as `nobody` (setpriv), with a
copy of the command in a directory `nobody` can reach wherever the build is
(a clone in root's home, mode 0700, is not).
"""
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what, flush=True)


def files_in(directory):
    return {name: hashlib.sha256(open(os.path.join(directory, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(directory))}


def as_nobody():
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else None


def reachable_by_all(path):
    """Whether every user may enter `path` (each directory on the way)."""
    path = os.path.realpath(path)
    while True:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


def work_directory():
    """A fresh directory for the test's files. As root, one `nobody` can
    reach: under TMPDIR when it can (ctest's is inside the build), else under
    the first system one it can; None when there is none."""
    bases = [tempfile.gettempdir()]
    if os.geteuid() == 0:
        bases = [base for base in bases + ["/tmp", "/var/tmp", "/dev/shm"]
                 if os.path.isdir(base) and reachable_by_all(base)]
    if not bases:
        return None
    work = tempfile.mkdtemp(prefix="apptracer-read-only-", dir=bases[0])
    os.chmod(work, 0o755)
    return work


def run(apptracer, *arguments, prefix=()):
    return subprocess.run([*prefix, apptracer, *arguments], capture_output=True, text=True,
                          errors="replace", timeout=60)


def killed_while(path, body):
    """Runs body(db) in a child that dies without closing the database."""
    pid = os.fork()
    if pid == 0:
        try:
            db = sqlite3.connect(path, isolation_level=None)
            body(db)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def fresh(work, example, name):
    directory = os.path.join(work, name)
    os.makedirs(directory)
    os.chmod(directory, 0o755)
    path = os.path.join(directory, "t.db")
    shutil.copy(example, path)
    os.chmod(path, 0o644)
    return directory, path


def kernels_in(apptracer, path, prefix=()):
    result = run(apptracer, "query", path, "SELECT count(*) FROM kernels", "--format", "csv", prefix=prefix)
    return result, result.stdout.splitlines()[1] if result.returncode == 0 else None


def test_wal(apptracer, example, work):
    directory, path = fresh(work, example, "wal")

    def add_kernel_rows(db):
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("INSERT INTO kernels (launch_kind) SELECT launch_kind FROM kernels")
        # A trace cut short has no indexes yet: timeline builds temporary ones.
        db.execute("DROP INDEX api_calls_correlation")
        db.execute("DROP INDEX kernels_call")
    before = kernels_in(apptracer, path)[1]
    killed_while(path, add_kernel_rows)
    expect(os.path.exists(path + "-wal") and os.path.exists(path + "-shm"), "the killed writer left -wal and -shm")
    files = files_in(directory)
    result, count = kernels_in(apptracer, path)
    expect(count == str(2 * int(before)), f"WAL rows are read: {count} vs {before}: {result.stderr}")
    expect("-wal is beside it" in result.stderr, f"a note says what is read: {result.stderr!r}")
    expect(files_in(directory) == files, "no file added, removed or changed (the -shm index neither)")

    os.remove(path + "-shm")
    files = files_in(directory)
    result, count = kernels_in(apptracer, path)
    expect(count == str(2 * int(before)), f"WAL without -shm is read: {result.stderr}")
    expect(files_in(directory) == files, f"reading left no -shm: {sorted(files_in(directory))}")

    nobody = as_nobody()
    if nobody is None:
        print("note: no setpriv; the read-only directory case is skipped")
        return
    os.chmod(directory, 0o555)
    for name in os.listdir(directory):
        os.chmod(os.path.join(directory, name), 0o444)
    for arguments in (["info", path], ["stats", path], ["dvdg", "--no-store", path],
                      ["timeline", path, "-o", "-"]):
        result = run(apptracer, *arguments, prefix=nobody)
        expect(result.returncode == 0, f"{arguments[0]} reads a WAL trace in a read-only directory: {result.stderr!r}")
    result, count = kernels_in(apptracer, path, prefix=nobody)
    expect(count == str(2 * int(before)), f"all of it: {count}")
    expect(files_in(directory) == files, "nothing changed in the read-only directory")
    os.chmod(directory, 0o755)


def test_wal_with_a_live_writer(apptracer, example, work):
    directory, path = fresh(work, example, "live")
    before = int(kernels_in(apptracer, path)[1])
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("INSERT INTO kernels (launch_kind) SELECT launch_kind FROM kernels")
        os.write(ready_w, b"x")
        os.read(done_r, 1)  # holds the database open until told
        db.execute("INSERT INTO kernels (launch_kind) SELECT launch_kind FROM kernels")
        db.close()
        os._exit(0)
    os.read(ready_r, 1)
    result, count = kernels_in(apptracer, path)
    expect(count == str(2 * before), f"reads beside a live writer: {count} {result.stderr!r}")
    os.write(done_w, b"x")
    os.waitpid(pid, 0)
    expect(kernels_in(apptracer, path)[1] == str(4 * before), "the writer carried on and finished")


def test_hot_journal(apptracer, example, work):
    directory, path = fresh(work, example, "journal")
    original = open(path, "rb").read()

    def store_and_die(db):
        db.execute("PRAGMA cache_size = 1")  # spill: pages reach the file before the commit
        db.execute("BEGIN")
        db.execute("CREATE TABLE dvdg_partial (x)")
        db.execute("INSERT INTO dvdg_partial SELECT randomblob(900) FROM kernel_args, kernels, kernels")
        db.execute("UPDATE strings SET text = 'overwritten'")
    killed_while(path, store_and_die)
    expect(os.path.exists(path + "-journal"), "the killed writer left its journal")
    expect(open(path, "rb").read() != original, "the interrupted write reached the file (a real test)")
    files = files_in(directory)
    result = run(apptracer, "query", path,
                 "SELECT (SELECT count(*) FROM sqlite_master WHERE name = 'dvdg_partial'), "
                 "(SELECT count(*) FROM strings WHERE text = 'overwritten')", "--format", "csv")
    expect(result.returncode == 0 and result.stdout.splitlines()[1:] == ["0,0"],
           f"read as before the write: {result.stdout!r} {result.stderr!r}")
    expect("was interrupted" in result.stderr, f"a note says so: {result.stderr!r}")
    result = run(apptracer, "query", path, "PRAGMA integrity_check", "--format", "csv")
    expect(result.stdout.splitlines()[1:] == ["ok"], f"a consistent database: {result.stdout!r}")
    for arguments in (["info", path], ["stats", path], ["timeline", path, "-o", "-"],
                      ["dvdg", "--no-store", path]):
        result = run(apptracer, *arguments)
        expect(result.returncode == 0, f"{arguments[0]} reads a trace with a hot journal: {result.stderr!r}")
    expect(files_in(directory) == files, "trace and journal are left as they were")
    # Storing may roll the journal back: SQLite does, and the trace is whole again.
    result = run(apptracer, "dvdg", path)
    expect(result.returncode == 0 and not os.path.exists(path + "-journal"),
           f"dvdg rolls back and stores: {result.stderr!r}")


def test_wal_header_without_log(apptracer, example, work):
    directory, path = fresh(work, example, "walheader")
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    expect(open(path, "rb").read()[18] == 2 and not os.path.exists(path + "-wal"), "a WAL file, no log")
    files = files_in(directory)
    result = run(apptracer, "stats", path)
    expect(result.returncode == 0, f"read: {result.stderr!r}")
    expect(files_in(directory) == files, f"no log or index created: {sorted(files_in(directory))}")


def one_line_error(result, path, says):
    lines = result.stderr.splitlines()
    expect(result.returncode != 0 and len(lines) == 1 and path in lines[0] and says in lines[0],
           f"one line naming {path} saying {says!r}: {result.returncode} {result.stderr!r}")


def test_versions_and_missing_tables(apptracer, example, work):
    directory, path = fresh(work, example, "versions")
    for version, accepted, says in [("2", True, ""), ("3", True, ""), ("1", True, ""),
                                    ("0", False, "not a version number"),
                                    ("999", False, "newer"), ("-1", False, "not a version number"),
                                    ("abc", False, "not a version number"), ("3x", False, "not a version number")]:
        db = sqlite3.connect(path)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
        db.commit()
        db.close()
        result = run(apptracer, "stats", path)
        if accepted:
            expect(result.returncode == 0, f"schema version {version} is read: {result.stderr!r}")
        else:
            one_line_error(result, path, says)
    # A version-1 trace may lack what a command needs: it says to re-record.
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.execute("ALTER TABLE memcpys DROP COLUMN src_memory")
    db.commit()
    db.close()
    one_line_error(run(apptracer, "stats", path, "--report", "copies"), path, "record the program again")
    # A trace of the current version lacking what it declares is damaged: the
    # example made current (the tables it lacks, added empty as declared).
    schema = json.loads(run(apptracer, "schema", "--format", "json").stdout)
    shutil.copy(example, path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(schema["schema_version"]),))
    have = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for name, table in schema["tables"].items():
        if table["role"] == "trace" and name not in have:
            columns = ", ".join(f'{c["name"]} {c["type"]}' for c in table["columns"])
            db.execute(f"CREATE TABLE {name} ({columns})")
    db.execute("DROP TABLE syncs")
    db.execute("ALTER TABLE memsets DROP COLUMN value")
    db.commit()
    db.close()
    one_line_error(run(apptracer, "stats", path, "--report", "syncs"), path, "no such table")
    one_line_error(run(apptracer, "timeline", path, "-o", "-"), path, "no such column")
    one_line_error(run(apptracer, "query", path, "SELECT x FROM syncs"), path, "no such table")


def test_unreadable_files(apptracer, example, work):
    """A file the user may not read is said to be that, not a damaged one."""
    nobody = as_nobody()
    if nobody is None:
        print("note: no setpriv; the unreadable file cases are skipped")
        return
    directory, path = fresh(work, example, "unreadable")
    system = os.path.join(directory, "system.json")
    with open(system, "w") as f:
        f.write('{"format": "apptracer system", "version": 1, "machine": {}, "paths": []}')
    os.chmod(path, 0o000)
    os.chmod(system, 0o000)
    one_line_error(run(apptracer, "stats", path, prefix=nobody), path, "cannot read it (Permission denied)")
    os.chmod(path, 0o644)
    one_line_error(run(apptracer, "whatif", path, "--system", system, prefix=nobody), system,
                   "cannot read the system file (Permission denied)")
    os.chmod(directory, 0o700)
    one_line_error(run(apptracer, "info", path, prefix=nobody), path, "cannot read it (Permission denied)")
    os.chmod(directory, 0o755)


def test_dvdg_on_a_trace_being_recorded(apptracer, example, work):
    directory, path = fresh(work, example, "recording")
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = 'incomplete' WHERE key = 'status'")
    db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(os.getpid()),))
    db.execute("UPDATE meta SET value = ? WHERE key = 'host'", (os.uname().nodename,))
    db.commit()
    db.close()
    # This process is alive but has no tracer mapped: a reused pid, not recording.
    result = run(apptracer, "dvdg", path)
    expect(result.returncode == 0 and "stored in" in result.stdout, f"a dead recording stores: {result.stderr!r}")
    shutil.copy(example, path)

    def recording(db):
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("UPDATE meta SET value = 'incomplete' WHERE key = 'status'")
    killed_while(path, recording)
    files = files_in(directory)
    result = run(apptracer, "dvdg", path, "--json", os.path.join(work, "recording.json"))
    expect(result.returncode == 0 and "(not stored)" in result.stdout, f"not stored: {result.stdout!r}")
    expect("still being recorded" in result.stderr and "--force" in result.stderr and
           len(result.stderr.splitlines()) <= 2, f"says so: {result.stderr!r}")
    expect(os.path.exists(os.path.join(work, "recording.json")), "exports still work")
    expect(files_in(directory) == files, "the trace is untouched")
    result = run(apptracer, "dvdg", path, "--force")
    expect(result.returncode == 0 and "stored in" in result.stdout, f"--force stores: {result.stderr!r}")


def main():
    apptracer, example = sys.argv[1:3]
    work = work_directory()
    if work is None:
        print("SKIP: no temporary directory `nobody` can reach (TMPDIR, /tmp, /var/tmp, /dev/shm) "
              "to run the command as another user", file=sys.stderr)
        return 77
    previous = os.getcwd()
    try:
        # The command as `nobody` can run it: the build may lie where only its owner can reach.
        os.mkdir(os.path.join(work, "bin"), mode=0o755)
        apptracer = shutil.copy(apptracer, os.path.join(work, "bin", "apptracer"))
        os.chmod(apptracer, 0o755)
        os.chdir(work)
        for test in (test_wal, test_wal_with_a_live_writer, test_hot_journal, test_wal_header_without_log,
                     test_versions_and_missing_tables, test_unreadable_files,
                     test_dvdg_on_a_trace_being_recorded):
            test(apptracer, example, work)
    finally:
        os.chdir(previous)
        for root, dirs, _ in os.walk(work):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(work, ignore_errors=True)
    print("read_only: ok" if not failures else f"read_only: {len(failures)} FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
