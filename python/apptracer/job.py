"""A job's traces on an existing engine: each process's trace exported as
Parquet partitioned by rank, and the cross-rank analyses as SQL that DuckDB
runs here and a distributed engine (Spark, Dask) runs unchanged on a
cluster (docs/ranks.md). The per-process SQLite trace stays the recording
format; nothing here is an engine of its own.

    from apptracer import job
    job.export_parquet(["rank0.db", "rank1.db"], "job.parquet")
    job.stragglers("job.parquet")        # DataFrame: per collective, the late rank and what held it
"""
import os
import sqlite3

# What the cross-rank analyses read, with the strings their names are in.
EXPORTED_TABLES = ("communicators", "collectives", "kernels", "memcpys", "memsets", "api_calls",
                   "syncs", "nvtx_ranges", "strings")
# The partition column: the process's rank in its largest communicator
# (`rank` is a column of communicators and collectives already).
PARTITION = "job_rank"

# Per joined collective (communicator, sequence number, kind) whose last rank
# arrived after the one before it: who, by how much, the others' wait, the
# outermost NVTX range it was issued in and which occurrence, and what held
# it: the stream still busy with GPU work when it was issued; else what took
# most of the time the rank fell behind, just before it issued the call, on
# the issuing thread (a CUDA call, a synchronization, or a host gap between
# calls, a few calls back as often as not), counted within that time, as
# `apptracer stats --report stragglers` walks it. Standard SQL over the
# exported tables: the same text runs on DuckDB, Spark SQL and dask-sql.
STRAGGLERS_SQL = """
WITH calls AS (
  SELECT c.job_rank, m.comm_id, c.seq, c.kind, c.tid, c.stream, c.api_start_ns,
         COALESCE(c.gpu_start_ns, c.api_start_ns) AS arrival_ns
  FROM collectives c
  JOIN communicators m ON m.job_rank = c.job_rank AND m.id = c.communicator_id
  WHERE c.seq IS NOT NULL
),
ordered AS (
  SELECT calls.*,
         ROW_NUMBER() OVER (PARTITION BY comm_id, seq, kind ORDER BY arrival_ns DESC, job_rank)
           AS arrived_from_last,
         COUNT(*) OVER (PARTITION BY comm_id, seq, kind) AS ranks,
         MIN(arrival_ns) OVER (PARTITION BY comm_id, seq, kind) AS first_arrival_ns
  FROM calls
),
-- Sums from the first arrival: epoch nanoseconds times the ranks overflow 64 bits.
waits AS (
  SELECT comm_id, seq, kind, SUM(arrival_ns - first_arrival_ns) AS since_first_ns
  FROM ordered GROUP BY comm_id, seq, kind
),
late AS (
  SELECT l.job_rank, l.comm_id, l.seq, l.kind, l.tid, l.stream, l.api_start_ns, l.arrival_ns,
         l.ranks, l.arrival_ns - p.arrival_ns AS late_by_ns,
         CAST(l.ranks * (l.arrival_ns - l.first_arrival_ns) - w.since_first_ns AS BIGINT) AS wait_ns
  FROM ordered l
  JOIN ordered p ON p.comm_id = l.comm_id AND p.seq = l.seq AND p.kind = l.kind
                AND p.arrived_from_last = 2
  JOIN waits w ON w.comm_id = l.comm_id AND w.seq = l.seq AND w.kind = l.kind
  WHERE l.arrived_from_last = 1
),
gpu_work AS (
  SELECT job_rank, stream, gpu_end_ns FROM kernels
  UNION ALL SELECT job_rank, stream, gpu_end_ns FROM memcpys
  UNION ALL SELECT job_rank, stream, gpu_end_ns FROM memsets
),
busy AS (
  SELECT l.job_rank, l.comm_id, l.seq, l.kind, MAX(g.gpu_end_ns) AS busy_until_ns
  FROM late l
  JOIN gpu_work g ON g.job_rank = l.job_rank AND g.stream = l.stream AND g.gpu_end_ns <= l.arrival_ns
  GROUP BY l.job_rank, l.comm_id, l.seq, l.kind
),
thread_calls AS (
  SELECT a.job_rank, a.tid, a.start_ns, a.end_ns, a.name_id, a.correlation_id,
         LAG(a.end_ns) OVER (PARTITION BY a.job_rank, a.tid ORDER BY a.start_ns) AS previous_end_ns
  FROM api_calls a
  WHERE COALESCE(a.parent_correlation_id, 0) = 0
),
-- Each call, and the gap before it; the gap after the last call before the
-- collective is its own.
stretches AS (
  SELECT job_rank, tid, start_ns, end_ns, name_id, correlation_id, 0 AS is_gap FROM thread_calls
  UNION ALL
  SELECT job_rank, tid, previous_end_ns, start_ns, NULL, NULL, 1 FROM thread_calls
  WHERE previous_end_ns < start_ns
),
behind AS (
  SELECT l.job_rank, l.comm_id, l.seq, l.kind, l.tid, l.api_start_ns,
         l.api_start_ns - GREATEST(l.late_by_ns, 1) AS from_ns
  FROM late l
),
last_end AS (
  SELECT b.job_rank, b.comm_id, b.seq, b.kind, MAX(a.end_ns) AS end_ns
  FROM behind b
  JOIN thread_calls a ON a.job_rank = b.job_rank AND a.tid = b.tid AND a.end_ns <= b.api_start_ns
  GROUP BY b.job_rank, b.comm_id, b.seq, b.kind
),
inside AS (
  SELECT b.job_rank, b.comm_id, b.seq, b.kind, x.name_id, x.correlation_id, x.is_gap,
         LEAST(x.end_ns, b.api_start_ns) - GREATEST(x.start_ns, b.from_ns) AS inside_ns
  FROM behind b
  JOIN stretches x ON x.job_rank = b.job_rank AND x.tid = b.tid AND x.end_ns > b.from_ns
                  AND x.start_ns < b.api_start_ns
  UNION ALL
  SELECT b.job_rank, b.comm_id, b.seq, b.kind, NULL, NULL, 1,
         b.api_start_ns - GREATEST(e.end_ns, b.from_ns)
  FROM behind b
  JOIN last_end e ON e.job_rank = b.job_rank AND e.comm_id = b.comm_id AND e.seq = b.seq
                 AND e.kind = b.kind
  WHERE e.end_ns < b.api_start_ns
),
longest AS (
  SELECT i.*, s.text AS name,
         CASE WHEN EXISTS (SELECT 1 FROM syncs y WHERE y.job_rank = i.job_rank
                           AND y.call_correlation_id = i.correlation_id) THEN 1 ELSE 0 END
           AS synchronization,
         ROW_NUMBER() OVER (PARTITION BY i.job_rank, i.comm_id, i.seq, i.kind
                            ORDER BY i.inside_ns DESC) AS rank_in_window
  FROM inside i
  LEFT JOIN strings s ON s.job_rank = i.job_rank AND s.id = i.name_id
),
open_ranges AS (
  SELECT l.job_rank, l.comm_id, l.seq, l.kind, n.name_id, n.start_ns,
         ROW_NUMBER() OVER (PARTITION BY l.job_rank, l.comm_id, l.seq, l.kind
                            ORDER BY COALESCE(n.depth, 0), n.start_ns) AS outermost
  FROM late l
  JOIN nvtx_ranges n ON n.job_rank = l.job_rank AND n.start_ns <= l.api_start_ns
                    AND n.end_ns >= l.api_start_ns
),
steps AS (
  SELECT o.job_rank, o.comm_id, o.seq, o.kind, s.text AS step_range,
         (SELECT COUNT(*) FROM nvtx_ranges r WHERE r.job_rank = o.job_rank
            AND r.name_id = o.name_id AND r.start_ns <= o.start_ns) AS step
  FROM open_ranges o
  LEFT JOIN strings s ON s.job_rank = o.job_rank AND s.id = o.name_id
  WHERE o.outermost = 1
)
SELECT l.comm_id, l.seq, l.kind, l.ranks, l.job_rank AS late_rank, l.arrival_ns, l.late_by_ns,
       l.wait_ns, st.step_range, st.step,
       CASE WHEN b.busy_until_ns > l.api_start_ns THEN 'gpu work'
            WHEN c.is_gap = 1 THEN 'host gap'
            WHEN c.synchronization = 1 THEN 'synchronization' ELSE 'host call' END AS held_by,
       CASE WHEN b.busy_until_ns > l.api_start_ns THEN b.busy_until_ns - l.api_start_ns
            ELSE c.inside_ns END AS cause_ns,
       CASE WHEN b.busy_until_ns > l.api_start_ns THEN NULL ELSE c.name END AS cause
FROM late l
LEFT JOIN busy b ON b.job_rank = l.job_rank AND b.comm_id = l.comm_id AND b.seq = l.seq
                AND b.kind = l.kind
LEFT JOIN longest c ON c.job_rank = l.job_rank AND c.comm_id = l.comm_id AND c.seq = l.seq
                   AND c.kind = l.kind AND c.rank_in_window = 1
LEFT JOIN steps st ON st.job_rank = l.job_rank AND st.comm_id = l.comm_id AND st.seq = l.seq
                  AND st.kind = l.kind
WHERE l.late_by_ns >= {min_late_ns}
ORDER BY l.wait_ns DESC, l.comm_id, l.seq
"""


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise ImportError("apptracer: this needs DuckDB: pip install 'apptracer[duckdb]'") from None
    return duckdb


def _job_communicator(db):
    """The process's largest communicator as (library, comm_id, nranks, rank):
    the job's world, or the widest group it was in; None when it held no rank."""
    try:
        return db.execute("SELECT library, comm_id, nranks, rank FROM communicators "
                          "ORDER BY nranks DESC, id LIMIT 1").fetchone()
    except sqlite3.DatabaseError:
        return None


def _job_ranks(traces):
    """Each trace's rank, after checking that the traces are ranks of one job:
    one trace is a job of its own (rank 0 unless it held another); several
    must each hold a rank of the same largest communicator (the comm_id that
    `apptracer merge` joins their collectives by), each a different rank."""
    communicators = []
    for path in traces:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"apptracer: {path}: no such trace file")
        db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
        try:
            communicators.append(_job_communicator(db))
        finally:
            db.close()
    if len(traces) == 1:
        return [communicators[0][3] if communicators[0] else 0]
    ranks = {}
    for path, communicator in zip(traces, communicators):
        if communicator is None:
            raise ValueError(f"apptracer: {path} held no rank of a job (it has no NCCL or MPI "
                             "communicator): give the traces of one job's ranks")
        if communicator[:3] != communicators[0][:3]:
            raise ValueError(
                f"apptracer: {traces[0]} and {path} are not ranks of one job (communicator "
                f"{communicators[0][1]} of {communicators[0][2]} ranks vs {communicator[1]} of "
                f"{communicator[2]}): give the traces of one job's ranks")
        rank = communicator[3]
        if rank in ranks:
            raise ValueError(f"apptracer: {path} is rank {rank} again: give one trace per rank")
        ranks[rank] = path
    return [communicator[3] for communicator in communicators]


# The Parquet type of each SQLite column type, so every rank's files agree
# (an empty table has no values to tell them).
_PARQUET_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR", "BLOB": "BLOB"}


def _frame(db, table):
    """The table as a DataFrame DuckDB reads exactly: integers nullable (a
    NULL must not turn nanoseconds since the epoch into floats), text as
    Python objects."""
    import pandas
    frame = pandas.read_sql_query(f'SELECT * FROM "{table}"', db, dtype_backend="numpy_nullable")
    for column in frame.columns:
        if not pandas.api.types.is_numeric_dtype(frame[column]):
            frame[column] = frame[column].astype(object)
    return frame


def _typed_columns(db, table):
    columns = []
    for _, name, declared, *_ in db.execute(f'PRAGMA table_info("{table}")'):
        parquet_type = _PARQUET_TYPES.get(declared.split()[0].upper() if declared else "", "VARCHAR")
        columns.append(f'CAST("{name}" AS {parquet_type}) AS "{name}"')
    return ", ".join(columns)


def _sql_literal(path):
    return "'" + str(path).replace("'", "''") + "'"


def export_parquet(traces, directory, force=False):
    """Writes each process's trace (one per rank of one job, not a merged
    one) as DIRECTORY/TABLE/job_rank=R/part-0.parquet for the tables the
    cross-rank analyses read; integer columns as recorded (times on the trace
    clock). Traces that are not ranks of one job (see _job_ranks) raise
    ValueError. An existing DIRECTORY is replaced only with `force`. Returns
    DIRECTORY."""
    directory = os.fspath(directory)
    if os.path.exists(directory) and os.listdir(directory) and not force:
        raise FileExistsError(f"apptracer: {directory} exists and is not empty (force=True replaces it)")
    traces = [os.fspath(path) for path in traces]
    ranks = _job_ranks(traces)
    duckdb = _duckdb()
    connection = duckdb.connect()
    for path, rank in zip(traces, ranks):
        db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
        try:
            present = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
            for table in EXPORTED_TABLES:
                if table not in present:
                    continue
                target = os.path.join(directory, table, f"{PARTITION}={rank}")
                os.makedirs(target, exist_ok=True)
                connection.register("frame", _frame(db, table))
                connection.execute(f"COPY (SELECT {_typed_columns(db, table)} FROM frame) TO "
                                   f"{_sql_literal(os.path.join(target, 'part-0.parquet'))} (FORMAT PARQUET)")
                connection.unregister("frame")
        finally:
            db.close()
    return directory


def connect(directory):
    """A DuckDB connection with a view per exported table over DIRECTORY."""
    duckdb = _duckdb()
    connection = duckdb.connect()
    # Its bar would be written into the caller's standard output.
    connection.execute("SET enable_progress_bar = false")
    for table in EXPORTED_TABLES:
        files = os.path.join(os.fspath(directory), table, f"{PARTITION}=*", "*.parquet")
        connection.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet("
                           f"{_sql_literal(files)}, hive_partitioning = true)")
    return connection


def stragglers(directory, min_late_ns=100_000):
    """STRAGGLERS_SQL on an exported job, by DuckDB: a DataFrame, one row per
    collective whose last rank arrived at least `min_late_ns` after the one
    before it, the largest wait first."""
    return connect(directory).execute(STRAGGLERS_SQL.format(min_late_ns=int(min_late_ns))).df()
