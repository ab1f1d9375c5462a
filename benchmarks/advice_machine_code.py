"""The machine-code figures of every kernel of the advice outcome table (the cases of
benchmarks/advice_outcomes.py: this project's advice kernels and PolyBench-ACC's), as each
baseline is built: instruction counts by class and the busiest innermost loop, read with
NVIDIA's disassembler through tuneadvise's own reader. CPU only (the [nvcc] extra); the
outcome table's verdicts read them (benchmarks/advice.py), so a recorded table replays
without compiling anything.

    python benchmarks/advice_machine_code.py POLYBENCH_ACC_DIR OUT.json [--arch sm_90]

POLYBENCH_ACC_DIR is a checkout of github.com/cavazos-lab/PolyBench-ACC: its sources are
compiled from there, never copied here; only the figures are written."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def figures(cubin: bytes) -> dict:
    """{kernel name as the cubin writes it: its figures}."""
    from tuneadvise.advisor.toolchain.disassembler import find_disassembler

    return {name: {"instructions": sass.instructions, "hot_loop": sass.hot_loop}
            for name, sass in find_disassembler().kernels(cubin).items()}


def build(case: dict, suite: Path, arch: str, scratch: Path) -> dict:
    sys.path.insert(0, str(HERE))
    from advice_outcomes import source_of

    source = source_of(case, suite)
    include = ["-I", str(suite / "CUDA" / "utilities"), "-I", str(source.parent)] \
        if case["suite"] != "tuneadvise" else []
    flags = include + [f"-D{d}" for d in case["defines"]] + ["-DcudaThreadSynchronize=cudaDeviceSynchronize"]
    out = scratch / "k.cubin"
    subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", *flags, str(source), "-o", str(out)], check=True,
                   capture_output=True, timeout=600)
    return figures(out.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arch", default="sm_90")
    options = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from advice_outcomes import own_cases, polybench_cases

    found = {}
    with tempfile.TemporaryDirectory() as scratch:
        for case in own_cases() + polybench_cases():
            if case["file"] in found:
                continue  # one build per source file holds all its kernels
            kernels = build(case, options.suite.resolve(), options.arch, Path(scratch))
            found[case["file"]] = kernels
            print(case["function"], len(kernels), "kernels", flush=True)
    options.out.write_text(json.dumps({"arch": options.arch, "kernels": found}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
