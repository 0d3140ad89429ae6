"""ceql.spark through Spark Connect: a Connect server (the pyspark wheel's
``sbin/start-connect-server.sh``) on the standalone cluster, whose executors run
a Python with the ceql wheel installed; the drivers are Connect clients
(``SparkSession.builder.remote``) in their own processes, with no JVM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("grpc", reason="Spark Connect clients need pyspark[connect] (pip install 'ceql[connect]')")
pytest.register_assert_rewrite("spark_support")

import cluster_support as cl  # noqa: E402
import spark_support as ss  # noqa: E402
from test_cluster import check_sink, stream_args, stream_input  # noqa: E402

pytest_plugins = ["spark_support", "cluster_support"]
pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def client(args, tmp_path: Path, name: str) -> subprocess.CompletedProcess:
    """A Connect client driver: plain ``python``, no JVM on this side."""
    log = tmp_path / f"{name}.log"
    with open(log, "ab") as out:
        proc = subprocess.run([sys.executable, str(Path(cl.__file__)), *args], stdout=out, stderr=subprocess.STDOUT, timeout=600)
    proc.log = log  # type: ignore[attr-defined]
    return proc


def test_batch_through_spark_connect(connect_server, tmp_path):
    report = tmp_path / "report.json"
    proc = client(["batch", "--remote", connect_server.url, "--report", str(report),
                   "--events", "2000", "--keys", "30", "--seed", "9"],
                  tmp_path, "batch")
    assert proc.returncode == 0, proc.log.read_text()[-4000:]
    got = json.loads(report.read_text())
    rows = [tuple(tuple(x) if isinstance(x, list) else x for x in r) for r in got["rows"]]
    truth = ss.ground_truth(ss.events(2000, 30, seed=9), ss.QUERY)
    assert len(truth) > 30
    ss.assert_same(rows, truth)


def test_streaming_through_spark_connect(spark, connect_server, tmp_path):
    rows = stream_input(tmp_path / "in", seed=91)
    proc = client([*stream_args(tmp_path), "--remote", connect_server.url], tmp_path, "stream")
    assert proc.returncode == 0, proc.log.read_text()[-4000:]
    check_sink(spark, tmp_path / "out", ss.ground_truth(rows, ss.QUERY))
