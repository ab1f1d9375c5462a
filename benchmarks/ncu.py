"""Reading an Nsight Compute export: the time to read a 100 MB `ncu --csv`
export into launches (advisor/readers/ncu.py, streamed), against a plain
`csv.reader` pass over the same file (the floor: every row split, nothing
kept), and the time to analyse every launch (the engine beside the report,
advisor/measured.py) on top. Target: reading within 2x the plain parse.

    python benchmarks/ncu.py [--megabytes 100] [--runs 3]

The export is the recorded ones (tests/fixtures/ncu) repeated, each launch
renumbered so that every (process, ID) is distinct, as a long profile is.
Set PYTHONPATH to time another checkout.
"""

import argparse
import csv
import gzip
import statistics
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ncu"
PROGRAMS = ("ncu_tails", "ncu_smem", "ncu_imbalance", "ncu_templates", "ncu_cupy", "ncu_torch", "ncu_torch_nn",
            "ncu_triton")


def make_export(path: Path, megabytes: int) -> int:
    """Write an export of about `megabytes` MB; return the number of launches in it."""
    rows, header = [], None
    for name in PROGRAMS:
        with gzip.open(FIXTURES / f"{name}.csv.gz", "rt", encoding="utf-8", newline="") as handle:
            for row in csv.reader(line for line in handle if line.startswith('"')):
                if row[0] == "ID":
                    header = row
                elif header and len(row) >= 15:  # metric rows end after Metric Value, rule rows go on
                    rows.append(row)
    launches = 0
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        out.write("==PROF== Connected to process 1 (app)\n")
        writer.writerow(header)
        copy, previous = 0, None
        while out.tell() < megabytes << 20:
            for row in rows:
                key = (row[1], row[0])
                if key != previous:
                    previous, launches = key, launches + 1
                writer.writerow([str(copy * 1000 + int(row[0])), row[1], *row[2:]])
            copy += 1
    return launches


def plain_parse(path: Path) -> int:
    with open(path, encoding="utf-8", newline="") as handle:
        return sum(1 for _ in csv.reader(handle))


def timed(function, runs: int):
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from tuneadvise.advisor.measured import measure
    from tuneadvise.advisor.readers.ncu import read_ncu

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.csv"
        launches = make_export(path, args.megabytes)
        size = path.stat().st_size / (1 << 20)
        floor, rows = timed(lambda: plain_parse(path), args.runs)
        reading, read = timed(lambda: read_ncu(path), args.runs)
        assert len(read.launches) == launches and not read.problems, (len(read.launches), launches, read.problems[:3])
        start = time.perf_counter()
        for launch in read.launches:
            measure(launch)
        analysing = time.perf_counter() - start
    print(f"export: {size:.0f} MB, {rows:,} rows, {launches:,} launches (median of {args.runs} runs)")
    print(f"plain csv.reader pass (floor) {floor:7.2f} s")
    print(f"read_ncu (launches)           {reading:7.2f} s  {reading / floor:4.2f}x the floor  (target <= 2x)")
    print(f"measure every launch          {analysing:7.2f} s  ({analysing / launches * 1e6:.0f} us a launch)")
    sys.exit(0)


if __name__ == "__main__":
    main()
