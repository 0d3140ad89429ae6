"""ceql.spark on a real standalone cluster (a master and two workers on 127.0.0.1,
from the pyspark wheel's jars), with ceql shipped to the executors as
docs/spark.md says: a venv-packed environment through ``spark-submit --archives``.
Each driver is a ``spark-submit`` of ``tests/cluster_support.py``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import cluster_support as cl  # noqa: E402
import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support", "cluster_support"]
pytestmark = [pytest.mark.spark, pytest.mark.cluster]

FILES = 8
PER_FILE = 120


@pytest.fixture(autouse=True)
def clean_cluster(cluster):
    """After each test, what its applications unpacked is deleted (Cluster.clean)."""
    yield
    cluster.clean()


def stream_input(directory: Path, seed: int):
    """Files of a streaming source (one per micro-batch) and the flush event."""
    rows = ss.events(FILES * PER_FILE, 3, seed=seed)
    flush = ss.flush_event(rows, 200_000)
    chunks = [rows[i : i + PER_FILE] for i in range(0, len(rows), PER_FILE)] + [[flush]]
    for i, c in enumerate(chunks):
        ss.write_parquet(directory, f"part-{i:04d}", c)
    return rows + [flush]


def committed(sink: Path) -> int:
    """Micro-batches the file sink has committed (its ``_spark_metadata`` log)."""
    log = sink / "_spark_metadata"
    return sum(1 for p in log.glob("*") if p.name.split(".")[0].isdigit()) if log.exists() else 0


def stream_args(d: Path, **extra) -> list:
    args = ["stream", "--source", str(d / "in"), "--sink", str(d / "out"), "--checkpoint", str(d / "ckpt"), "--report", str(d / "report.json")]
    for k, v in extra.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    return args


def check_sink(spark, sink: Path, truth) -> None:
    out = spark.read.parquet(str(sink))
    ss.assert_same(ss.collect(out), truth)
    ids = [r.match_id for r in out.select("match_id").collect()]
    assert len(ids) == len(set(ids)), "a match_id appears twice"


def test_batch_on_scrambled_input_equals_the_single_process_engine(cluster, ceql_archive, tmp_path):
    report = tmp_path / "report.json"
    proc = cluster.submit(["batch", "--report", str(report), "--events", "3000", "--keys", "40", "--seed", "7"],
                          archive=ceql_archive, name="batch")
    assert proc.returncode == 0, proc.log.read_text()[-4000:]
    got = json.loads(report.read_text())
    rows = [tuple(tuple(x) if isinstance(x, list) else x for x in r) for r in got["rows"]]
    truth = ss.ground_truth(ss.events(3000, 40, seed=7), ss.QUERY)
    assert len(truth) > 50
    ss.assert_same(rows, truth)
    assert len(set(got["ids"])) == len(got["ids"]) == len(truth)


def test_streaming_driver_killed_and_restarted_is_exactly_once(spark, cluster, ceql_archive, tmp_path):
    """With a trailing absence (docs/spark.md, "Trailing absence"): besides partial
    matches and held rows, the state holds matches waiting for their deadline, which
    must be reported once across the kill. (The worker-kill and Connect tests run the
    plain query.)"""
    rows = stream_input(tmp_path / "in", seed=71)
    truth = ss.ground_truth(rows, ss.QUERY_ABSENT)
    assert len(truth) > 50
    cmd, env = cluster.submit_command(stream_args(tmp_path, query=ss.QUERY_ABSENT), archive=ceql_archive)
    log = tmp_path / "driver-1.log"
    with open(log, "ab") as out:
        driver = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        cl.wait_for(lambda: committed(tmp_path / "out") >= 2 or driver.poll() is not None, 300, "two micro-batches", log=log)
        assert driver.poll() is None, "the stream ended before it could be killed:\n" + log.read_text()[-3000:]
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)  # the driver's own process group
        driver.wait(30)
    before = committed(tmp_path / "out")
    assert 2 <= before < FILES + 1, "the driver must die mid-stream"
    proc = cluster.submit(stream_args(tmp_path, query=ss.QUERY_ABSENT), archive=ceql_archive, name="driver-2")
    assert proc.returncode == 0, proc.log.read_text()[-4000:]
    batches = json.loads((tmp_path / "report.json").read_text())["batches"]
    assert min(batches) >= before - 1, "the restarted driver resumes from the checkpoint"
    check_sink(spark, tmp_path / "out", truth)


def test_streaming_worker_killed_in_a_micro_batch_is_exactly_once(spark, cluster, ceql_archive, tmp_path):
    rows = stream_input(tmp_path / "in", seed=81)
    truth = ss.ground_truth(rows, ss.QUERY)
    marker = tmp_path / "in-micro-batch"
    cmd, env = cluster.submit_command(stream_args(tmp_path, slow_marker=marker, slow_seconds=30), archive=ceql_archive)
    log = tmp_path / "driver.log"
    with open(log, "ab") as out:
        driver = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        cl.wait_for(lambda: marker.exists() and marker.read_text() or driver.poll() is not None, 300, "a slowed micro-batch", log=log)
        assert driver.poll() is None, log.read_text()[-3000:]
        worker = cluster.worker_of(int(marker.read_text()))
        assert worker is not None, "the state task runs under one of our workers"
        killed = cluster.kill_worker(worker)
        assert len(killed) >= 2, "the worker and its executor"
        assert driver.wait(300) == 0, log.read_text()[-4000:]
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(30)
        for i, w in enumerate(cluster.workers):
            if w is None:
                cluster.start_worker(i)
        cl.wait_for(lambda: cluster.alive_workers() >= 2, 120, "the restarted worker")
    check_sink(spark, tmp_path / "out", truth)


def test_missing_ceql_on_the_executors_fails_fast_and_says_what_to_install(cluster, bare_python, tmp_path):
    report = tmp_path / "report.json"
    t0 = time.time()
    proc = cluster.submit(["missing", "--report", str(report)], python=str(bare_python), name="missing")
    assert proc.returncode == 0, proc.log.read_text()[-4000:]
    assert time.time() - t0 < 240
    got = json.loads(report.read_text())
    for name in ("check_executors", "detect"):
        err = got[name]["error"]
        assert err, f"{name} should have failed"
        assert got[name]["type"] == "CeqlSparkSetupError"
        assert "No module named 'ceql'" in err
        assert str(bare_python) in err, "the message names the executors' Python"
        assert "pip install" in err and "spark.archives" in err
    assert got["detect"]["seconds"] < 120, "detect fails before any task retry storm"
