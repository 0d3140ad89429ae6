"""A real Spark cluster for the ``cluster`` tests, from the pyspark wheel's own jars.

* :class:`Cluster`: a standalone master and two workers on 127.0.0.1, started
  with ``spark-class`` and stopped by the PIDs started here. Every application
  unpacks the packed environment (~380 MB) on each executor and on its driver;
  :meth:`Cluster.clean` deletes what finished applications left, so that the
  suite's disk use does not grow with the number of tests.
* :func:`packed_env`: ceql shipped to the executors the documented way
  (docs/spark.md): a virtual environment with the ceql wheel and pandas, no
  pyspark, packed with ``venv-pack`` and given to ``spark-submit --archives``.
* :class:`ConnectServer`: a Spark Connect server on the cluster, started with the
  wheel's ``sbin/start-connect-server.sh``.
* ``python tests/cluster_support.py JOB ...``: the driver programs the tests run
  through ``spark-submit`` (or as Spark Connect clients), in their own process.

Set ``CEQL_WHEEL`` to the wheel to ship (CI builds a manylinux one); otherwise
the newest ``ceql-*.whl`` of ``target/wheels`` or ``dist`` is used, or one is
built with maturin.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOOPBACK = "127.0.0.1"
#: Cores and memory of each worker: two applications (a Connect server and a
#: spark-submit job) can run side by side with ``spark.cores.max=2``.
WORKER_CORES, WORKER_MEMORY = 2, "2g"
APP_CONF = {
    "spark.cores.max": "2",
    "spark.executor.cores": "1",
    "spark.executor.memory": "768m",
    "spark.driver.host": LOOPBACK,
    "spark.driver.bindAddress": LOOPBACK,
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.task.maxFailures": "4",
}


def spark_home() -> Path:
    """The pyspark package: its ``bin``, ``sbin`` and ``jars`` are a Spark install."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def wait_for(check, timeout: float, what: str, proc: Optional[subprocess.Popen] = None, log: Optional[Path] = None) -> Any:
    """Polls ``check()`` until it returns a true value; fails with the log's tail."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} not ready within {timeout} s\n{tail}")


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((LOOPBACK, port)) == 0


def base_env(workdir: Path) -> Dict[str, str]:
    """Environment of every Spark process started here: loopback only, logs and
    scratch space under ``workdir``."""
    env = dict(os.environ)
    env.update(
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOCAL_HOSTNAME="localhost",
        SPARK_HOME=str(spark_home()),
        SPARK_LOG_DIR=str(workdir / "logs"),
        SPARK_PID_DIR=str(workdir / "pids"),
        SPARK_LOCAL_DIRS=str(workdir / "local"),
        PYSPARK_DRIVER_PYTHON=sys.executable,
    )
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    env.pop("SPARK_REMOTE", None)
    return env


class Cluster:
    """A standalone master and two workers, on 127.0.0.1."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.env = base_env(workdir)
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"spark://{LOOPBACK}:{self.port}"
        self.master: Optional[subprocess.Popen] = None
        self.workers: List[Optional[subprocess.Popen]] = [None, None]
        #: Scratch directories of the drivers submitted since the last :meth:`clean`.
        self.driver_dirs: List[Path] = []
        self.drivers_submitted = 0

    def _spawn(self, name: str, args: List[str], env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
        log = self.workdir / f"{name}.log"
        out = open(log, "ab")
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        return subprocess.Popen(cmd, env=env or self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def start(self) -> "Cluster":
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)
        master_env = dict(self.env, SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
        self.master = self._spawn(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port", str(self.port), "--webui-port", str(self.ui_port)],
            master_env,
        )
        wait_for(lambda: port_open(self.port), 90, "the Spark master", self.master, self.workdir / "master.log")
        for i in range(len(self.workers)):
            self.start_worker(i)
        wait_for(lambda: self.alive_workers() >= len(self.workers), 90, "two Spark workers", log=self.workdir / "worker-0.log")
        return self

    def start_worker(self, i: int) -> None:
        """Starts worker ``i`` with the cleanup of finished applications'
        directories that docs/spark.md recommends (:meth:`clean` does not wait for it)."""
        work = self.workdir / f"work-{i}"
        work.mkdir(parents=True, exist_ok=True)
        opts = "-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.interval=60 -Dspark.worker.cleanup.appDataTtl=60"
        env = dict(self.env, SPARK_WORKER_OPTS=opts)
        self.workers[i] = self._spawn(
            f"worker-{i}",
            ["org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK, "--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY,
             "--webui-port", str(free_port()), "--work-dir", str(work), self.url],
            env,
        )

    def state(self) -> Dict[str, Any]:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{self.ui_port}/json/", timeout=5) as r:
            return json.loads(r.read().decode())

    def clean(self) -> None:
        """Deletes the directories of the applications that have finished: their
        executors' work directories (each with an unpacked archive) and the scratch
        directories of the drivers submitted since the last call, which must all
        have exited (a driver killed by a test leaves its unpacked archive there)."""
        try:
            done = {a["id"] for a in self.state().get("completedapps", [])}
        except (OSError, ValueError):
            done = set()
        for app in self.workdir.glob("work-*/app-*"):
            if app.name in done:
                shutil.rmtree(app, ignore_errors=True)
        for d in self.driver_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.driver_dirs.clear()

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.state()["workers"] if w["state"] == "ALIVE")
        except OSError:
            return 0

    def worker_of(self, pid: int) -> Optional[int]:
        """Index of the worker that ``pid`` descends from (an executor's Python)."""
        mine = {w.pid: i for i, w in enumerate(self.workers) if w is not None and w.poll() is None}
        while pid > 1:
            if pid in mine:
                return mine[pid]
            pid = parent_of(pid)
        return None

    def kill_worker(self, i: int) -> List[int]:
        """SIGKILL to worker ``i`` and to the executors it started (by PID)."""
        w = self.workers[i]
        assert w is not None
        killed = []
        for pid in [*descendants(w.pid), w.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
        w.wait(30)
        self.workers[i] = None
        return killed

    def stop(self) -> None:
        procs = [p for p in [*self.workers, self.master] if p is not None]
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)

    def submit(self, args: List[str], *, archive: Optional[Path] = None, python: Optional[str] = None,
               conf: Optional[Dict[str, str]] = None, timeout: float = 600, name: str = "job") -> subprocess.CompletedProcess:
        """``spark-submit`` of a job of this module, with the packed environment
        ``archive`` (``PYSPARK_PYTHON=./environment/bin/python``) or the executors'
        interpreter ``python``."""
        cmd, env = self.submit_command(args, archive=archive, python=python, conf=conf)
        log = self.workdir / f"{name}.log"
        with open(log, "ab") as out:
            proc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout)
        proc.log = log  # type: ignore[attr-defined]
        return proc

    def submit_command(self, args: List[str], *, archive: Optional[Path] = None, python: Optional[str] = None,
                       conf: Optional[Dict[str, str]] = None) -> Any:
        env = dict(self.env)
        self.drivers_submitted += 1
        scratch = self.workdir / "drivers" / f"driver-{self.drivers_submitted}"
        scratch.mkdir(parents=True)
        self.driver_dirs.append(scratch)
        env["SPARK_LOCAL_DIRS"] = str(scratch)
        cmd = [str(spark_home() / "bin" / "spark-submit"), "--master", self.url]
        if archive is not None:
            env["PYSPARK_PYTHON"] = "./environment/bin/python"
            cmd += ["--archives", f"{archive}#environment"]
        elif python is not None:
            env["PYSPARK_PYTHON"] = python
        for k, v in {**APP_CONF, **(conf or {})}.items():
            cmd += ["--conf", f"{k}={v}"]
        cmd += [str(Path(__file__).resolve()), *args]
        return cmd, env


def parent_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> List[int]:
    """PIDs of the processes started (directly or not) by ``pid``."""
    children: Dict[int, List[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            children.setdefault(parent_of(int(entry.name)), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


class ConnectServer:
    """A Spark Connect server on the cluster (``sbin/start-connect-server.sh``),
    whose executors run ``python``, an interpreter with the ceql wheel installed
    (docs/spark.md, "Spark Connect": streaming queries do not see a session's
    artifacts, so ceql is installed for the executors rather than shipped)."""

    def __init__(self, cluster: Cluster, python: Path) -> None:
        self.cluster = cluster
        self.python = python
        self.port = free_port()
        self.url = f"sc://{LOOPBACK}:{self.port}"
        self.proc: Optional[subprocess.Popen] = None

    def command(self) -> Any:
        env = dict(self.cluster.env, SPARK_NO_DAEMONIZE="1", PYSPARK_PYTHON=str(self.python))
        cmd = [str(spark_home() / "sbin" / "start-connect-server.sh"), "--master", self.cluster.url,
               "--conf", f"spark.connect.grpc.binding.address={LOOPBACK}",
               "--conf", f"spark.connect.grpc.binding.port={self.port}"]
        for k, v in APP_CONF.items():
            cmd += ["--conf", f"{k}={v}"]
        return cmd, env

    def start(self) -> "ConnectServer":
        cmd, env = self.command()
        log = self.cluster.workdir / "connect.log"
        self.proc = subprocess.Popen(cmd, env=env, stdout=open(log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: port_open(self.port), 180, "the Spark Connect server", self.proc, log)
        return self

    def stop(self) -> None:
        """Stops the server's whole process group (started in its own session): the
        script started here runs the JVM as a child, not by ``exec``, so stopping the
        script alone left the server running."""
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            end = time.monotonic() + wait
            while time.monotonic() < end and _group_alive(self.proc.pid):
                self.proc.poll()  # reaps the script once it exits (a zombie still counts)
                time.sleep(0.2)
            if not _group_alive(self.proc.pid):
                break
        if self.proc.poll() is None:
            self.proc.wait(10)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


# -- shipping ceql --------------------------------------------------------------
def ceql_wheel(workdir: Path) -> Path:
    """The ceql wheel to ship: ``$CEQL_WHEEL``, the newest built one if no source
    file is newer than it (a stale wheel would ship old code to the executors), or
    a new build."""
    given = os.environ.get("CEQL_WHEEL")
    if given:
        return Path(given)
    found = sorted([*ROOT.glob("target/wheels/ceql-*.whl"), *ROOT.glob("dist/ceql-*.whl")], key=lambda p: p.stat().st_mtime)
    sources = [*ROOT.glob("python/ceql/**/*.py"), *ROOT.glob("crates/*/src/**/*.rs"), *ROOT.glob("crates/*/src/**/*.pest")]
    newest_source = max((p.stat().st_mtime for p in sources), default=0.0)
    if found and found[-1].stat().st_mtime >= newest_source:
        return found[-1]
    out = workdir / "wheel"
    subprocess.run([sys.executable, "-m", "maturin", "build", "--release", "-o", str(out)], cwd=ROOT, check=True)
    return next(out.glob("ceql-*.whl"))


def make_venv(path: Path, packages: List[str]) -> Path:
    """A virtual environment (no system packages) with ``packages``; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    py = path / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", *packages], check=True)
    return py


def without_ceql(env: Path, path: Path) -> Path:
    """A copy of the virtual environment ``env`` without ceql; its python. The copy
    is made of hard links, so pyarrow and pandas take no second ~380 MB of disk;
    pip's uninstall unlinks ceql's files from the copy only."""
    subprocess.run(["cp", "-al", str(env), str(path)], check=True)
    py = path / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "uninstall", "-q", "-y", "ceql"], check=True)
    return py


def packed_env(workdir: Path, wheel: Path) -> Path:
    """docs/spark.md's recipe: the ceql wheel and pandas in a fresh venv (pyspark
    is not needed there: the workers put their own on the executors' path), packed
    with venv-pack."""
    env = workdir / "ceql_env"
    make_venv(env, [str(wheel), "pandas<3"])
    out = workdir / "ceql_env.tar.gz"
    subprocess.run([sys.executable, "-m", "venv_pack", "-p", str(env), "-o", str(out), "-q"], check=True)
    return out


# -- pytest fixtures (``pytest_plugins = ["cluster_support"]``) ----------------------
#: In CI a missing prerequisite (Java, venv-pack) fails the cluster tests instead
#: of skipping them.
REQUIRED = os.environ.get("CEQL_CLUSTER_REQUIRED") == "1"


def _prerequisites() -> None:
    import importlib.util
    import shutil

    import pytest

    missing = []
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing.append("Java 17")
    if importlib.util.find_spec("venv_pack") is None:
        missing.append("venv-pack (pip install venv-pack)")
    if missing:
        (pytest.fail if REQUIRED else pytest.skip)("the cluster tests need " + ", ".join(missing))


def _fixtures() -> Any:
    import pytest

    @pytest.fixture(scope="session")
    def cluster_workdir(tmp_path_factory):
        return tmp_path_factory.mktemp("cluster")

    @pytest.fixture(scope="session")
    def cluster(cluster_workdir):
        _prerequisites()
        c = Cluster(cluster_workdir / "spark")
        try:
            yield c.start()
        finally:
            c.stop()

    @pytest.fixture(scope="session")
    def ceql_archive(cluster_workdir):
        _prerequisites()
        return packed_env(cluster_workdir, ceql_wheel(cluster_workdir))

    @pytest.fixture(scope="session")
    def bare_python(cluster_workdir, ceql_archive):
        """An interpreter with pyarrow and pandas but no ceql."""
        return without_ceql(cluster_workdir / "ceql_env", cluster_workdir / "bare")

    @pytest.fixture(scope="module")
    def connect_server(cluster, ceql_archive, cluster_workdir):
        s = ConnectServer(cluster, cluster_workdir / "ceql_env" / "bin" / "python")
        try:
            yield s.start()
        finally:
            s.stop()

    return cluster_workdir, cluster, ceql_archive, bare_python, connect_server


if "pytest" in sys.modules:
    cluster_workdir, cluster, ceql_archive, bare_python, connect_server = _fixtures()


# -- driver programs ----------------------------------------------------------------
def session_of(a: argparse.Namespace) -> Any:
    """The job's session: spark-submit's, or a Spark Connect client's."""
    from pyspark.sql import SparkSession

    if a.remote:
        return SparkSession.builder.remote(a.remote).getOrCreate()
    return SparkSession.builder.getOrCreate()


def job_batch(a: argparse.Namespace) -> None:
    import spark_support as ss
    from pyspark.sql import SparkSession

    import ceql.spark as cs

    spark = session_of(a)
    rows = ss.events(a.events, a.keys, seed=a.seed)
    rnd = __import__("random").Random(a.seed)
    rnd.shuffle(rows)
    df = spark.createDataFrame(ss.pa_table(rows).to_pandas(), schema=ss.spark_schema()).repartition(3)
    matches = cs.detect(df, a.query, time_field="ts", order_field="offset")
    got = ss.collect(matches)
    ids = [r["match_id"] for r in matches.select("match_id").collect()]
    Path(a.report).write_text(json.dumps({"rows": got, "ids": ids, "pid": os.getpid()}, default=list))
    spark.stop()


class SlowDown:
    """Fault hook of the worker-kill test: in the first state call that has output
    after ``after`` calls, record the Python worker's PID and sleep, so that the
    test can kill that worker in the middle of the micro-batch."""

    def __init__(self, marker: str, seconds: float) -> None:
        self.marker, self.seconds = marker, seconds

    def __call__(self, key, state, outputs) -> None:
        if state.getCurrentWatermarkMs() > 0 and any(o.num_rows for o in outputs) and not os.path.exists(self.marker):
            with open(self.marker, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(self.seconds)


def job_stream(a: argparse.Namespace) -> None:
    import spark_support as ss
    from pyspark.sql import SparkSession

    spark = session_of(a)
    fault = SlowDown(a.slow_marker, a.slow_seconds) if a.slow_marker else None
    q = ss.run_stream(spark, Path(a.source), Path(a.sink), Path(a.checkpoint), query=a.query, watermark=a.watermark, fault=fault)
    Path(a.report).write_text(json.dumps({"batches": [p["batchId"] for p in q.recentProgress], "pid": os.getpid()}))
    spark.stop()


def job_missing(a: argparse.Namespace) -> None:
    import spark_support as ss
    from pyspark.sql import SparkSession

    import ceql.spark as cs

    spark = SparkSession.builder.getOrCreate()
    df = spark.createDataFrame(ss.pa_table(ss.events(20, 2, seed=1)).to_pandas(), schema=ss.spark_schema())
    t0 = time.time()
    report: Dict[str, Any] = {}
    for name, call in [("check_executors", lambda: cs.check_executors(spark)),
                       ("detect", lambda: cs.detect(df, ss.QUERY, time_field="ts", order_field="offset").collect())]:
        try:
            call()
            report[name] = {"error": None}
        except cs.CeqlSparkSetupError as e:
            report[name] = {"error": str(e), "type": type(e).__name__, "seconds": time.time() - t0}
    Path(a.report).write_text(json.dumps(report))
    spark.stop()


def main(argv: Optional[List[str]] = None) -> int:
    sys.path.insert(0, str(HERE))
    p = argparse.ArgumentParser()
    p.add_argument("job", choices=["batch", "stream", "missing"])
    p.add_argument("--report", required=True)
    p.add_argument("--remote", default=None, help="a Spark Connect URL (sc://...)")
    p.add_argument("--query", default=None)
    p.add_argument("--events", type=int, default=3000)
    p.add_argument("--keys", type=int, default=40)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--source")
    p.add_argument("--sink")
    p.add_argument("--checkpoint")
    p.add_argument("--watermark", default="1 minute")
    p.add_argument("--slow-marker", default=None)
    p.add_argument("--slow-seconds", type=float, default=20)
    a = p.parse_args(argv)
    import spark_support as ss

    a.query = a.query or ss.QUERY
    {"batch": job_batch, "stream": job_stream, "missing": job_missing}[a.job](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
