"""Lint throughput and memory: a ptxas -v log of N kernels x 3 architectures,
linted end to end by the CLI (`python -m tuneadvise.cli lint build.log
--format F -o out`) in every output format, each run in its own process so its
peak resident memory is its own.

    python benchmarks/lint.py [--kernels 10000] [--runs 3] [--formats json,sarif,...]

Printed per format: the median wall time, its ratio to the JSON run and to the
floor, and the peak RSS. The floor is `json.dumps` of the same document (the
JSON output read back and encoded again): no lint run can write that document
faster. Beside it, Python reading the log line by line and the log parser
alone. Targets: 10,000 kernels x 3 architectures under 2 s as JSON; on 30,000
x 3 every format within 1.5x the JSON time and under 300 MB.

The log is seeded and shaped like real ones (tests/fixtures/lint): mangled
names, register counts from 16 to 255, a quarter of kernels with static shared
memory, some spills, barriers. Set PYTHONPATH to time another checkout.
"""

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peak_memory import measured  # this folder: the script's own

ARCHS = ("sm_80", "sm_90", "sm_120")
FORMATS = ("json", "sarif", "junit", "csv", "markdown", "github", "table")


def make_log(path: Path, kernels: int, seed: int = 11) -> int:
    rng = random.Random(seed)
    lines = ["ptxas info    : 0 bytes gmem\n"]
    for arch in ARCHS:
        for i in range(kernels):
            name = f"_Z{len(f'kernel_{i}')}kernel_{i}PKfPfi"
            regs = rng.choice([rng.randint(16, 64), rng.randint(16, 255)])
            smem = rng.choice([0, 0, 0, rng.choice([1024, 4096, 8448, 16384, 40960])])
            spill = rng.choice([0] * 9 + [rng.randint(4, 512)])
            lines += [f"ptxas info    : Compiling entry function '{name}' for '{arch}'\n",
                      f"ptxas info    : Function properties for {name}\n",
                      f"    {spill} bytes stack frame, {spill} bytes spill stores, {spill} bytes spill loads\n",
                      f"ptxas info    : Used {regs} registers, used {rng.randint(0, 1)} barriers"
                      + (f", {smem} bytes smem" if smem else "") + ", 372 bytes cmem[0]\n",
                      "ptxas info    : Compile time = 1.234 ms\n"]
    path.write_text("".join(lines))
    return len(lines)


def timed(fn, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def run_measured(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one child process, under peak_memory's launcher (the log
    this process built is not the child's)."""
    seconds, rss, _ = measured(argv)
    return seconds, rss


_FLOOR = """\
import json, sys, time
with open(sys.argv[1], encoding="utf-8") as handle:
    doc = json.load(handle)
start = time.perf_counter()
json.dumps(doc, separators=(",", ":"))
print(time.perf_counter() - start)
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()
    formats = [f for f in args.formats.split(",") if f]
    from tuneadvise.advisor.readers.compiler_output import parse_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "build.log"
        count = make_log(log, args.kernels)

        def read_lines():
            with open(log) as handle:
                for _ in handle:
                    pass

        def parse_only():
            with open(log) as handle:
                for _ in parse_ptxas(handle):
                    pass

        floor_read = timed(read_lines, args.runs)
        parse = timed(parse_only, args.runs)
        results = {}
        for fmt in formats:
            out = Path(tmp) / f"out.{fmt}"
            argv = [sys.executable, "-m", "tuneadvise.cli", "lint", str(log), "--format", fmt, "-o", str(out)]
            if fmt == "table":  # the human report goes to stdout
                argv = argv[:-2]
            samples = [run_measured(argv) for _ in range(args.runs)]
            results[fmt] = (statistics.median(s[0] for s in samples), max(s[1] for s in samples))
        floor = None
        if "json" in formats:
            floor = statistics.median(
                float(subprocess.run([sys.executable, "-c", _FLOOR, str(Path(tmp) / "out.json")],
                                     capture_output=True, text=True, check=True).stdout)
                for _ in range(args.runs))
    records = args.kernels * len(ARCHS)
    print(f"log: {count} lines, {records} kernel records ({args.kernels} kernels x {len(ARCHS)} archs)")
    print(f"read lines              {floor_read * 1000:8.1f} ms")
    print(f"parse ptxas log         {parse * 1000:8.1f} ms   {parse / floor_read:6.1f}x reading the lines")
    if floor is not None:
        print(f"json.dumps of the document (floor) {floor * 1000:8.1f} ms")
    base = results.get("json", (None,))[0]
    print(f"{'format':<10} {'time ms':>9} {'/ json':>7} {'/ floor':>8} {'peak MB':>8}")
    for fmt, (elapsed, peak) in results.items():
        ratio = f"{elapsed / base:7.2f}" if base else "      -"
        over_floor = f"{elapsed / floor:8.1f}" if floor else "       -"
        print(f"{fmt:<10} {elapsed * 1000:9.0f} {ratio} {over_floor} {peak:8.0f}")
    if base:
        print(f"json: {records / base:,.0f} records/s (target: 30,000 records under 2000 ms)")


if __name__ == "__main__":
    main()
