"""`tuneadvise frontier` on a ten-kernel file with six points per kernel (the uncapped build
and five register caps), end to end through the CLI, against the floors of doing the same
compiles by hand.

    python benchmarks/frontier.py [--runs 3] [--arch sm_90] [--block-size 256]

The file is a tile-size sweep of a register-tiled SGEMM (tests/fixtures/sources/
tiled_kernels.cu's `sgemm_tile`), ten instantiations of 95 to 128 registers on sm_90, so that at
256 threads on sm_90 every kernel has caps 80, 64, 48, 40 and 32. Printed: the median wall
time of `frontier` (fresh process each run), the points it reported, and two floors run
serially: one plain ptxas invocation per point (the brief's floor: `ptxas --maxrregcount N
-e KERNEL` on the file's PTX, after one `nvcc -ptx`), and one plain `nvcc -cubin
-maxrregcount=N -Xptxas -v` per distinct cap (the least compiling that gives exact points,
since cicc's PTX depends on the cap). Then the rerun, with the reports from the disk cache
(each run gets a fresh cache folder). Target: under 10 s on a 2-core machine. The load
average is printed before and after: the figures are only as quiet as the machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(8, 8), (8, 9), (9, 8), (7, 9), (9, 7), (6, 10), (9, 9), (8, 10), (10, 7), (7, 10)]


def make_source(path: Path) -> None:
    text = (ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu").read_text()
    template = text[text.index("template <int TM, int TN>"):text.index("template __global__ void sgemm_tile<8, 8>")]
    path.write_text("#include <cuda_runtime.h>\n" + template + "".join(
        f"template __global__ void sgemm_tile<{m}, {n}>(const float*, const float*, float*, int, int, int);\n"
        for m, n in SHAPES))


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=True, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--block-size", default="256")
    args = parser.parse_args()
    from tuneadvise.advisor.toolchain.compile import default_jobs
    from tuneadvise.advisor.toolchain.discovery import find_toolchain

    chain = find_toolchain()
    print(f"toolchain: {chain.version} ({chain.origin}); CPUs usable: {default_jobs()}; "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "ten_kernels.cu"
        make_source(source)
        command = [sys.executable, "-m", "tuneadvise.cli", "frontier", str(source), "--arch", args.arch,
                   "--block-size", args.block_size, "--format", "json"]
        environment = dict(os.environ, TUNEADVISE_CACHE_DIR=str(Path(scratch) / "cache"))

        def timed(extra):
            samples, doc = [], None
            for _ in range(args.runs):
                start = time.perf_counter()
                doc = json.loads(run(command + extra, env=environment).stdout)
                samples.append(time.perf_counter() - start)
            return statistics.median(samples), samples, doc

        frontier, samples, doc = timed(["--no-cache"])
        points = [(k["name"], p["max_registers"]) for k in doc["kernels"] for p in k["points"]]
        caps = sorted({cap for _, cap in points if cap is not None}, reverse=True)
        print(f"frontier, compiling everything (--no-cache): {len(doc['kernels'])} kernels, {len(points)} points, "
              f"caps {caps}: median {frontier:.2f} s of {args.runs} runs ({', '.join(f'{s:.2f}' for s in samples)})")
        run(command, env=environment)  # fills the cache
        rerun, samples, again = timed([])
        assert again == doc, "the cached rerun must report exactly what the compiles did"
        print(f"frontier rerun, unchanged source (reports from the cache): median {rerun:.2f} s "
              f"({', '.join(f'{s:.2f}' for s in samples)}), the same document")

        # Floor 1: one plain ptxas per point, serially, on the file's PTX (plus the one nvcc -ptx).
        ptx = Path(scratch) / "ten_kernels.ptx"
        start = time.perf_counter()
        run([chain.nvcc, "-ptx", f"-arch={args.arch}", str(source), "-o", str(ptx)])
        for name, cap in points:
            cap_flags = ["--maxrregcount", str(cap)] if cap is not None else []
            run([chain.ptxas, f"-arch={args.arch}", "-v", *cap_flags, "-e", name, str(ptx), "-o", os.devnull])
        per_point = time.perf_counter() - start

        # Floor 2: one plain nvcc per distinct cap, serially (what gives each point exactly).
        start = time.perf_counter()
        for cap in [None, *caps]:
            cap_flags = [f"-maxrregcount={cap}"] if cap is not None else []
            run([chain.nvcc, "-cubin", f"-arch={args.arch}", *cap_flags, "-Xptxas", "-v", str(source),
                 "-o", str(Path(scratch) / "k.cubin")])
        per_cap = time.perf_counter() - start
    print(f"floor, one ptxas per point ({len(points)} serially): {per_point:.2f} s; "
          f"frontier / floor = {frontier / per_point:.2f}")
    print(f"floor, one nvcc per cap ({len(caps) + 1} serially): {per_cap:.2f} s; "
          f"frontier / floor = {frontier / per_cap:.2f}")
    verdict = "under" if frontier < 10 else "OVER"
    print(f"target: under 10 s -> {frontier:.2f} s, {verdict}; "
          f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
