"""``ceql`` command line: run a CEQL query over a CSV, JSON-lines or Parquet file.

    ceql run --query Q.ceql --input events.csv [--output matches.jsonl] [--time-field ts]

Exit status: 0 done, 1 a file that cannot be read or written, 2 a query error,
3 a bad event (the matches before it are written first).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, List, Optional

from . import compile as compile_query
from .errors import CeqlError

PROGRESS_MIN_ROWS = 100_000


class _FileError(Exception):
    """A file the command cannot read or write: reported in one line, exit 1."""


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise _FileError(f"cannot read the {what} file {path}: {e}") from None


def _read_table(path: Path) -> Any:
    import pyarrow as pa

    try:
        return _read_table_as(path)
    except (OSError, pa.ArrowException) as e:
        raise _FileError(f"cannot read {path}: {e}") from None


def _read_table_as(path: Path) -> Any:
    suffixes = [s.lower() for s in path.suffixes]
    if ".parquet" in suffixes or ".pq" in suffixes:
        import pyarrow.parquet as pq

        return pq.read_table(path)
    if ".jsonl" in suffixes or ".ndjson" in suffixes or ".json" in suffixes:
        import pyarrow.json as pj

        return pj.read_json(path)
    if ".csv" in suffixes or ".tsv" in suffixes:
        import pyarrow.csv as pc

        parse = pc.ParseOptions(delimiter="\t") if ".tsv" in suffixes else None
        return pc.read_csv(path, parse_options=parse)
    raise SystemExit(f"ceql: cannot tell the format of {path} (use .csv, .tsv, .jsonl or .parquet)")


def _type_column(table: Any, requested: Optional[str]) -> Any:
    """Renames the event-type column to ``type`` (``--type-field``, or ``event_type``)."""
    names = table.column_names
    source = requested or ("type" if "type" in names else "event_type" if "event_type" in names else None)
    if source is None or source not in names:
        raise SystemExit(f"ceql: the input has no event-type column (columns: {', '.join(names)}); use --type-field")
    if source != "type":
        table = table.rename_columns(["type" if n == source else ("_type" if n == "type" else n) for n in names])
    return table


def _json_default(v: Any) -> Any:
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def _progress(total: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # optional dependency
        return None
    return tqdm(total=total, unit="ev", unit_scale=True, disable=total < PROGRESS_MIN_ROWS, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except _FileError as e:
        print(f"ceql: {e}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    text = _read_text(args.query, "query")
    schema = _read_text(args.schema, "schema") if args.schema else None
    try:
        query = compile_query(text, schema)
    except CeqlError as e:
        print(str(e).replace("--> query", f"--> {args.query}", 1), file=sys.stderr)
        return 2
    for w in query.warnings:
        if w.code != "W0402" or not args.quiet:
            print(str(w), file=sys.stderr)
    import pyarrow.compute  # noqa: F401  (loaded before timing; Match.events uses it)

    t0 = time.perf_counter()
    table = _type_column(_read_table(Path(args.input)), args.type_field)
    read_s = time.perf_counter() - t0
    stream = query.stream(time_field=args.time_field, time_unit=args.time_unit, late=args.late)
    out = None
    if args.output:
        try:
            out = sys.stdout if args.output == "-" else open(args.output, "w")
        except OSError as e:
            raise _FileError(f"cannot write {args.output}: {e}") from None
    summary = sys.stderr if args.output == "-" else sys.stdout
    bar = _progress(table.num_rows)
    matches = 0
    examples: List[Any] = []

    def emit(found: List[Any]) -> None:
        nonlocal matches
        matches += len(found)
        if out is not None:
            for m in found:
                rec = {"start": m.start, "end": m.end, "positions": list(m.positions)}
                if not args.no_events:
                    rec["events"] = m.events
                out.write(json.dumps(rec, default=_json_default) + "\n")
        elif len(examples) < 3:
            examples.extend(found[: 3 - len(examples)])

    t1 = time.perf_counter()
    try:
        for batch in table.to_batches(max_chunksize=args.batch_size):
            emit(stream.push_batch(batch))
            if bar is not None:
                bar.update(batch.num_rows)
    except CeqlError as e:
        emit(getattr(e, "matches", []))
        print(f"ceql: {e}", file=sys.stderr)
        return 3
    finally:
        if bar is not None:
            bar.close()
        if out is not None and out is not sys.stdout:
            out.close()
    elapsed = time.perf_counter() - t1
    stats = stream.stats()
    rate = stats["events"] / elapsed if elapsed > 0 else float("inf")
    print(f"events:     {stats['events']:,} ({args.input}, read in {read_s:.2f} s)", file=summary)
    print(f"matches:    {matches:,}" + (f" -> {args.output}" if args.output and args.output != "-" else ""), file=summary)
    print(f"time:       {elapsed:.3f} s", file=summary)
    print(f"throughput: {rate:,.0f} events/s", file=summary)
    dropped = stats["late_dropped"] + stats["no_key"]
    if dropped:
        print(f"not matched: {stats['late_dropped']:,} late, {stats['no_key']:,} without partition key", file=summary)
    print(
        f"engine:     {stats['det_states']} det-states, {stats['cache_clears']} cache clears, "
        f"{stats['partitions']} live partitions, {stats['live_nodes']:,} tECS nodes",
        file=summary,
    )
    for m in examples:
        print(f"  e.g. {m!r}", file=summary)
    return 0


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return n


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``ceql`` command."""
    parser = argparse.ArgumentParser(prog="ceql", description="Complex event recognition with CEQL.")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a query over a file of events")
    r.add_argument("--query", required=True, help="file with the CEQL query (may start with CREATE STREAM)")
    r.add_argument("--input", required=True, help="events: .csv, .tsv, .jsonl or .parquet, in stream order")
    r.add_argument("--output", help="write matches as JSON lines to this file ('-' for stdout)")
    r.add_argument("--schema", help="file with CREATE STREAM declarations")
    r.add_argument("--time-field", help="column with the event time stamp (for WITHIN <duration>)")
    r.add_argument("--time-unit", default="ns", choices=["s", "ms", "us", "ns"], help="unit of a numeric time field")
    r.add_argument("--type-field", help="column with the event type (default: type, else event_type)")
    r.add_argument("--late", default="error", choices=["error", "drop"], help="time stamps going backwards")
    r.add_argument("--batch-size", type=_positive, default=65_536, help="rows per batch fed to the engine")
    r.add_argument("--no-events", action="store_true", help="omit the events' data from the output")
    r.add_argument("--quiet", action="store_true", help="hide the no-WITHIN warning")
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
