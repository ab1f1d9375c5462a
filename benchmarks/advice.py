"""Does following the register-cap advice pay? For each kernel of a set of real sources
(the test suite's kernels and benchmarks/advice_kernels.cu), lint the source at the
kernel's own launch, apply the register change TA301 names (its __launch_bounds__
written or changed in a copy of the source: the form that applies to that kernel
alone and that the compiler obeys with or without existing bounds), and time the
kernel as built and as advised under the same launch and data.

Timing: CUDA events around one launch, 10 warm-up launches, the median of 40; the two
builds alternate (as built, advised, as built, advised) and each build's time is the
mean of its two medians. A change within the noise (the larger of 2% and twice the
two runs' disagreement) counts as equal.

Needs a GPU, CuPy and nvcc; run from the repository root:

    python benchmarks/advice.py [--arch sm_90] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TILED = ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu"
BOUNDED = ROOT / "tests" / "fixtures" / "sources" / "launch_bounds.cu"
PRESSURE = ROOT / "tests" / "gpu" / "occupancy_kernels.cu"
OWN = HERE / "advice_kernels.cu"
WARMUP, REPEATS = 10, 40


def _f(n):
    import cupy as cp

    return cp.random.random(n, dtype=cp.float32)


def _d(n):
    import cupy as cp

    return cp.random.random(n, dtype=cp.float64)


def _i(v):
    import numpy as np

    return np.int32(v)


def _k(v):
    import numpy as np

    return np.float32(v)


# (source, kernel base name, block dims, grid dims, arguments): each launch as its source's code runs it.
def cases():
    import cupy as cp

    n_mm, k_mm = 4096, 1024
    sx = 520
    return [
        (TILED, "sgemm_tile<8, 8>", (16, 16), (n_mm // 128, n_mm // 128),
         lambda: (_f(n_mm * k_mm), _f(k_mm * n_mm), _f(n_mm * n_mm), _i(n_mm), _i(n_mm), _i(k_mm))),
        (TILED, "sgemm_tile<4, 8>", (16, 16), (n_mm // 128, n_mm // 64),
         lambda: (_f(n_mm * k_mm), _f(k_mm * n_mm), _f(n_mm * n_mm), _i(n_mm), _i(n_mm), _i(k_mm))),
        (TILED, "dgemm_4x4", (16, 16), (32, 32), lambda: (_d(2048 * 512), _d(512 * 2048), _d(2048 * 2048),
                                                          _i(2048), _i(512))),
        (TILED, "fft_radix8", (256,), (8192,), lambda: (_f(2 * 8192 * 256 * 8), _f(2 * 1024), _i(256))),
        (TILED, "nbody_forces", (256,), (256,), lambda: (_f(4 * 65536), _f(3 * 65536), _i(65536), _k(0.01))),
        (TILED, "stencil_3d", (32, 8), (16, 64), lambda: (_f(sx * sx * 129), _f(sx * sx * 129), _i(sx), _i(sx),
                                                          _i(128))),
        (TILED, "softmax_rows", (32,), (65536,), lambda: (_f(65536 * 512), _f(65536 * 512), _i(512))),
        (TILED, "layer_norm", (128,), (32768,), lambda: (_f(32768 * 1024), _f(1024), _f(1024), _f(32768 * 1024),
                                                        _i(1024), _k(1e-5))),
        (TILED, "histogram_256", (256,), (1024,),
         lambda: (cp.random.randint(0, 256, 1 << 26, dtype=cp.uint8), cp.zeros(256, cp.uint32), _i(1 << 26))),
        (TILED, "batched_dot32", (256,), (4096,), lambda: (_f(4096 * 32), _f(4096 * 32), _f(4096 * 4096), _i(4096))),
        (TILED, "complex_mac16", (256,), (4,), lambda: (_f(2 * 4096 * 1024), _f(2 * 4096 * 16), _f(2 * 16 * 1024),
                                                        _i(4096))),
        (PRESSURE, "pressure", (256,), (1 << 14,), lambda: (_f(1 << 22), _f(1 << 22), _i(1 << 22))),
        (BOUNDED, "heavy_fma", (256,), (1 << 13,), lambda: (_f(24 << 21), _f(1 << 21), _i(1 << 21))),
        (BOUNDED, "bounded_dgemv", (128,), (256,), lambda: (_d(32768 * 1020), _d(1020), _d(32768), _i(1020))),
        (OWN, "softmax_1024_wide", (1024,), (8192,), lambda: (_f(8192 * 24576), _f(8192 * 24576), _i(24576))),
        (OWN, "smem_matmul_64", (16, 16), (64, 64), lambda: (_f(4096 * 4096), _f(4096 * 4096), _f(4096 * 4096),
                                                             _i(4096))),
        (OWN, "block_reduce_8acc", (1024,), (1056,), lambda: (_f(1 << 26), cp.zeros(1, cp.float32), _i(1 << 24))),
        (OWN, "elementwise_heavy", (256,), (1 << 14,), lambda: (_f(1 << 24), _f(1 << 24), _f(1 << 24),
                                                               _i(1 << 22))),
    ]


def lint(source: Path, arch: str, base: str, block) -> dict | None:
    """tuneadvise's lint of `source` at the kernel's launch: that kernel's JSON entry."""
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "tuneadvise.toml"
        config.write_text(f'[[kernels]]\nname = "{glob(base)}"\nblock_size = "{"x".join(map(str, block))}"\n')
        proc = subprocess.run([sys.executable, "-m", "tuneadvise.cli", "lint", str(source), "--arch", arch,
                               "--config", str(config), "--format", "json", "--no-cache"],
                              capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"lint {source.name}: {proc.stderr.strip()}")
    for kernel in json.loads(proc.stdout)["kernels"]:
        if kernel["launch"]["configured_by"] == glob(base):
            return kernel
    return None


def glob(base: str) -> str:
    """The [[kernels]] glob of one kernel: a template instance by its signature's start."""
    return f"{base}*" if "<" in base else base


def register_change(kernel: dict) -> dict | None:
    return next((f["details"]["register_change"] for f in kernel["findings"]
                 if f["code"] == "TA301" and "register_change" in f["details"]), None)


def advised_source(source: Path, line: int, change: dict) -> str:
    """The source with the kernel defined at `line` changed as the advice says (lint's own edit)."""
    from tuneadvise.advisor.toolchain.cap_check import edited_source

    edited = edited_source(source.read_text(), line, change)
    if edited is None:
        raise RuntimeError(f"{source.name}:{line}: no __global__ or attribute to change there")
    return edited


def cubin(source: Path, arch: str, out: Path) -> Path:
    subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", str(source), "-o", str(out)], check=True,
                   capture_output=True, timeout=600)
    return out


def median_ms(function, grid, block, args) -> float:
    import cupy as cp

    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(WARMUP):
        function(grid, block, args)
    times = []
    for _ in range(REPEATS):
        start.record()
        function(grid, block, args)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def measure(case, arch: str, scratch: Path) -> dict:
    import cupy as cp

    source, base, block, grid, make_args = case
    before = lint(source, arch, base, block)
    row = {"kernel": base, "block": "x".join(map(str, block))}
    if before is None:
        return {**row, "outcome": "not linted"}
    change = register_change(before)
    row.update(registers=before["registers"], blocks_before=before["occupancy"]["active_blocks_per_sm"])
    if change is None:
        return {**row, "outcome": "no register advice"}
    line = before["location"]["line"]
    stem = re.sub(r"\W", "_", base)
    copy = scratch / f"{source.stem}_{stem}.cu"
    copy.write_text(advised_source(source, line, change))
    after = lint(copy, arch, base, block)
    name = before["name"]
    modules = [cp.RawModule(path=str(cubin(path, arch, scratch / f"{copy.stem}_{tag}.cubin")))
               for tag, path in (("before", source), ("after", copy))]
    functions = [m.get_function(name) for m in modules]
    args = make_args()
    runs = [[], []]
    for _ in range(2):
        for which in (0, 1):
            runs[which].append(median_ms(functions[which], grid, block, args))
    t_before, t_after = statistics.mean(runs[0]), statistics.mean(runs[1])
    noise = max(0.02, 2 * max(abs(r[0] - r[1]) / statistics.mean(r) for r in runs))
    ratio = t_after / t_before
    outcome = "faster" if ratio < 1 - noise else "slower" if ratio > 1 + noise else "equal"
    return {**row, "change": change, "registers_after": after["registers"] if after else None,
            "spill_stores_after": after.get("spill_stores") if after else None,
            "blocks_after": after["occupancy"]["active_blocks_per_sm"] if after else None,
            "ms_before": runs[0], "ms_after": runs[1], "ratio": ratio, "noise": noise, "outcome": outcome}


def table(rows: list[dict]) -> str:
    lines = [f"{'kernel':<18} {'block':>6} {'regs':>7} {'blocks':>6} {'spill':>5} {'change':<24} {'ms before':>9} "
             f"{'ms after':>9} {'after/before':>12}  outcome"]
    for r in rows:
        if "ratio" not in r:
            lines.append(f"{r['kernel']:<18} {r['block']:>6} {r.get('registers', '-')!s:>7} "
                         f"{r.get('blocks_before', '-')!s:>6} {'':>5} "
                         f"{'-':<24} {'':>9} {'':>9} {'':>12}  {r['outcome']}")
            continue
        change = r["change"]
        what = (f"__maxnreg__({change['maxnreg']})" if change["maxnreg"] is not None
                else "__launch_bounds__({}, {})".format(*change["launch_bounds"]))
        regs = f"{r['registers']}->{r['registers_after']}"
        blocks = f"{r['blocks_before']}->{r['blocks_after']}"
        lines.append(f"{r['kernel']:<18} {r['block']:>6} {regs:>7} {blocks:>6} {r['spill_stores_after'] or 0:>5} "
                     f"{what:<24} "
                     f"{statistics.mean(r['ms_before']):>9.3f} {statistics.mean(r['ms_after']):>9.3f} "
                     f"{r['ratio']:>12.3f}  {r['outcome']} (noise {r['noise']:.1%})")
    measured = [r for r in rows if "ratio" in r]
    for outcome in ("faster", "equal", "slower"):
        group = [r["ratio"] for r in measured if r["outcome"] == outcome]
        span = f", after/before {min(group):.3f} .. {max(group):.3f}" if group else ""
        lines.append(f"{outcome}: {len(group)} of {len(measured)}{span}")
    if measured:
        lines.append(f"geometric mean after/before: {statistics.geometric_mean([r['ratio'] for r in measured]):.3f}")
    return "\n".join(lines)


def one_case(index: int, arch: str) -> None:
    """Measure case `index` and print its row as JSON (run in a process of its own, so that a
    kernel fault cannot poison the CUDA context of the others)."""
    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(measure(cases()[index], arch, Path(scratch))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", help="sm_XX (default: the GPU's)")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    import cupy as cp

    major, minor = cp.cuda.Device().compute_capability[:-1], cp.cuda.Device().compute_capability[-1]
    arch = options.arch or f"sm_{major}{minor}"
    if options.case is not None:
        one_case(options.case, arch)
        return 0
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()} ({arch})", flush=True)
    rows = []
    for index, case in enumerate(cases()):
        proc = subprocess.run([sys.executable, __file__, "--arch", arch, "--case", str(index)],
                              capture_output=True, text=True, timeout=600)
        try:
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        except (IndexError, ValueError):  # one kernel's failure is one row, the rest still run
            error = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append({"kernel": case[1], "block": "x".join(map(str, case[2])), "outcome": f"failed: {error}"})
        print(rows[-1]["kernel"], rows[-1]["outcome"], flush=True)
    print(table(rows))
    if options.json:
        Path(options.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
