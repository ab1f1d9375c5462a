"""Batch throughput on one core: JSON Lines in, one result line out per input.

    python benchmarks/batch.py [--lines 100000]

Measures the library path (tuneadvise.advisor.batch.run_batch, as the CLI
uses it) on seeded, varied configurations, and compares with one query per
process (what a tool without a batch mode costs, e.g. cuxray's CLI).
"""

import argparse
import io
import json
import random
import statistics
import time

from tuneadvise.advisor.batch import run_batch

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


def best_and_median(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    lines = make_lines(args.lines)
    out = io.StringIO()
    run_batch(lines[:10], out)  # load the catalog outside the timing
    produced = []

    def ours():
        out = io.StringIO()
        run_batch(lines, out)
        produced.append(out.getvalue().count("\n"))

    def floor():  # the stack's floor: decode each line and encode an object back, nothing else
        out = io.StringIO()
        for line in lines:
            out.write(json.dumps(json.loads(line), separators=(",", ":")) + "\n")

    best, median = best_and_median(ours, args.repeats)
    floor_best, _ = best_and_median(floor, args.repeats)
    assert produced[-1] == len(lines)
    print(f"{len(lines)} lines, best of {args.repeats}: {len(lines) / best:,.0f} lines/s "
          f"(median {len(lines) / median:,.0f}) on one core (target >= 50,000)")
    print(f"floor, json.loads + json.dumps of each line: {len(lines) / floor_best:,.0f} lines/s; "
          f"tuneadvise takes {best / floor_best:.2f}x the floor")


if __name__ == "__main__":
    main()
