"""What happens when a register cap or a block size is changed: the outcome table of the
advice verdicts. For each kernel (this project's own advice kernels and PolyBench-ACC's
CUDA kernels), time the build as it is and a grid of variants: every register cap at
which theoretical occupancy changes at the kernel's block size (the engine's
`whatif.register_caps`), applied as -maxrregcount (or by changing `__launch_bounds__`
where the kernel has bounds), and block sizes 32..1024 (2-D blocks as x-major shapes).

Three steps, so that the GPU machine only times:

    python benchmarks/advice_outcomes.py build POLYBENCH_ACC_DIR BUILD_DIR [--arch sm_90]
        (CPU: nvcc and tuneadvise) compiles every build with `-Xptxas -v`, keeps each
        build's ptxas figures and writes BUILD_DIR/plan.json beside the cubins
    python benchmarks/advice_outcomes.py time BUILD_DIR OUT.json
        (GPU: CuPy only) times each variant: CUDA events around one launch, 10 warm-up
        launches, the median of 30, inputs rotated through sets that outgrow the L2;
        each baseline timed at the start and at the end (its spread is the noise)
    python benchmarks/advice_outcomes.py launch BUILD_DIR [--suite own|polybench]
        (GPU) launches each baseline once, for `ncu` to profile
    python benchmarks/advice_outcomes.py summary OUT.json
        prints each variant's after/before and whether it is faster, slower or equal
        beyond the noise (the larger of 2% and twice the baseline's spread)

POLYBENCH_ACC_DIR is a checkout of github.com/cavazos-lab/PolyBench-ACC: its sources
are compiled from there, never copied here. Only the kernels are used: the suite's
own host programs always run their CPU reference (RUN_ON_CPU is defined in each .cu)
and time a single launch with the host clock, so no suite timing is recorded.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WARMUP, REPEATS = 10, 30
ROTATE_BYTES = 192 << 20  # input sets together at least this large: several times any L2 so far
BLOCKS_1D = (32, 64, 128, 256, 512, 1024)
BLOCKS_2D = ((32, 1), (32, 2), (32, 4), (32, 8), (16, 16), (32, 16), (32, 32), (64, 4), (128, 2), (256, 1))

# Arguments, as data: ["f32"|"f64"|"u8"|"zero_f32"|"zero_u32", elements] for a buffer
# (random values), ["i32"|"f32s", value] for a scalar.
_OWN = {"tiled": "tests/fixtures/sources/tiled_kernels.cu", "bounded": "tests/fixtures/sources/launch_bounds.cu",
        "pressure": "tests/gpu/occupancy_kernels.cu", "advice": "benchmarks/advice_kernels.cu"}
_MM = [["f32", 4096 * 1024], ["f32", 1024 * 4096], ["f32", 4096 * 4096], ["i32", 4096], ["i32", 4096], ["i32", 1024]]


def _own(file, function, block, grid, args, extent=None, bound=None):
    """One of this project's kernels. extent: threads per dimension the grid must cover
    (None: the grid stays as it is and only block sizes the kernel allows apply)."""
    return {"suite": "tuneadvise", "file": _OWN[file], "function": function, "defines": [], "block": list(block),
            "grid": list(grid), "args": args, "extent": extent, "bound": bound}


def own_cases() -> list[dict]:
    n = 1 << 22
    return [
        _own("tiled", "sgemm_tile<8, 8>", (16, 16), (32, 32), _MM, [512, 512]),
        _own("tiled", "sgemm_tile<4, 8>", (16, 16), (32, 64), _MM, [512, 1024]),
        _own("tiled", "dgemm_4x4", (16, 16), (32, 32),
             [["f64", 2048 * 512], ["f64", 512 * 2048], ["f64", 2048 * 2048], ["i32", 2048], ["i32", 512]],
             [512, 512]),
        _own("tiled", "fft_radix8", (256,), (8192,), [["f32", 2 * 8192 * 256 * 8], ["f32", 2 * 1024], ["i32", 256]]),
        _own("tiled", "nbody_forces", (256,), (256,), [["f32", 4 * 65536], ["f32", 3 * 65536], ["i32", 65536],
                                                       ["f32s", 0.01]], [65536]),
        _own("tiled", "stencil_3d", (32, 8), (16, 64), [["f32", 520 * 520 * 129], ["f32", 520 * 520 * 129],
                                                        ["i32", 520], ["i32", 520], ["i32", 128]], [512, 512]),
        _own("tiled", "softmax_rows", (32,), (65536,), [["f32", 65536 * 512], ["f32", 65536 * 512], ["i32", 512]]),
        _own("tiled", "layer_norm", (128,), (32768,), [["f32", 32768 * 1024], ["f32", 1024], ["f32", 1024],
                                                       ["f32", 32768 * 1024], ["i32", 1024], ["f32s", 1e-5]]),
        _own("tiled", "histogram_256", (256,), (1024,), [["u8", 1 << 26], ["zero_u32", 256], ["i32", 1 << 26]],
             [1024 * 256]),
        _own("tiled", "batched_dot32", (256,), (4096,), [["f32", 4096 * 32], ["f32", 4096 * 32],
                                                         ["f32", 4096 * 4096], ["i32", 4096]], "grid"),
        _own("tiled", "complex_mac16", (256,), (4,), [["f32", 2 * 4096 * 1024], ["f32", 2 * 4096 * 16],
                                                      ["f32", 2 * 16 * 1024], ["i32", 4096]], [1024]),
        _own("pressure", "pressure", (256,), (1 << 14,), [["f32", n], ["f32", n], ["i32", n]], [n]),
        _own("bounded", "heavy_fma", (256,), (1 << 13,), [["f32", 24 << 21], ["f32", 1 << 21], ["i32", 1 << 21]],
             [1 << 21], bound=[256]),
        _own("bounded", "bounded_dgemv", (128,), (256,), [["f64", 32768 * 1020], ["f64", 1020], ["f64", 32768],
                                                          ["i32", 1020]], [32768], bound=[128, 2]),
        _own("advice", "softmax_1024_wide", (1024,), (8192,), [["f32", 8192 * 24576], ["f32", 8192 * 24576],
                                                               ["i32", 24576]]),
        _own("advice", "smem_matmul_64", (16, 16), (64, 64), [["f32", 4096 * 4096]] * 3 + [["i32", 4096]]),
        _own("advice", "block_reduce_8acc", (1024,), (1056,), [["f32", 1 << 26], ["zero_f32", 1], ["i32", 1 << 24]],
             [1056 * 1024]),
        _own("advice", "elementwise_heavy", (256,), (1 << 14,), [["f32", 1 << 24]] * 3 + [["i32", 1 << 22]],
             [1 << 22]),
    ]


def _pb(file, function, defines, block, extent, args):
    """One PolyBench-ACC kernel at the block its host code launches it with; its grid is
    the host code's ceil(extent / block) in each dimension."""
    grid = [math.ceil(e / b) for e, b in zip(extent, block)]
    return {"suite": "PolyBench-ACC", "file": f"CUDA/{file}", "function": function, "defines": defines,
            "block": list(block), "grid": grid, "args": args, "extent": extent, "bound": None}


def polybench_cases() -> list[dict]:
    f, i, s = (lambda n: ["f32", n]), (lambda v: ["i32", v]), (lambda v: ["f32s", v])
    la = "linear-algebra/kernels"
    k1, k4, k8 = 1024, 4096, 8192
    mm = [i(k1)] * 3
    return [
        _pb(f"{la}/gemm/gemm.cu", "gemm_kernel", ["LARGE_DATASET"], (32, 8), [k1, k1],
            mm + [s(1.0), s(1.0), f(k1 * k1), f(k1 * k1), f(k1 * k1)]),
        _pb(f"{la}/2mm/2mm.cu", "mm2_kernel1", [], (32, 8), [k1, k1],
            mm + [i(k1), s(1.0), s(1.0), f(k1 * k1), f(k1 * k1), f(k1 * k1)]),
        _pb(f"{la}/3mm/3mm.cu", "mm3_kernel1", ["LARGE_DATASET"], (32, 8), [k1, k1],
            mm + [i(k1), i(k1), f(k1 * k1), f(k1 * k1), f(k1 * k1)]),
        _pb(f"{la}/atax/atax.cu", "atax_kernel1", ["LARGE_DATASET"], (256,), [k8],
            [i(k8), i(k8), f(k8 * k8), f(k8), f(k8)]),
        _pb(f"{la}/bicg/bicg.cu", "bicg_kernel1", ["LARGE_DATASET"], (256,), [k8],
            [i(k8), i(k8), f(k8 * k8), f(k8), f(k8)]),
        _pb(f"{la}/mvt/mvt.cu", "mvt_kernel1", ["LARGE_DATASET"], (256,), [k8], [i(k8), f(k8 * k8), f(k8), f(k8)]),
        _pb(f"{la}/gesummv/gesummv.cu", "gesummv_kernel", ["LARGE_DATASET"], (256,), [k8],
            [i(k8), s(1.0), s(1.0), f(k8 * k8), f(k8 * k8), f(k8), f(k8), f(k8)]),
        _pb(f"{la}/syrk/syrk.cu", "syrk_kernel", [], (32, 8), [k1, k1],
            [i(k1), i(k1), s(1.0), s(1.0), f(k1 * k1), f(k1 * k1)]),
        _pb(f"{la}/syr2k/syr2k.cu", "syr2k_kernel", [], (32, 8), [k1, k1],
            [i(k1), i(k1), s(1.0), s(1.0), f(k1 * k1), f(k1 * k1), f(k1 * k1)]),
        _pb(f"{la}/gemver/gemver.cu", "gemver_kernel1", ["LARGE_DATASET"], (32, 8), [k8, k8],
            [i(k8), s(1.0), s(1.0), f(k8 * k8), f(k8), f(k8), f(k8), f(k8)]),
        _pb("datamining/covariance/covariance.cu", "mean_kernel", ["LARGE_DATASET"], (256,), [k4],
            [i(k4), i(k4), f(k4 + 1), f((k4 + 1) * (k4 + 1))]),
        _pb("datamining/covariance/covariance.cu", "reduce_kernel", ["LARGE_DATASET"], (32, 8), [k4, k4],
            [i(k4), i(k4), f(k4 + 1), f((k4 + 1) * (k4 + 1))]),
        _pb("datamining/correlation/correlation.cu", "std_kernel", ["LARGE_DATASET"], (256,), [k4],
            [i(k4), i(k4), f(k4 + 1), f(k4 + 1), f((k4 + 1) * (k4 + 1))]),
        _pb("stencils/convolution-2d/2DConvolution.cu", "convolution2D_kernel", ["LARGE_DATASET"], (32, 8), [k8, k8],
            [i(k8), i(k8), f(k8 * k8), f(k8 * k8)]),
        _pb("stencils/convolution-3d/3DConvolution.cu", "convolution3D_kernel", ["NI=8", "NJ=4096", "NK=4096"],
            (32, 8), [k4, k4], [i(8), i(k4), i(k4), f(8 * k4 * k4), f(8 * k4 * k4), i(4)]),
        _pb("stencils/fdtd-2d/fdtd2d.cu", "fdtd_step3_kernel", ["LARGE_DATASET"], (32, 8), [k4, k4],
            [i(k4), i(k4), f((k4 + 1) * (k4 + 1)), f((k4 + 1) * (k4 + 1)), f((k4 + 1) * (k4 + 1)), i(0)]),
        _pb("stencils/jacobi-2d-imper/jacobi2D.cu", "runJacobiCUDA_kernel1", ["EXTRALARGE_DATASET"], (32, 8),
            [k4, k4], [i(k4), f(k4 * k4), f(k4 * k4)]),
        _pb("linear-algebra/solvers/lu/lu.cu", "lu_kernel2", ["LARGE_DATASET"], (32, 8), [k4, k4],
            [i(k4), f(k4 * k4), i(0)]),
    ]


# ---------------------------------------------------------------- build (CPU)

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def ptxas_figures(log: str) -> dict[str, dict]:
    """Each entry function's figures from ptxas -v: registers, spills, stack, static smem."""
    figures, current = {}, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = figures.setdefault(m.group(1), {"ptxas": []})
        if current is None:
            continue
        if m := _FRAME.search(line):
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        if m := _USED.search(line):
            current.update(registers=int(m.group(1)), smem=int(m.group(2) or 0))
        if "ptxas info" in line or "bytes stack frame" in line:
            current["ptxas"].append(line.strip())
    return figures


def demangled(name: str) -> str:
    proc = subprocess.run(["c++filt", name], capture_output=True, text=True)
    return proc.stdout.strip() or name


def entry_for(figures: dict, function: str) -> str:
    """The mangled entry name of `function` (as written in its source, template arguments too)."""
    for name in figures:
        plain = demangled(name)
        if name == function or plain.split("(")[0].removeprefix("void ").strip() == function:
            return name
    raise RuntimeError(f"{function}: not among {sorted(figures)}")


def compile_cubin(source: Path, out: Path, arch: str, flags: list[str]) -> tuple[list[str], str]:
    command = ["nvcc", "-cubin", f"-arch={arch}", "-O3", "-Xptxas", "-v", *flags, str(source), "-o", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(command)}\n{proc.stderr[-2000:]}")
    return command, proc.stderr


def with_bounds(source: str, function: str, bound: list[int], blocks: int) -> str:
    """The source with `function`'s __launch_bounds__ given `blocks` as its minimum blocks per SM."""
    pattern = re.compile(r"__launch_bounds__\(\s*\d+\s*(?:,\s*\d+\s*)?\)(\s*" + re.escape(function) + r"\s*\()")
    edited, count = pattern.subn(f"__launch_bounds__({bound[0]}, {blocks})\\1", source)
    if count != 1:
        raise RuntimeError(f"{function}: no single __launch_bounds__ to change")
    return edited


def register_steps(arch: str, registers: int, block: int, smem: int) -> list[tuple[int, int]]:
    """(cap, blocks per SM at the cap) for each cap where theoretical occupancy changes."""
    from tuneadvise.advisor.engine.occupancy import occupancy
    from tuneadvise.advisor.engine.whatif import register_caps
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.specs.resolve import resolve_arch

    spec = resolve_arch(arch)
    base = occupancy(spec, LaunchConfig(registers=registers, block_size=block, static_shared_mem=smem))
    return [(cap, occupancy(spec, LaunchConfig(registers=cap, block_size=block, static_shared_mem=smem))
             .active_blocks_per_sm) for cap in register_caps(base)]


def block_shapes(case: dict) -> list[list[int]]:
    """The block sizes a case is timed at besides its own: all when an extent says how the
    grid follows the block, none when the kernel's code fixes its block."""
    if case["extent"] is None:
        return []
    limit = case["bound"][0] if case["bound"] else 1024
    shapes = [[b] for b in BLOCKS_1D] if len(case["block"]) == 1 else [list(s) for s in BLOCKS_2D]
    return [s for s in shapes if math.prod(s) <= limit and s != case["block"]]


def grid_for(case: dict, block: list[int]) -> list[int]:
    if case["extent"] == "grid":
        return case["grid"]
    return [math.ceil(e / b) for e, b in zip(case["extent"], block)]


def source_of(case: dict, suite: Path) -> Path:
    return (suite if case["suite"] == "PolyBench-ACC" else ROOT) / case["file"]


def build_case(case: dict, suite: Path, out: Path, arch: str, tag: str) -> dict:
    source = source_of(case, suite)
    include = ["-I", str(suite / "CUDA" / "utilities"), "-I", str(source.parent)] if case["suite"] != "tuneadvise" else []
    flags = include + [f"-D{d}" for d in case["defines"]] + ["-DcudaThreadSynchronize=cudaDeviceSynchronize"]
    command, log = compile_cubin(source, out / f"{tag}.cubin", arch, flags)
    figures = ptxas_figures(log)
    entry = entry_for(figures, case["function"])
    base = {"cubin": f"{tag}.cubin", "entry": entry, "nvcc": _portable(command, suite, out), **figures[entry]}
    block = math.prod(case["block"])
    variants = []
    for cap, blocks in register_steps(arch, base["registers"], block, base["smem"]):
        vtag = f"{tag}-r{cap}"
        if case["bound"]:
            edited = out / f"{vtag}.cu"
            edited.write_text(with_bounds(source.read_text(), case["function"], case["bound"], blocks))
            command, vlog = compile_cubin(edited, out / f"{vtag}.cubin", arch, flags + ["-I", str(source.parent)])
            how = f"__launch_bounds__({case['bound'][0]}, {blocks})"
        else:
            command, vlog = compile_cubin(source, out / f"{vtag}.cubin", arch, flags + [f"-maxrregcount={cap}"])
            how = f"-maxrregcount={cap}"
        vfig = ptxas_figures(vlog)[entry]
        variants.append({"change": {"kind": "register_cap", "value": cap, "applied_as": how},
                         "block": case["block"], "grid": case["grid"], "cubin": f"{vtag}.cubin",
                         "nvcc": _portable(command, suite, out), **vfig})
    for shape in block_shapes(case):
        variants.append({"change": {"kind": "block_size", "value": "x".join(map(str, shape))},
                         "block": shape, "grid": grid_for(case, shape), "cubin": base["cubin"],
                         **{k: base[k] for k in ("registers", "spill_stores", "spill_loads", "stack", "smem", "ptxas")}})
    return {"kernel": case["function"], "origin": {"suite": case["suite"], "file": case["file"],
                                                   "kernel_function": case["function"]},
            "arch": arch, "defines": case["defines"], "args": case["args"],
            "baseline": {"block": case["block"], "grid": case["grid"], **base}, "variants": variants}


def _portable(command: list[str], suite: Path, out: Path) -> str:
    """The nvcc command with this machine's folders replaced by names."""
    text = " ".join(command)
    return text.replace(str(suite), "$POLYBENCH_ACC").replace(str(out), "$BUILD").replace(str(ROOT), "$REPO")


def build(suite: Path, out: Path, arch: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    plan = []
    for n, case in enumerate(own_cases() + polybench_cases()):
        tag = f"{n:02d}-{re.sub(r'[^A-Za-z0-9]+', '_', case['function']).strip('_')}"
        plan.append(build_case(case, suite, out, arch, tag))
        row = plan[-1]
        print(f"{row['kernel']:<24} {row['baseline']['registers']:>3} regs  "
              f"{len(row['variants'])} variants", flush=True)
    (out / "plan.json").write_text(json.dumps(plan, indent=1))
    return 0


# ---------------------------------------------------------------- time (GPU)

def _buffers(spec: list, seed: int):
    import cupy as cp

    rng = cp.random.default_rng(seed)
    made = []
    for kind, value in spec:
        if kind == "f32":
            made.append(rng.random(value, dtype=cp.float32) + cp.float32(0.5))
        elif kind == "f64":
            made.append(rng.random(value, dtype=cp.float64) + 0.5)
        elif kind == "u8":
            cp.random.seed(seed)
            made.append(cp.random.randint(0, 256, value, dtype=cp.uint8))
        elif kind == "zero_f32":
            made.append(cp.zeros(value, cp.float32))
        elif kind == "zero_u32":
            made.append(cp.zeros(value, cp.uint32))
        elif kind == "i32":
            made.append(cp.int32(value))
        elif kind == "f32s":
            made.append(cp.float32(value))
        else:
            raise ValueError(kind)
    return tuple(made)


def input_sets(spec: list) -> list[tuple]:
    size = {"f32": 4, "f64": 8, "u8": 1, "zero_f32": 4, "zero_u32": 4}
    total = sum(size.get(kind, 0) * value for kind, value in spec)
    count = max(1, min(6, math.ceil(ROTATE_BYTES / max(total, 1))))
    return [_buffers(spec, seed) for seed in range(count)]


def timed(function, grid, block, sets) -> list[float]:
    """Microseconds of each of REPEATS launches after WARMUP, rotating through the input sets."""
    import cupy as cp

    start, stop = cp.cuda.Event(), cp.cuda.Event()
    grid, block = tuple(grid), tuple(block)
    for n in range(WARMUP):
        function(grid, block, sets[n % len(sets)])
    times = []
    for n in range(REPEATS):
        start.record()
        function(grid, block, sets[n % len(sets)])
        stop.record()
        stop.synchronize()
        times.append(round(cp.cuda.get_elapsed_time(start, stop) * 1000, 3))
    return times


def time_kernel(row: dict, build_dir: Path) -> dict:
    import cupy as cp

    sets = input_sets(row["args"])
    modules = {}

    def function(cubin, entry):
        if cubin not in modules:
            modules[cubin] = cp.RawModule(path=str(build_dir / cubin))
        return modules[cubin].get_function(entry)

    entry, base = row["baseline"]["entry"], row["baseline"]
    runs = [timed(function(base["cubin"], entry), base["grid"], base["block"], sets)]
    for variant in row["variants"]:
        try:
            variant["runs"] = timed(function(variant["cubin"], entry), variant["grid"], variant["block"], sets)
        except Exception as error:  # noqa: BLE001  a launch the driver refuses is this variant's outcome
            variant["failed"] = f"{type(error).__name__}: {error}"
            continue
        variant["median_us"] = statistics.median(variant["runs"])
    runs.append(timed(function(base["cubin"], entry), base["grid"], base["block"], sets))
    medians = [statistics.median(r) for r in runs]
    base["runs"] = runs
    base["median_us"] = medians
    row["baseline_spread"] = abs(medians[0] - medians[1]) / statistics.mean(medians)
    row["input_sets"] = len(sets)
    del sets
    cp.get_default_memory_pool().free_all_blocks()
    return row


def device_line() -> dict:
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                                capture_output=True, text=True).stdout.strip() or None
    except OSError:
        driver = None
    return {"name": props["name"].decode(), "cc": f"{props['major']}.{props['minor']}",
            "sms": props["multiProcessorCount"], "driver": driver,
            "driver_api": cp.cuda.runtime.driverGetVersion(), "runtime": cp.cuda.runtime.runtimeGetVersion(),
            "cupy": cp.__version__}


_PTXAS = ("registers", "spill_stores", "spill_loads", "stack", "smem")


def _ptxas(build: dict) -> dict:
    return {**{k: build[k] for k in _PTXAS}, "lines": build["ptxas"]}


def recorded(row: dict) -> dict:
    """A timed plan row in the recorded shape (benchmarks/recorded/README.md)."""
    base = row["baseline"]
    out = {"kernel": row["kernel"], "origin": row["origin"], "arch": row["arch"], "defines": row["defines"],
           "args": row["args"], "entry": base["entry"]}
    if "failed" in row:
        return {**out, "failed": row["failed"]}
    out["baseline"] = {"launch": {"block": base["block"], "grid": base["grid"]}, "ptxas": _ptxas(base),
                       "nvcc": base["nvcc"], "median_us": base["median_us"], "runs": base["runs"]}
    out["baseline_spread"] = row["baseline_spread"]
    out["input_sets"] = row["input_sets"]
    out["variants"] = []
    for v in row["variants"]:
        entry = {"change": v["change"], "launch": {"block": v["block"], "grid": v["grid"]}, "ptxas": _ptxas(v),
                 "nvcc": v.get("nvcc", base["nvcc"])}
        entry.update({"failed": v["failed"]} if "failed" in v else {"median_us": v["median_us"], "runs": v["runs"]})
        out["variants"].append(entry)
    return out


def document(rows: list[dict], device: dict) -> dict:
    return {"schema": "tuneadvise.advice-outcomes/1", "device": device,
            "timing": {"warmup": WARMUP, "repeats": REPEATS, "statistic": "median", "clock": "CUDA events",
                       "rotate_bytes": ROTATE_BYTES}, "kernels": [recorded(r) for r in rows]}


def time_all(build_dir: Path, out: Path, only: list[str] | None = None) -> int:
    plan = [row for row in json.loads((build_dir / "plan.json").read_text()) if not only or row["kernel"] in only]
    rows, device = [], device_line()
    for row in plan:
        try:
            rows.append(time_kernel(row, build_dir))
        except Exception as error:  # noqa: BLE001  one kernel's failure is its row; the rest still run
            rows.append({**row, "failed": f"{type(error).__name__}: {error}"})
            print(f"{row['kernel']}: failed: {error}", flush=True)
            continue
        base = row["baseline"]["median_us"]
        print(f"{row['kernel']:<24} base {base[0]:>10.1f} {base[1]:>10.1f} us  spread {row['baseline_spread']:.1%}  "
              + " ".join(f"{v['change']['value']}:{v['median_us'] / statistics.mean(base):.2f}" if "median_us" in v
                         else f"{v['change']['value']}:failed" for v in row["variants"]), flush=True)
        out.write_text(json.dumps(document(rows, device), indent=1))
    out.write_text(json.dumps(document(rows, device), indent=1))
    return 0


def outcome(variant: dict, row: dict) -> tuple[float, str]:
    """after/before and faster|slower|equal: beyond the noise, the larger of 2% and twice
    the baseline's start-to-end spread."""
    ratio = variant["median_us"] / statistics.mean(row["baseline"]["median_us"])
    noise = max(0.02, 2 * row["baseline_spread"])
    return ratio, "faster" if ratio < 1 - noise else "slower" if ratio > 1 + noise else "equal"


def summary(path: Path) -> int:
    """The recorded table, one line per variant, and the counts."""
    doc = json.loads(path.read_text())
    counts: dict = {}
    print(f"{doc['device']['name']} (CC {doc['device']['cc']}, driver {doc['device']['driver']})")
    for row in doc["kernels"]:
        for v in row.get("variants", []):
            kind = v["change"]["kind"]
            if "median_us" not in v:
                counts.setdefault(kind, {}).setdefault("not launched", 0)
                counts[kind]["not launched"] += 1
                continue
            ratio, result = outcome(v, row)
            counts.setdefault(kind, {}).setdefault(result, 0)
            counts[kind][result] += 1
            print(f"{row['kernel']:<24} {kind:<12} {v['change']['value']!s:<6} {v['ptxas']['registers']:>3} regs "
                  f"{v['ptxas']['spill_stores']:>4} B spill  {ratio:6.3f}  {result}")
    for kind, c in counts.items():
        print(kind, ", ".join(f"{k} {n}" for k, n in sorted(c.items())))
    return 0


def launch_all(build_dir: Path, suite: str | None) -> int:
    """Each baseline launched once, on one input set (ncu replays each launch itself)."""
    import cupy as cp

    for row in json.loads((build_dir / "plan.json").read_text()):
        if suite and (row["origin"]["suite"] == "tuneadvise") != (suite == "own"):
            continue
        base = row["baseline"]
        sets = [_buffers(row["args"], 0)]
        function = cp.RawModule(path=str(build_dir / base["cubin"])).get_function(base["entry"])
        function(tuple(base["grid"]), tuple(base["block"]), sets[0])
        cp.cuda.Device().synchronize()
        print(row["kernel"], "grid", base["grid"], "block", base["block"], file=sys.stderr, flush=True)
        del sets
        cp.get_default_memory_pool().free_all_blocks()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    b = sub.add_parser("build")
    b.add_argument("suite", type=Path)
    b.add_argument("build_dir", type=Path)
    b.add_argument("--arch", default="sm_90")
    t = sub.add_parser("time")
    t.add_argument("build_dir", type=Path)
    t.add_argument("out", type=Path)
    t.add_argument("--only", action="append", help="time only this kernel (repeatable)")
    su = sub.add_parser("summary")
    su.add_argument("recorded", type=Path)
    la = sub.add_parser("launch")
    la.add_argument("build_dir", type=Path)
    la.add_argument("--suite", choices=("own", "polybench"))
    options = parser.parse_args()
    if options.step == "build":
        return build(options.suite.resolve(), options.build_dir.resolve(), options.arch)
    if options.step == "time":
        return time_all(options.build_dir, options.out, options.only)
    if options.step == "summary":
        return summary(options.recorded)
    return launch_all(options.build_dir, options.suite)


if __name__ == "__main__":
    sys.exit(main())
