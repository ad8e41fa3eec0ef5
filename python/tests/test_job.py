"""A job's traces on DuckDB (apptracer.job): a 2-rank job fabricated from
the bundled vector_add trace (its schema, with rows added per rank): eight
steps of a forward kernel then an all-gather; rank 1's host pauses 20 ms
in step 5 and then launches three short kernels before the all-gather (the
pause a few calls back, as in real FSDP steps), and blocks 5 ms in a
synchronization before step 7's. Exported as Parquet partitioned by rank, the stragglers query names the
rank, the step and what held it."""
import os
import shutil
import sqlite3

import pytest

from apptracer import job
from bundled import UM, VECTOR_ADD

STEP_NS = 50_000_000
HOST_GAP_NS = 20_000_000
SYNC_NS = 5_000_000


def insert(db, table, **row):
    columns = ", ".join(row)
    db.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(row))})",
               list(row.values()))


def enum(db, name, text):
    """An enum's number as the trace says (enum_values)."""
    return db.execute("SELECT value FROM enum_values WHERE enum = ? AND name = ?",
                      (name, text)).fetchone()[0]


def string_id(db, text):
    found = db.execute("SELECT id FROM strings WHERE text = ?", (text,)).fetchone()
    if found:
        return found[0]
    return db.execute("INSERT INTO strings (text) VALUES (?)", (text,)).lastrowid


def write_rank(path, rank, late):
    """`late`: step -> (host gap ns, synchronization ns) before its all-gather."""
    shutil.copy(VECTOR_ADD, path)
    db = sqlite3.connect(path)
    origin = int(db.execute("SELECT value FROM meta WHERE key = 'start_ns'").fetchone()[0])
    comm = db.execute("INSERT INTO communicators (library, comm_id, rank, nranks, created_ns) "
                      "VALUES (?, 24301, ?, 2, ?)",
                      (enum(db, "comm_library", "NCCL"), rank, origin)).lastrowid
    runtime, driver = enum(db, "api_domain", "runtime"), enum(db, "launch_kind", "driver")
    step_name, launch, synchronize = (string_id(db, name) for name in
                                      ("step", "cudaLaunchKernel", "cudaDeviceSynchronize"))
    correlation = 1_000_000
    for step in range(1, 9):
        start = origin + step * STEP_NS
        gap, blocked = late.get(step, (0, 0))
        issue = start + 600_000 + gap + blocked
        correlation += 1
        insert(db, "api_calls", correlation_id=correlation, domain=runtime, cbid=0, name_id=launch, tid=7,
               start_ns=start + 10_000, end_ns=start + 15_000, return_code=0)
        insert(db, "kernels", call_correlation_id=correlation, launch_kind=driver, stream=7,
               gpu_start_ns=start + 20_000, gpu_end_ns=start + 520_000)
        # After a pause, a few quick launches: the pause is not the last gap.
        for quick in range(3 if gap else 0):
            correlation += 1
            launched = issue - 300_000 + quick * 100_000
            insert(db, "api_calls", correlation_id=correlation, domain=runtime, cbid=0, name_id=launch,
                   tid=7, start_ns=launched, end_ns=launched + 50_000, return_code=0)
        if blocked:
            correlation += 1
            insert(db, "api_calls", correlation_id=correlation, domain=runtime, cbid=0,
                   name_id=synchronize, tid=7, start_ns=issue - blocked, end_ns=issue - 1_000,
                   return_code=0)
            insert(db, "syncs", call_correlation_id=correlation, kind=enum(db, "sync_kind", "device"), tid=7,
                   start_ns=issue - blocked, end_ns=issue - 1_000)
        insert(db, "collectives", communicator_id=comm, kind=enum(db, "collective_kind", "AllGather"),
               datatype=enum(db, "data_type", "float32"), element_bytes=4,
               count=1024, seq=step, nonblocking=0, tid=7, stream=7, api_start_ns=issue,
               api_end_ns=issue + 10_000, gpu_start_ns=issue + 5_000, gpu_end_ns=issue + 100_000)
        insert(db, "nvtx_ranges", name_id=step_name, tid=7, depth=0, start_ns=start,
               end_ns=issue + 200_000, kind=enum(db, "nvtx_kind", "push/pop"))
    db.commit()
    db.close()


@pytest.fixture
def exported(tmp_path):
    pytest.importorskip("duckdb", reason="apptracer[duckdb] is not installed")
    ranks = [tmp_path / "rank0.db", tmp_path / "rank1.db"]
    write_rank(ranks[0], 0, {})
    write_rank(ranks[1], 1, {5: (HOST_GAP_NS, 0), 7: (0, SYNC_NS)})
    return job.export_parquet(ranks, tmp_path / "job.parquet")


def test_export_is_partitioned_by_rank(exported):
    for table in job.EXPORTED_TABLES:
        assert sorted(os.listdir(os.path.join(exported, table))) == ["job_rank=0", "job_rank=1"]
    counts = job.connect(exported).execute(
        "SELECT job_rank, count(*) FROM collectives GROUP BY job_rank ORDER BY job_rank").fetchall()
    assert counts == [(0, 8), (1, 8)]


def test_stragglers_name_rank_step_and_what_held_it(exported):
    late = job.stragglers(exported)
    assert len(late) == 2
    gap, blocked = late.iloc[0], late.iloc[1]
    assert (gap["late_rank"], gap["seq"], gap["step_range"], gap["step"]) == (1, 5, "step", 5)
    assert gap["held_by"] == "host gap"
    assert gap["wait_ns"] == pytest.approx(HOST_GAP_NS, rel=0.2)
    assert gap["cause_ns"] == pytest.approx(HOST_GAP_NS, rel=0.2)
    assert (blocked["step"], blocked["held_by"], blocked["cause"]) == (
        7, "synchronization", "cudaDeviceSynchronize")
    assert blocked["cause_ns"] == pytest.approx(SYNC_NS, rel=0.2)


def test_an_existing_export_is_kept_and_errors_are_one_line(exported, tmp_path):
    with pytest.raises(FileExistsError, match="force=True"):
        job.export_parquet([tmp_path / "rank0.db"], exported)
    with pytest.raises(FileNotFoundError, match="no such trace file"):
        job.export_parquet([tmp_path / "missing.db"], tmp_path / "other")
    with pytest.raises(ValueError, match="rank 0 again"):
        job.export_parquet([tmp_path / "rank0.db", tmp_path / "rank0.db"], tmp_path / "twice")


def test_spark_runs_the_same_stragglers_query(exported):
    """The query is standard SQL: Spark (local mode; skipped where PySpark is
    not installed) gives DuckDB's rows."""
    sql = pytest.importorskip("pyspark.sql")
    spark = (sql.SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .getOrCreate())
    try:
        for table in job.EXPORTED_TABLES:
            spark.read.parquet(os.path.join(exported, table)).createOrReplaceTempView(table)
        rows = spark.sql(job.STRAGGLERS_SQL.format(min_late_ns=100_000)).collect()
    finally:
        spark.stop()
    duck = job.stragglers(exported, min_late_ns=100_000)
    assert len(rows) == len(duck) == 2
    for row, (_, expected) in zip(rows, duck.iterrows()):
        for column in ("late_rank", "seq", "step", "held_by", "late_by_ns", "cause_ns"):
            assert row[column] == expected[column], column


def test_traces_of_other_jobs_are_refused(tmp_path):
    """Two unrelated programs are not ranks 0 and 1 of a job, nor are ranks of
    two jobs' communicators; the check comes before DuckDB is needed."""
    with pytest.raises(ValueError, match="held no rank of a job"):
        job.export_parquet([VECTOR_ADD, UM], tmp_path / "unrelated")
    write_rank(tmp_path / "rank0.db", 0, {})
    other = tmp_path / "other_job_rank1.db"
    write_rank(other, 1, {})
    db = sqlite3.connect(other)
    db.execute("UPDATE communicators SET comm_id = 99")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="not ranks of one job"):
        job.export_parquet([tmp_path / "rank0.db", other], tmp_path / "two_jobs")
    assert not os.path.exists(tmp_path / "unrelated") and not os.path.exists(tmp_path / "two_jobs")
