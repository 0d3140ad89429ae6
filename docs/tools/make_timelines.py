"""Redraws the timeline pictures of the documentation (docs/images/timeline-*.png).

    python docs/tools/make_timelines.py

The main job of the README (examples/stock/main.ceql over examples/stock/stock_sample.csv), with
and without captures, and the small hand-made example of docs/tutorials/timeline.md.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.csv

import ceql
import ceql.plot

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"


def main() -> None:
    trades = pyarrow.csv.read_csv(ROOT / "examples/stock/stock_sample.csv")
    trades = trades.rename_columns(["type" if c == "event_type" else c for c in trades.column_names])
    query = ceql.compile((ROOT / "examples/stock/main.ceql").read_text())
    matches = query.run(trades, time_field="stock_time", time_unit="ms")
    ceql.plot.save_timeline(matches, trades, str(IMAGES / "timeline-stock.png"), partition_by="volume",
                            color_by="type", title=f"examples/stock/main.ceql: {len(matches)} matches over "
                            f"{trades.num_rows:,} trades, by volume")
    ceql.plot.save_timeline(matches, trades, str(IMAGES / "timeline-stock-zoom.png"), partition_by="volume",
                            xlim=(11200, 11450), title="examples/stock/main.ceql: the matches ending at "
                            "positions 11,200 to 11,450")
    captured = query.run(trades, time_field="stock_time", time_unit="ms", captures=True)
    ceql.plot.save_timeline(captured, trades, str(IMAGES / "timeline-variables.png"), partition_by="volume",
                            color_by="variable", xlim=(10900, 11500), title="examples/stock/main.ceql with "
                            "captures=True: each matched trade coloured by its variable")

    small = [{"type": t} for t in "AABXBCAC"]
    matches = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C").run(small)
    ceql.plot.save_timeline(matches, small, str(IMAGES / "timeline-small.png"), figsize=(9, 4.2),
                            title="SELECT * FROM S WHERE A ; B+ ; C over A A B X B C A C")


if __name__ == "__main__":
    main()
