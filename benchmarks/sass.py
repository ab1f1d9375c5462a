"""The cost of reading machine code (toolchain/disassembler.py: two nvdisasm listings at
once, then readers/sass.py) against nvdisasm's own run time on the same cubins.

    python benchmarks/sass.py [CUBIN ...]

Without arguments: the repository's cubins (tests/fixtures/lint, the Triton caches under
tests/fixtures/python_caches) and, where nvcc is installed, the ten-kernel realistic
source compiled with -lineinfo at -maxrregcount=32 for sm_90 (spill sites on lines).

Per cubin, best of REPEATS: `nvdisasm -c --print-line-info` alone (the floor: the one
listing the figures need), `nvdisasm --print-life-ranges --print-line-info` (the
command a user would type), and tuneadvise's whole pass; then the pass's cost per
kernel and its ratio to each. Target: at most 1.5x the floor.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPEATS = int(os.environ.get("REPEATS", "5"))


def _best(function) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _cubins(arguments: list[str], scratch: Path) -> list[Path]:
    if arguments:
        return [Path(a) for a in arguments]
    found = sorted((ROOT / "tests" / "fixtures" / "lint").glob("*.cubin"))
    found += sorted((ROOT / "tests" / "fixtures" / "python_caches").glob("triton*/**/*.cubin"))
    try:
        from tuneadvise.advisor.toolchain.discovery import find_toolchain

        nvcc = find_toolchain().nvcc
        built = scratch / "tiled_kernels_sm_90_lineinfo_r32.cubin"
        subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-lineinfo", "-maxrregcount=32", "-o", str(built),
                        str(ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu")], check=True,
                       capture_output=True, timeout=600)
        found.append(built)
    except Exception as exc:  # no compiler: the stored cubins alone
        print(f"(no compiled cubin: {exc})")
    return found


def main(arguments: list[str]) -> None:
    from tuneadvise.advisor.toolchain.disassembler import find_disassembler

    disassembler = find_disassembler()
    with tempfile.TemporaryDirectory() as folder:
        cubins = _cubins(arguments, Path(folder))
        print(f"nvdisasm: {disassembler.path} ({disassembler.origin}); best of {REPEATS}")
        print(f"{'cubin':44} {'kern':>4} {'floor s':>8} {'-plr -g s':>9} {'pass s':>8} {'ms/kern':>7} "
              f"{'x floor':>7} {'x plr':>6}")
        totals = [0.0, 0.0, 0.0, 0]
        for cubin in cubins:
            data = cubin.read_bytes()
            floor = _best(lambda path=str(cubin): subprocess.run([disassembler.path, "-c", "--print-line-info", path],
                                                                 capture_output=True, check=True))
            peer = _best(lambda path=str(cubin): subprocess.run([disassembler.path, "--print-life-ranges",
                                                                 "--print-line-info", path], capture_output=True))
            kernels = len(disassembler.kernels(data))
            spent = _best(lambda data=data: disassembler.kernels(data))
            totals = [totals[0] + floor, totals[1] + peer, totals[2] + spent, totals[3] + kernels]
            print(f"{cubin.name[-44:]:44} {kernels:4d} {floor:8.3f} {peer:9.3f} {spent:8.3f} "
                  f"{1000 * spent / max(kernels, 1):7.1f} {spent / floor:7.2f} {spent / peer:6.2f}")
        floor, peer, spent, kernels = totals
        print(f"{'all':44} {kernels:4d} {floor:8.3f} {peer:9.3f} {spent:8.3f} {1000 * spent / max(kernels, 1):7.1f} "
              f"{spent / floor:7.2f} {spent / peer:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
