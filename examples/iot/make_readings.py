"""Writes the IoT sample of docs/tutorials/iot-spark.md: examples/iot/readings/part-*.csv.

Four fridges report a TEMP reading (celsius) every minute from 08:00 to 09:59 UTC on
2024-06-01, and DOOR events (door = open, then closed 30 s later) when someone opens them.
After some openings the temperature rises above 8 °C for a few readings. The rows are in
time order, numbered by `offset`, and cut into four files of 30 minutes; the last file ends
with a HEARTBEAT event half an hour later, so that a streaming watermark passes every reading.

    python examples/iot/make_readings.py
"""

from __future__ import annotations

import csv
import datetime as dt
import random
from pathlib import Path

START = dt.datetime(2024, 6, 1, 8, 0, tzinfo=dt.timezone.utc)
MINUTES = 120
# fridge -> [(minute of a door opening, minute the warm readings start, how many)]
DOORS = {
    "fridge-1": [(15, None, 0), (50, 51, 3)],   # opened twice; the second one warms it up
    "fridge-2": [(30, 31, 1), (90, 91, 4)],     # one warm reading is no alert; then an excursion
    "fridge-3": [(70, 71, 2), (100, 111, 2)],   # the second excursion comes too late (> 10 min)
    "fridge-4": [],
}
WARM_WITHOUT_DOOR = {"fridge-4": (100, 2)}     # warm readings, no door opened before
MISSING_READING = ("fridge-1", 60)              # a reading without a value (NULL)
OUT = Path(__file__).resolve().parent / "readings"


def rows():
    rnd = random.Random(18)
    out = []
    for fridge in sorted(DOORS):
        warm = {}
        for door, first, count in DOORS[fridge]:
            t = START + dt.timedelta(minutes=door, seconds=20)
            out.append((t, fridge, "DOOR", None, "open"))
            out.append((t + dt.timedelta(seconds=30), fridge, "DOOR", None, "closed"))
            for i in range(count):
                warm[first + i] = round(9.0 + 0.4 * i, 1)
        if fridge in WARM_WITHOUT_DOOR:
            first, count = WARM_WITHOUT_DOOR[fridge]
            warm.update({first + i: round(9.0 + 0.4 * i, 1) for i in range(count)})
        for m in range(MINUTES):
            celsius = warm.get(m, round(rnd.uniform(3.0, 4.5), 1))
            if (fridge, m) == MISSING_READING:
                celsius = None
            out.append((START + dt.timedelta(minutes=m), fridge, "TEMP", celsius, None))
    out.sort(key=lambda r: (r[0], r[1], r[2]))
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    data = rows()
    heartbeat = (data[-1][0] + dt.timedelta(minutes=30), "fridge-1", "HEARTBEAT", None, None)
    files = [[] for _ in range(4)]
    for offset, r in enumerate(data + [heartbeat]):
        part = min(int((r[0] - START).total_seconds() // 1800), 3)
        files[part].append((offset,) + r)
    for i, part in enumerate(files):
        with open(OUT / f"part-{i}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["offset", "ts", "sensor", "type", "celsius", "door"])
            for offset, t, fridge, etype, celsius, door in part:
                w.writerow([offset, t.strftime("%Y-%m-%dT%H:%M:%SZ"), fridge, etype,
                            "" if celsius is None else celsius, door or ""])


if __name__ == "__main__":
    main()
