"""ceql.plot.timeline: structure of the figure (artists, counts, labels, notes), not pixels."""

from __future__ import annotations

import datetime as dt
import importlib
import sys

import pytest

import ceql
import ceql.plot as cplot

mpl = pytest.importorskip("matplotlib")
from matplotlib.collections import LineCollection, PathCollection, QuadMesh  # noqa: E402

SMALL = [{"type": t} for t in "AABXBCAC"]
SMALL_QUERY = "SELECT * FROM S WHERE A ; B+ ; C"


def _lines(ax):
    return [c for c in ax.collections if isinstance(c, LineCollection)]


def _scatters(ax):
    return [c for c in ax.collections if isinstance(c, PathCollection)]


def _note(fig):
    return fig._supxlabel.get_text() if getattr(fig, "_supxlabel", None) else ""


def test_small_example_draws_every_match_and_event():
    matches = ceql.compile(SMALL_QUERY).run(SMALL)
    # A at 0 or 1, a non-empty subset of the Bs at 2 and 4, C at 5 or 7: 2 * 3 * 2.
    assert len(matches) == 12
    fig = cplot.timeline(matches, SMALL)
    ax, strip = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A", "B", "C", "X"]
    assert ax.get_title() == "12 matches over 8 events"
    (lines,) = _lines(ax)
    assert len(lines.get_segments()) == 12
    inputs, matched = _scatters(ax)
    assert len(inputs.get_offsets()) == 8  # every input event, one marker each
    assert len(matched.get_offsets()) == sum(len(m.positions) for m in matches) == 40
    # a match's line goes through its events: x are its positions, lanes those of their types
    first = sorted(matches, key=lambda m: (m.end, m.start, m.positions))[0]
    seg = lines.get_segments()[0]
    assert [round(p[0]) for p in seg] == list(first.positions)
    assert [round(p[1]) for p in seg] == [{"A": 0, "B": 1, "C": 2}[SMALL[p]["type"]] for p in first.positions]
    assert sum(p.get_height() for p in strip.patches) == 12  # every match counted where it ends
    assert _note(fig) == ""


def test_color_by_type_has_a_legend_and_unknown_color_by_is_refused():
    matches = ceql.compile(SMALL_QUERY).run(SMALL)
    fig = cplot.timeline(matches, SMALL, color_by="type")
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["A", "B", "C", "X"]
    with pytest.raises(ValueError, match="'match', 'type', 'variable'"):
        cplot.timeline(matches, SMALL, color_by="colour")


def test_color_by_variable_colours_each_captured_event_by_its_as_name():
    # `A AS a ; (B OR C) AS x ; C AS c`: the C at 3 is `x` in one match and `c` in another.
    events = [{"type": t} for t in "ABCC"]
    query = ceql.compile("SELECT * FROM S WHERE A AS a ; (B OR C) AS x ; C AS c")
    matches = query.run(events, captures=True)
    assert sorted(m.positions for m in matches) == [(0, 1, 2), (0, 1, 3), (0, 2, 3)]
    fig = cplot.timeline(matches, events, color_by="variable")
    legend = fig.axes[0].get_legend()
    assert legend.get_title().get_text() == "variable"
    names = [t.get_text() for t in legend.get_texts()]
    assert names == ["a", "c", "x"]
    colour = {n: tuple(h.get_color()) if isinstance(h.get_color(), tuple) else h.get_color()
              for n, h in zip(names, legend.legend_handles)}
    _, matched = _scatters(fig.axes[0])
    import matplotlib.colors as mcolors

    got = sorted((round(xy[0]), mcolors.to_hex(c)) for xy, c in zip(matched.get_offsets(), matched.get_facecolors()))
    expected = sorted((p, mcolors.to_hex(colour[name])) for m in sorted(matches, key=lambda m: m.positions)
                      for p, name in zip(m.positions, {(0, 1, 2): "axc", (0, 1, 3): "axc", (0, 2, 3): "axc"}[m.positions]))
    assert got == expected
    with pytest.raises(ValueError, match="captures=True"):
        cplot.timeline(query.run(events), events, color_by="variable")


@pytest.mark.parametrize("options, message", [
    ({"partition_by": "nope"}, "partition_by='nope': no event has a value"),
    ({"time_field": "nope"}, "time_field='nope': no event has a value"),
    ({"type_field": "kind"}, "type_field='kind': no event has a value"),
    ({"xlim": (5, 1)}, "lo <= hi"),
])
def test_options_that_would_draw_an_empty_picture_are_refused(options, message):
    matches = ceql.compile(SMALL_QUERY).run(SMALL)
    with pytest.raises(ValueError, match=message):
        cplot.timeline(matches, SMALL, **options)


def test_large_inputs_are_sampled_and_aggregated_and_the_figure_says_so():
    events = [{"type": "AB"[i % 2], "k": i % 7} for i in range(10_000)]
    matches = ceql.compile("SELECT * FROM S WHERE A : B").run(events)
    assert len(matches) == 5_000
    fig = cplot.timeline(matches[:1_000], events, max_matches=150, max_events=2_000)
    ax, strip = fig.axes
    (lines,) = _lines(ax)
    assert len(lines.get_segments()) == 150
    assert any(isinstance(c, QuadMesh) for c in ax.collections)  # events as a density
    note = _note(fig)
    assert "150 of 1,000 matches drawn" in note and "10,000 events of the lanes shown drawn as a density" in note
    assert sum(p.get_height() for p in strip.patches) == 1_000


def test_partition_lanes_keep_the_partitions_with_matches():
    events = [{"type": t, "k": k} for t, k in [("A", 1), ("A", 2), ("B", 2), ("B", 3), ("A", 3), ("B", 1)]]
    matches = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k]").run(events)
    assert [m.positions for m in matches] == [(1, 2), (0, 5)]
    fig = cplot.timeline(matches, events, partition_by="k", max_lanes=4)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["k=1 · A", "k=1 · B", "k=2 · A", "k=2 · B"]
    assert "2 of 3 partitions of k shown" in _note(fig)


def test_arrow_matches_times_and_xlim():
    pa = pytest.importorskip("pyarrow")
    t0 = dt.datetime(2024, 1, 1)
    events = [{"type": t, "ts": t0 + dt.timedelta(seconds=i)} for i, t in enumerate("AABXBCAC")]
    q = ceql.compile(SMALL_QUERY)
    table = q.run_arrow(pa.Table.from_pylist(events))
    fig = cplot.timeline(table, events, time_field="ts")
    assert len(_lines(fig.axes[0])[0].get_segments()) == 12
    assert fig.axes[1].get_xlabel() == "ts"
    fig = cplot.timeline(q.run(events), events, xlim=(0, 5))
    assert len(_lines(fig.axes[0])[0].get_segments()) == 6  # the matches ending at 5


def test_positions_must_index_the_events():
    matches = ceql.compile(SMALL_QUERY).run(SMALL)
    with pytest.raises(ValueError, match="beyond the 4 events"):
        cplot.timeline(matches, SMALL[:4])


def test_save_timeline_writes_a_png(tmp_path):
    matches = ceql.compile(SMALL_QUERY).run(SMALL)
    path = cplot.save_timeline(matches, SMALL, str(tmp_path / "m.png"))
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path == str(tmp_path / "m.png")


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    plot = importlib.reload(cplot)  # importing ceql.plot itself needs no matplotlib
    with pytest.raises(ImportError, match=r"pip install 'ceql\[plot\]'"):
        plot.timeline([], SMALL)


def test_cli_lanes_of_a_key_read_from_either_of_two_names():
    """``PARTITION BY [w, k]``: an event's key is its ``w``, else its ``k`` (the
    engine's rule without declarations); the lanes must use that, not ``w`` alone,
    or the events keyed by ``k`` fall out of the picture."""
    from ceql._cli_plot import partition_lanes

    rows = [{"type": "A", "k": 1}, {"type": "A", "w": 2, "k": 9}, {"type": "B"}]
    lanes_rows, name = partition_lanes(rows, [["w", "k"]])
    assert name == "w | k" and [r[name] for r in lanes_rows] == ["1", "2", None]
    import pyarrow as pa

    table = pa.table({"type": ["A", "A", "B"], "w": [None, 2, None], "k": [1, 9, None]})
    lanes_table, name = partition_lanes(table, [["w", "k"]])
    assert lanes_table.column(name).to_pylist() == ["1", "2", None]
    two, name = partition_lanes(table, [["w", "k"], ["type"]])
    assert name == "w | k, type" and two.column(name).to_pylist() == ["1, A", "2, A", None]
    assert partition_lanes(table, [["k"]]) == (table, "k")
    assert partition_lanes(table, []) == (table, None)


def test_lanes_keep_apart_the_keys_the_engine_keeps_apart():
    """Without declarations the engine keys 1, 1.0, True and "1" apart (four
    partitions); Python finds the first three equal, and the lanes merged them (by
    hand: each key has an A then a B, so four matches in four partitions)."""
    keys = [1, 1.0, True, "1"]
    events = [{"type": t, "k": k} for t in "AB" for k in keys]
    matches = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k]").run(events)
    assert sorted(m.positions for m in matches) == [(0, 4), (1, 5), (2, 6), (3, 7)]
    fig = cplot.timeline(matches, events, partition_by="k")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    # Numbers by value (equal ones by kind name: float, int), then the others as text.
    assert labels == ["k=1.0 · A", "k=1.0 · B", "k=1 · A", "k=1 · B",
                      "k='1' · A", "k='1' · B", "k=True · A", "k=True · B"]
    from ceql._cli_plot import partition_lanes

    rows, name = partition_lanes([{"type": "A", "w": 1}, {"type": "A", "k": "1"}, {"type": "A", "k": "x"}], [["w", "k"]])
    assert [r[name] for r in rows] == ["1", "'1'", "x"]


def test_pandas_nan_is_a_missing_value_and_one_match_is_singular():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([{"type": t} for t in "AB"])
    frame["p"] = float("nan")
    matches = ceql.compile("SELECT * FROM S WHERE A ; B").run(frame)
    with pytest.raises(ValueError, match="partition_by='p': no event has a value"):
        cplot.timeline(matches, frame, partition_by="p")
    assert cplot.timeline(matches, frame).axes[0].get_title() == "1 match over 2 events"
