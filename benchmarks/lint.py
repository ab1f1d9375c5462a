"""Lint throughput: a ptxas -v log of 10,000 kernels x 3 architectures, linted
end to end by the CLI (`tuneadvise lint build.log --format json`), measured in
one run beside the floor of the stack: Python reading the same log line by
line, and the log parser alone.

    python benchmarks/lint.py [--kernels 10000] [--runs 3]

The log is seeded and shaped like real ones (tests/fixtures/lint): mangled
names, register counts from 16 to 255, a quarter of kernels with static shared
memory, some spills, barriers. Target: under 2 s on a 2-core machine.
"""

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARCHS = ("sm_80", "sm_90", "sm_120")


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from tuneadvise.advisor.readers.compiler_output import parse_ptxas

    tuneadvise = shutil.which("tuneadvise") or str(Path(sys.executable).with_name("tuneadvise"))
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

        def cli():
            subprocess.run([tuneadvise, "lint", str(log), "--format", "json", "-o", str(Path(tmp) / "out.json")],
                           check=False, stdout=subprocess.DEVNULL)

        floor = timed(read_lines, args.runs)
        parse = timed(parse_only, args.runs)
        full = timed(cli, args.runs)
    records = args.kernels * len(ARCHS)
    print(f"log: {count} lines, {records} kernel records ({args.kernels} kernels x {len(ARCHS)} archs)")
    print(f"read lines (floor)      {floor * 1000:8.1f} ms")
    print(f"parse ptxas log         {parse * 1000:8.1f} ms   {parse / floor:6.1f}x the floor")
    print(f"tuneadvise lint (CLI)   {full * 1000:8.1f} ms   {full / floor:6.1f}x the floor, "
          f"{records / full:,.0f} records/s  (target < 2000 ms)")


if __name__ == "__main__":
    main()
