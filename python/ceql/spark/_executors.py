"""A driver-side check that the executors can import ceql, before any real work.

Without it, a cluster whose executors lack ceql fails only at the first action,
after every task retry, with ``ModuleNotFoundError`` deep in a Java stack trace.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any, List, Optional, Set

from ceql.errors import CeqlError

_CHECKED: Set[str] = set()

# The probe runs on the executors, which may not have ceql: it is compiled from
# this source in a module name that does not exist there, so that Spark's
# cloudpickle ships it by value instead of importing it from `ceql`.
_PROBE_SOURCE = '''
def probe(batches):
    import os, sys
    import pyarrow as pa
    for _ in batches:
        pass
    version = error = where = digest = None
    try:
        import ceql
        version, where = ceql.__version__, os.path.dirname(ceql.__file__)
        from ceql.spark import _executors
        digest = getattr(_executors, "source_digest", lambda: None)()
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
    yield pa.RecordBatch.from_pydict({
        "python": [sys.executable],
        "pyspark_python": [os.environ.get("PYSPARK_PYTHON")],
        "version": [version],
        "error": [error],
        "where": [where],
        "digest": [digest],
    })
'''
_PROBE_SCHEMA = "python string, pyspark_python string, version string, error string, where string, digest string"


class CeqlSparkSetupError(CeqlError):
    """ceql cannot run on the executors: not importable there, or another version."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="SPARK_SETUP", origin="spark")


def source_digest() -> str:
    """A digest of the ceql package's Python files (names and contents): equal on
    the driver and the executors when both have the same build, whatever their
    platform (the native module differs between platforms; the Python files of one
    build do not)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _session_key(spark: Any) -> str:
    try:
        return "app:" + spark.sparkContext.applicationId
    except Exception:  # Spark Connect has no SparkContext
        return "connect:" + str(getattr(spark, "session_id", id(spark)))


def _cores(spark: Any) -> int:
    """The cluster's cores as Spark counts them (``defaultParallelism``), at least 2."""
    try:
        return max(2, int(spark.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no SparkContext
        try:
            return max(2, int(spark.conf.get("spark.default.parallelism")))
        except Exception:
            return 2


def _probe() -> Any:
    namespace: dict = {"__name__": "ceql_executor_probe"}
    exec(compile(_PROBE_SOURCE, "<ceql executor probe>", "exec"), namespace)
    return namespace["probe"]


def check_executors(spark: Any, *, tasks: Optional[int] = None, cached: bool = False) -> List[str]:
    """Runs a small job whose tasks import ceql on the executors; raises
    :class:`CeqlSparkSetupError`, naming the executors' Python (``PYSPARK_PYTHON``)
    and what to install there, when they cannot, or when their ceql is another
    version than the driver's. Returns the executors' Python interpreters.

    ``tasks``: how many tasks the job has; by default one per core of the cluster
    (``defaultParallelism``, at least 2). Spark places them, so they reach every
    executor only when it spreads them: a node the job misses fails later, in the
    query's own tasks. ``cached``: skip the check if it already passed in this
    session."""
    import ceql

    key = _session_key(spark)
    if cached and key in _CHECKED:
        return []
    if tasks is None:
        tasks = _cores(spark)
    try:
        rows = spark.range(0, tasks, 1, tasks).mapInArrow(_probe(), _PROBE_SCHEMA).collect()
    except Exception as e:  # the worker could not even start the probe (no pyarrow?)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CeqlSparkSetupError(
            "ceql.spark: the executors cannot run a Python Arrow task "
            f"(driver PYSPARK_PYTHON={os.environ.get('PYSPARK_PYTHON')!r}): {first}. Install pyarrow and ceql for "
            "the executors' Python on every worker node, or ship a packed environment with spark.archives "
            "(docs/spark.md, 'Getting ceql onto the executors')."
        ) from None
    pythons = sorted({r["python"] for r in rows})
    failed = [r for r in rows if r["error"]]
    if failed:
        r = failed[0]
        raise CeqlSparkSetupError(
            f"ceql.spark: ceql cannot be imported on the executors ({r['error']}); their Python is {r['python']} "
            f"(PYSPARK_PYTHON={r['pyspark_python']!r}). Install the ceql wheel into that interpreter on every "
            "worker node (pip install ceql-*.whl), or ship a packed environment with spark.archives and set "
            "PYSPARK_PYTHON=./environment/bin/python (docs/spark.md, 'Getting ceql onto the executors')."
        )
    versions = sorted({r["version"] for r in rows})
    if versions != [ceql.__version__]:
        raise CeqlSparkSetupError(
            f"ceql.spark: the executors have ceql {', '.join(versions)} but the driver has {ceql.__version__} "
            f"({sys.executable}); install the same wheel on both"
        )
    mine = source_digest()
    other = [r for r in rows if r["digest"] != mine]
    if other:
        raise CeqlSparkSetupError(
            f"ceql.spark: the executors' ceql {ceql.__version__} ({other[0]['where']}) is another build than the "
            f"driver's ({Path(ceql.__file__).parent}): their Python files differ. Install the same wheel on both "
            "(docs/spark.md, 'Getting ceql onto the executors')"
        )
    _CHECKED.add(key)
    return pythons
