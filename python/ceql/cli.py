"""``ceql`` command line: run a CEQL query over a CSV, JSON-lines or Parquet file.

    ceql run --query Q.ceql --input events.csv [--output matches.jsonl] [--time-field ts] [--plot matches.png]
             [--max-cache-bytes N] [--max-det-states N] [--max-state-bytes N]
    ceql explain Q.ceql [--schema S] [--format text|dot|svg] [--output F]

Exit status: 0 done, 1 a file that cannot be read or written (a closed output
pipe included), 2 a query error or a bad option (an unknown input format, a
missing event-type column), 3 a bad event or an evaluation that does not fit in
memory (the matches before it are written first). Errors are one line on
standard error.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from . import compile as compile_query
from ._cli_input import FileError, Rows, UsageError, check_time_field, read_events
from ._cli_output import MatchWriter
from ._cli_plot import PLOT_MATCHES, PlotSample, check_matplotlib
from ._cli_streams import guard_standard_streams, progress_stream_open, stream_name, tell, write_lines
from ._inputs import refuse_duplicate_columns
from ._options import BUDGETS, RunOptions, _budget
from ._sources import ArrowSource, ListSource
from ._units import TIME_UNITS
from .errors import CeqlError, CeqlEventError, CeqlMemoryError

PROGRESS_MIN_ROWS = 100_000
#: ``ceql run`` keeps each push's output near this many complex events: it
#: pushes fewer rows at a time while the rows give many matches each.
MATCHES_PER_PUSH = 50_000
_FIRST_PUSH_ROWS = 1_024


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8-sig")  # an editor's byte-order mark is not text
    except (OSError, UnicodeDecodeError) as e:
        raise FileError(f"cannot read the {what} file {path}: {e}") from None


def _progress(total: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # optional dependency
        return None
    hidden = total < PROGRESS_MIN_ROWS or not progress_stream_open()
    return tqdm(total=total, unit="ev", unit_scale=True, disable=hidden, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """``ceql run``: exit status 0 done, 1 a file that cannot be read or written
    (a closed output pipe included), 2 a query error or a bad option, 3 a bad
    event; every error is one line on standard error."""
    try:
        return _run(args)
    except (FileError, UsageError) as e:
        _silence_closed_stdout()
        tell(f"ceql: {e}")
        return 1 if isinstance(e, FileError) else 2
    except BrokenPipeError:  # the summary's reader went away
        _silence_closed_stdout()
        tell("ceql: cannot write standard output: the reader closed the pipe")
        return 1


def _silence_closed_stdout() -> None:
    """After standard output's reader went away, points it at /dev/null so that
    the interpreter's final flush does not print a traceback."""
    import os

    try:
        sys.stdout.flush()
    except OSError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def _compile_file(args: argparse.Namespace) -> Optional[Any]:
    """Compiles the ``--query`` file (with ``--schema``, if given); ``None`` after
    telling a query error as its rendered diagnostic, located in the file."""
    text = _read_text(args.query, "query")
    schema = _read_text(args.schema, "schema") if args.schema else None
    try:
        return compile_query(text, schema)
    except CeqlError as e:
        tell(_located(str(e), args))
        return None


#: A query that measures time, run on a file without time stamps, reads the
#: ingestion wall clock (docs/language.md#s1-4): its windows then depend on how
#: fast the file is read, which is almost never what a file's user means.
WALL_CLOCK_WARNING = (
    "warning: the query measures time (a WITHIN or FOR duration), but the events carry no time stamp: "
    "each event's time is the moment it is read, so the result depends on how fast the file is read; "
    "give the time column with --time-field (or a primary_time in --schema)"
)


class _Once(argparse.Action):
    """An option that may be given once: ``--input a.csv --input b.csv`` would
    otherwise read only ``b.csv``, without a word."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is not None:
            what = "reads one file (concatenate the files first)" if self.dest == "input" else "writes one output"
            parser.error(f"{option_string} given twice: ceql {what}")
        setattr(namespace, self.dest, values)


def _count(n: int, noun: str, plural: str = "") -> str:
    """``n`` with ``noun``, plural unless ``n`` is 1: "1 live partition", "2,048 tECS nodes"
    (``plural`` where adding an s is not it)."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {plural or noun + 's'}"


def _located(text: str, args: argparse.Namespace) -> str:
    """A diagnostic's text with its location in the file it came from (the query
    file, or the ``--schema`` file) instead of ``query`` or ``schema``."""
    text = text.replace("--> query:", f"--> {args.query}:", 1)
    return text.replace("--> schema:", f"--> {args.schema}:", 1) if args.schema else text


def _run(args: argparse.Namespace) -> int:
    query = _compile_file(args)
    if query is None:
        return 2
    for w in query.warnings:
        if w.code != "W0402" or not args.quiet:
            tell(_located(str(w), args))
    if args.plot:
        missing = check_matplotlib(args.plot)
        if missing:
            raise UsageError(missing)
    budgets = _budgets(args)
    import pyarrow.compute  # noqa: F401  (loaded before timing; Match.events uses it)

    try:  # pyarrow's take imports pandas, if installed, on first use: not before timing, it cost ~0.45 s
        import pandas  # noqa: F401
    except ImportError:
        pass

    facts = query.describe()
    if facts["window"] == "duration" and not args.time_field and not facts["time_attributes"] and not args.quiet:
        tell(WALL_CLOCK_WARNING)
    times = ([args.time_field] if args.time_field else []) + facts["time_attributes"]  # ISO text read as time
    t0 = time.perf_counter()
    events, wide, type_field = read_events(Path(args.input), args.type_field, times, facts["string_attributes"])
    check_time_field(events, args.time_field)
    read_s = time.perf_counter() - t0
    try:
        runtime = RunOptions(args.time_field, args.time_unit, args.late, **budgets, captures=args.captures,
                             type_field=type_field).runtime(query)
    except ValueError as e:
        raise UsageError(str(e)) from None
    writer = MatchWriter(args.output, not args.no_events, args.captures) if args.output else None
    summary = sys.stderr if args.output == "-" else sys.stdout
    bar = _progress(events.num_rows)
    found = 0
    examples: List[Any] = []
    plotted = PlotSample() if args.plot else None

    def emit(matches: List[Any], source: Any) -> None:
        nonlocal found
        found += len(matches)
        if plotted is not None:
            plotted.add(matches)
        if writer is not None:
            writer.write(matches, source)
        elif len(examples) < 3:
            examples.extend(matches[: 3 - len(examples)])

    source = ListSource(events.rows) if isinstance(events, Rows) else ArrowSource(events)
    t1 = time.perf_counter()
    try:
        if not isinstance(events, Rows):
            refuse_duplicate_columns(events.column_names, 0)
        for matches in _pushes(runtime, events, source, args.batch_size, bar, wide.position if wide else None):
            emit(matches, source)
        if wide is not None:
            raise _wide_integer_error(wide, events, type_field)
        if args.close_deadlines:
            emit(list(runtime.close_deadlines(source)), source)
        if writer is not None:
            writer.close()
    except CeqlEventError as e:
        emit(e.matches, source)
        if writer is not None:
            writer.close()
        tell(f"ceql: {e}")
        return 3
    except CeqlError as e:  # CeqlMemoryError, CeqlInternalError
        emit(getattr(e, "matches", []), source)
        if writer is not None:
            writer.close()
        tell(f"ceql: {_BUDGET_NAME.sub(lambda m: '--' + m.group().replace('_', '-'), str(e))}")
        return 3
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t1
    stats = runtime.stats()
    rate = stats["events"] / elapsed if elapsed > 0 else float("inf")
    lines = [
        f"events:     {stats['events']:,} ({args.input}, read in {read_s:.2f} s)",
        f"matches:    {found:,}" + (f" -> {args.output}" if args.output and args.output != "-" else ""),
        f"time:       {elapsed:.3f} s",
        f"throughput: {rate:,.0f} events/s",
    ]
    waiting = runtime.waiting_deadlines()
    if waiting:
        lines.append(f"waiting:    {_count(waiting, 'match', 'matches')} of ABSENT ... FOR whose deadline the input "
                     "does not reach (--close-deadlines reports them)")
    dropped = stats["late_dropped"] + stats["no_key"]
    if dropped:
        lines.append(f"not matched: {stats['late_dropped']:,} late, {stats['no_key']:,} without partition key")
    lines.append(
        f"engine:     {_count(stats['det_states'], 'det-state')}, {_count(stats['cache_clears'], 'cache clear')}, "
        f"{_count(stats['partitions'], 'live partition')}, {_count(stats['live_nodes'], 'tECS node')}")
    lines.extend(f"  e.g. {m!r}" for m in examples)
    if plotted is not None:
        _plot(plotted, events, args, query, type_field)
        lines.append(f"plot:       {args.plot}")
    try:
        write_lines(summary, lines)
    except BrokenPipeError:
        raise FileError(f"cannot write {stream_name(summary)}: the reader closed the pipe") from None
    except OSError as e:
        raise FileError(f"cannot write {stream_name(summary)}: {e}") from None
    return 0


def _plot(sample: PlotSample, events: Any, args: argparse.Namespace, query: Any, type_field: str) -> None:
    """``--plot``: the timeline of the run's matches over the input's positions,
    with lanes per partition when the query has ``PARTITION BY``."""
    from ._cli_plot import partition_lanes, save

    data = events.rows if isinstance(events, Rows) else events
    data, lanes = partition_lanes(data, query.describe()["partition_by"])
    try:
        save(sample, data, args.plot, Path(args.query).name, lanes, type_field)
    except (OSError, ValueError) as e:
        raise FileError(f"cannot write the plot {args.plot}: {e}") from None


#: The budgets' names in the engine's messages, written as the options that set them.
_BUDGET_NAME = re.compile(r"\b(?:%s)\b" % "|".join(BUDGETS))


def _budgets(args: argparse.Namespace) -> Dict[str, int]:
    """The memory budgets given as options, as the API's keyword arguments; a
    value that is not a positive integer below 2^64 is a :class:`UsageError`."""
    budgets = {}
    for name in BUDGETS:
        text = getattr(args, name)
        if text is None:
            continue
        try:
            budgets[name] = _budget(name, int(text))
        except ValueError:
            option = "--" + name.replace("_", "-")
            raise UsageError(f"{option} must be a positive integer below 2**64, not {text!r}") from None
    return budgets


def _wide_integer_error(wide: Any, events: Any, type_field: str) -> CeqlEventError:
    """The error the Python API raises for the same bad value (an integer beyond 64
    bits, a ``WideInteger``; a time stamp that is none, a ``BadTime``)."""
    kind = events.column(type_field)[wide.position].as_py()
    typed = f" (type `{kind}`)" if isinstance(kind, str) else ""
    rendered = f"event at position {wide.position}{typed}, field `{wide.field}`: {wide.message}"
    return CeqlEventError(rendered, position=wide.position, field=wide.field, event_type=kind, message=wide.message)


def _pushes(runtime: Any, events: Any, source: Any, max_rows: int, bar: Any,
            stop: Optional[int] = None) -> Iterator[List[Any]]:
    """Feeds ``events`` to the engine, the rows before ``stop`` if given, and
    yields the matches of each push (``source`` is where their events' data is).

    Rows go in slices of at most ``max_rows`` (``--batch-size``), fewer while
    they complete many complex events: the next slice is sized so that its
    output stays near :data:`MATCHES_PER_PUSH` (at most twice the rows of the
    last one, at least one row). Memory then holds one push's output, however
    large the whole output is. A bad event's ``CeqlEventError`` is raised with
    the matches before it in ``matches``."""
    if isinstance(events, Rows):
        push = runtime.push_events
        total = len(events.rows)

        def part(start: int, n: int) -> Any:
            return events.rows[start : start + n]
    else:
        push = runtime.push_arrow
        total = events.num_rows if stop is None else stop

        def part(start: int, n: int) -> Any:
            return events.slice(start, n)

    start = 0
    rows = min(max_rows, _FIRST_PUSH_ROWS)
    while start < total:
        n = min(rows, total - start)
        try:
            matches = push(part(start, n), source)
        except (CeqlEventError, CeqlMemoryError) as e:
            e.matches = list(runtime.take_matches(source))
            raise
        start += n
        if bar is not None:
            bar.update(n)
        yield matches
        per_row = len(matches) / n
        rows = max(1, min(max_rows, 2 * n, int(MATCHES_PER_PUSH / per_row) if per_row else max_rows))


def explain(args: argparse.Namespace) -> int:
    """``ceql explain``: what the compiler made of a query, as text, Graphviz DOT or
    SVG (which needs Graphviz). Exit status 0 done, 1 a file that cannot be read or
    written, 2 a query error or missing Graphviz; errors are one line on standard
    error (a query error is its rendered diagnostic)."""
    from . import explain as explain_mod

    try:
        query = _compile_file(args)
        if query is None:
            return 2
        if args.format == "text":
            out = query.explain()
        else:
            for w in query.warnings:
                tell(_located(str(w), args))
            out = query.to_dot()
            if args.format == "svg":
                try:
                    out = explain_mod.to_svg(out)
                except (ImportError, CeqlError) as e:
                    raise UsageError(f"--format svg: {e}") from None
        if args.output and args.output != "-":
            try:
                Path(args.output).write_text(out, encoding="utf-8")
            except OSError as e:
                raise FileError(f"cannot write {args.output}: {e}") from None
        else:
            try:
                sys.stdout.write(out)
                sys.stdout.flush()
            except BrokenPipeError:
                raise
            except OSError as e:
                raise FileError(f"cannot write standard output: {e}") from None
        return 0
    except (FileError, UsageError) as e:
        tell(f"ceql: {e}")
        return 1 if isinstance(e, FileError) else 2
    except BrokenPipeError:
        _silence_closed_stdout()
        tell("ceql: cannot write standard output: the reader closed the pipe")
        return 1


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
    guard_standard_streams()
    parser = argparse.ArgumentParser(prog="ceql", description="Complex event recognition with CEQL.")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a query over a file of events")
    r.add_argument("--query", required=True, help="file with the CEQL query (may start with CREATE STREAM)")
    r.add_argument("--input", required=True, action=_Once,
                   help="events: .csv, .tsv, .jsonl (also .ndjson or .json: one JSON object per line) "
                        "or .parquet, in stream order (one file)")
    r.add_argument("--output", action=_Once, help="write matches as JSON lines to this file ('-' for stdout)")
    r.add_argument("--schema", help="file with CREATE STREAM declarations")
    r.add_argument("--time-field", help="column with the event time stamp (for WITHIN <duration>)")
    r.add_argument("--time-unit", choices=list(TIME_UNITS),
                   help="unit of a numeric --time-field (default ns); needs --time-field")
    r.add_argument("--type-field", help="column with the event type (default: type, else event_type)")
    r.add_argument("--late", default="error", choices=["error", "drop"], help="time stamps going backwards")
    r.add_argument("--batch-size", type=_positive, default=65_536, help="rows per batch fed to the engine")
    r.add_argument("--max-cache-bytes", metavar="N",
                   help="memory budget of the determinization cache in bytes (default 64 MiB)")
    r.add_argument("--max-det-states", metavar="N", help="det-states the cache may hold (default 4096)")
    r.add_argument("--max-state-bytes", metavar="N",
                   help="memory budget of the whole evaluation state in bytes (default: half of the memory "
                        "the process may use)")
    r.add_argument("--close-deadlines", action="store_true",
                   help="the input is the whole stream: report the matches of ABSENT(...) FOR d whose deadline "
                        "comes after its last event (by default they wait, and the summary counts them)")
    r.add_argument("--no-events", action="store_true", help="omit the events' data from the output")
    r.add_argument("--captures", action="store_true",
                   help="report which variable captured which event: a \"captures\" object per line "
                        "(one line per valuation, docs/language.md#s3-2a)")
    r.add_argument("--quiet", action="store_true",
                   help="hide the warnings about time: no WITHIN, or a duration without --time-field")
    r.add_argument("--plot", metavar="PATH", help="draw the matches on a timeline into this image (PNG, SVG, PDF; "
                   "needs the plot extra); beyond %d matches from an evenly spaced sample" % PLOT_MATCHES)
    e = sub.add_parser("explain", help="show what the compiler made of a query: text, Graphviz DOT or SVG")
    e.add_argument("query", help="file with the CEQL query (may start with CREATE STREAM)")
    e.add_argument("--schema", help="file with CREATE STREAM declarations")
    e.add_argument("--format", default="text", choices=["text", "dot", "svg"],
                   help="text (default), dot (Graphviz source), svg (needs Graphviz's dot and the graphviz extra)")
    e.add_argument("--output", action=_Once, help="write to this file instead of standard output")
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.time_unit is not None and args.time_field is None:
            r.error("--time-unit is the unit of --time-field's values: give --time-field too")
        args.time_unit = args.time_unit or "ns"
    return explain(args) if args.command == "explain" else run(args)


if __name__ == "__main__":
    sys.exit(main())
