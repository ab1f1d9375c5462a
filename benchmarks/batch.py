"""Batch throughput on one core: JSON Lines in, one result line out per input,
each with its findings (every rule runs on every line, as for a single query).

    python benchmarks/batch.py [--lines 200000] [--repeats 3] [--cli-lines 100000]

Each repeat runs in a fresh interpreter on its own seeded lines, so no cache
starts warm: the library path (tuneadvise.advisor.batch.run_batch, as the CLI
uses it) is timed cold, beside the floor of the stack measured on the same
lines in the same process: json.loads of each input line plus json.dumps of the
very document printed for it, nothing else (no tool can print that document for
less). It prints lines/s, the floor and the ratio (target: at most 3x). Then
the whole CLI (`tuneadvise occupancy --batch FILE`, start-up included) is
timed on a file of --cli-lines lines (0 skips it). A tool without a batch mode
pays one process per query instead (cuxray's CLI: about 5 queries per second).

The lines are varied on purpose: registers drawn from 16-255 and one block in
six of random size, so most lines are distinct configurations.
"""

import argparse
import io
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARCHS = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "volta", "h100-sxm"]


def make_lines(count, seed=7):
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        lines.append(json.dumps({"arch": rng.choice(ARCHS), "registers": rng.randint(16, 255),
                                 "block_size": rng.choice([64, 128, 256, 512, 1024, rng.randint(1, 1024)]),
                                 "shared_mem": rng.choice([0, 4096, 12288, 40000]),
                                 "dynamic_shared_mem": rng.choice([0, 1024, 16384]),
                                 "carveout": rng.choice(["default", 50, 100])}) + "\n")
    return lines


def child(lines_count: int, seed: int) -> None:
    """One cold measurement: prints '<tuneadvise seconds> <floor seconds>'."""
    from tuneadvise.advisor.batch import run_batch
    from tuneadvise.specs.catalog import shipped_catalog

    lines = make_lines(lines_count, seed)
    for name in ARCHS:  # load the catalog outside the timing; no kernel is computed
        shipped_catalog().resolve(name)
    printed = io.StringIO()
    start = time.perf_counter()
    run_batch(lines, printed)
    ours = time.perf_counter() - start
    documents = [json.loads(line) for line in printed.getvalue().splitlines()]  # what was printed, untimed
    assert len(documents) == len(lines)
    start = time.perf_counter()
    out = io.StringIO()
    for line, document in zip(lines, documents):
        json.loads(line)
        out.write(json.dumps(document, separators=(",", ":")) + "\n")
    floor = time.perf_counter() - start
    print(ours, floor)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli-lines", type=int, default=100_000)
    parser.add_argument("--child", nargs=2, type=int, metavar=("LINES", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    runs = []
    for repeat in range(args.repeats):
        out = subprocess.run([sys.executable, __file__, "--child", str(args.lines), str(7 + repeat)],
                             check=True, capture_output=True, text=True).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    ours = sorted(r[0] for r in runs)
    floors = sorted(r[1] for r in runs)
    ratios = sorted(r[0] / r[1] for r in runs)
    print(f"{args.lines:,} lines with findings, {args.repeats} cold runs: median "
          f"{args.lines / statistics.median(ours):,.0f} lines/s, best {args.lines / ours[0]:,.0f}, "
          f"worst {args.lines / ours[-1]:,.0f} on one core")
    print(f"floor, json.loads of each line + json.dumps of the document printed for it: "
          f"{args.lines / statistics.median(floors):,.0f} lines/s "
          f"({statistics.median(floors) / args.lines * 1e6:.2f} us/line)")
    print(f"ratio: tuneadvise takes {statistics.median(ratios):.2f}x the floor (median of the runs; target <= 3x)")
    if not args.cli_lines:
        return
    tuneadvise = shutil.which("tuneadvise") or str(Path(sys.executable).with_name("tuneadvise"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines.jsonl"
        path.write_text("".join(make_lines(args.cli_lines, 1000)))
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([tuneadvise, "occupancy", "--batch", str(path)],
                           stdout=subprocess.DEVNULL, check=False)
            times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"CLI, {args.cli_lines} lines from a file, start-up included (median of 3): {median:.2f} s, "
          f"{args.cli_lines / median:,.0f} lines/s")


if __name__ == "__main__":
    main()
