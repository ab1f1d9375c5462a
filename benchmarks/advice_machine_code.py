"""NVIDIA's disassembly of every kernel of the advice outcome table (the cases of
benchmarks/advice_outcomes.py: this project's advice kernels and PolyBench-ACC's), as each
baseline is built: `nvdisasm -c --print-line-info` of each source's cubin, as nvdisasm writes
it. CPU only (the [nvcc] extra); the outcome table's verdicts read the listings through
tuneadvise's reader at replay time (benchmarks/advice.py), so a recorded table replays without
compiling anything, and what is stored is NVIDIA's output, not tuneadvise's.

    python benchmarks/advice_machine_code.py POLYBENCH_ACC_DIR OUT.json.gz [--arch sm_90]

POLYBENCH_ACC_DIR is a checkout of github.com/cavazos-lab/PolyBench-ACC: its sources are
compiled from there, never copied here; only the listings are written (gzip'd JSON:
{arch, nvdisasm: its --version line, listings: {source file: listing}})."""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def nvdisasm() -> str:
    from tuneadvise.advisor.toolchain.disassembler import find_disassembler

    return find_disassembler().path


def listing(cubin: Path) -> str:
    """nvdisasm's own listing of the cubin, its path written as the cubin's name only."""
    out = subprocess.run([nvdisasm(), "-c", "--print-line-info", str(cubin)], check=True, capture_output=True,
                         text=True, timeout=600).stdout
    return out.replace(str(cubin), cubin.name)


def build(case: dict, suite: Path, arch: str, scratch: Path) -> str:
    sys.path.insert(0, str(HERE))
    from advice_outcomes import source_of

    source = source_of(case, suite)
    include = ["-I", str(suite / "CUDA" / "utilities"), "-I", str(source.parent)] \
        if case["suite"] != "tuneadvise" else []
    flags = include + [f"-D{d}" for d in case["defines"]] + ["-DcudaThreadSynchronize=cudaDeviceSynchronize"]
    out = scratch / "k.cubin"
    subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", *flags, str(source), "-o", str(out)], check=True,
                   capture_output=True, timeout=600)
    return listing(out)


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
            found[case["file"]] = build(case, options.suite.resolve(), options.arch, Path(scratch))
            print(case["file"], flush=True)
    version = subprocess.run([nvdisasm(), "--version"], check=True, capture_output=True, text=True).stdout
    recorded = {"arch": options.arch, "nvdisasm": version.strip().splitlines()[-1], "listings": found}
    # mtime=0: the same listings give the same bytes.
    options.out.write_bytes(gzip.compress(json.dumps(recorded, indent=0, sort_keys=True).encode(), mtime=0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
