"""Time the candidates the advice believes in: for one CUDA kernel, the register caps at every
occupancy cliff (built first with ptxas, through `frontier`, and written as the change the kernel
needs: `__launch_bounds__(B, N)` in a copy of its source) and the block sizes where its occupancy
changes, pruned to those that launch (`prune`), each with its verdict; then Kernel Tuner
compiles and times them on the GPU, and each candidate's time is put beside its verdict. For a
Triton kernel, the candidate `triton.Config`s are timed with Triton's own `do_bench`.

The user's arguments follow Kernel Tuner's convention: a small Python file that defines
`arguments` (the kernel's arguments, numpy arrays and numpy scalars, in order) and
`problem_size` (threads in x, or a tuple), and optionally `grid_div_x` (default: the block
size); for Triton it defines `configs` (the triton.Configs to time) and `bench(config)`, a
function that launches the kernel once with that configuration.

Without a GPU, Kernel Tuner or Triton, `TuneMissing` names what is needed."""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

from .advice.judge import Known, block_size_verdict, change_verdict, register_cap_verdict
from .advice.verdict import Verdict, combine
from .inputs import InputError

SCHEMA_VERSION = 1
NOISE_FLOOR = 0.02  # a difference under 2% (or the baseline's own spread) is "equal"
MAX_ARGS_BYTES = 1 << 20
CAP_PARAM = "tuneadvise_min_blocks"  # Kernel Tuner's tunable for a register cap: __launch_bounds__'s minBlocks


class TuneMissing(Exception):
    """A part `tune` needs is not here: a GPU, cuda-python or CuPy, Kernel Tuner or Triton (one sentence)."""


class TuneRunFailed(Exception):
    """The runner (Kernel Tuner, Triton) failed on this machine: one sentence naming it."""


class Candidate(NamedTuple):
    block_size: int
    min_blocks: int | None  # __launch_bounds__(block_size, min_blocks); None: as the kernel is
    register_cap: int | None  # the cap that minBlocks sets
    blocks_per_sm: int
    occupancy: float
    verdict: Verdict
    label: str  # "as built", "block 128", "__launch_bounds__(256, 5)"


def arguments_file(path: str, option: str | None = "args") -> dict:
    """The names a user's Python file defines (run as a script, read whole first: at most
    MAX_ARGS_BYTES); what it raises is bad input naming the file, and `option` (an InputError
    field: `args` is spelled --args) where the file came from one rather than the FILE argument."""
    from ..specs.files import read_bounded

    try:
        text = read_bounded(path, MAX_ARGS_BYTES, "arguments file", regular_only=True)
        code = compile(text, path, "exec")
    except (OSError, SyntaxError, ValueError) as exc:
        raise _file_error(option, f"cannot read {path} as Python: {exc}") from None
    found = {"__name__": "__tuneadvise_arguments__", "__file__": path}
    try:
        exec(code, found)  # noqa: S102  the user's own arguments file, as Kernel Tuner's scripts run theirs
    except Exception as exc:  # noqa: BLE001  whatever the user's code raises is a fault of that file
        raise _file_error(option, f"{path} raised {type(exc).__name__}: {str(exc)[:200]}") from None
    return found


def _file_error(option: str | None, message: str) -> InputError:
    return InputError(option, message) if option else InputError(f"FILE: {message}")


def kernel_source(path: str) -> str:
    """The .cu source whose copies Kernel Tuner compiles, read once through the bounded reader
    (MAX_SOURCE_BYTES, a regular file, no NUL bytes); what cannot be read is bad input naming FILE."""
    from ..specs.files import source_text

    try:
        return source_text(path)
    except OSError as exc:
        raise _file_error(None, f"cannot read {path}: {exc.strerror or exc}") from None


def cu_candidates(report, arch, sm_count: int | None, grid_size: int | None) -> list[Candidate]:
    """The candidates for the one kernel of a frontier report: as built, each cap that compiled,
    and each block size where occupancy changes, all at the report's block size."""
    from .engine.occupancy import occupancy
    from .engine.whatif import block_size_table
    from .rules.register_advice import cap_change

    kernel = report.kernels[0]
    base = kernel.points[0]
    usage_launch = _launch_of(kernel, base)._replace(grid_size=grid_size)
    known = Known(arch, usage_launch, sm_count)
    result = occupancy(arch, usage_launch)
    found = [Candidate(kernel.block_size, None, None, result.active_blocks_per_sm, result.occupancy,
                       combine([]), "as built")]
    for point in kernel.points[1:]:
        change = cap_change(arch, usage_launch, point.max_registers, point.active_blocks_per_sm)
        if change is None or change.via != "launch_bounds":
            continue
        verdict = register_cap_verdict(known, {"registers": point.registers, "spill_stores": point.spill_stores,
                                               "spill_loads": point.spill_loads})
        found.append(Candidate(kernel.block_size, change.min_blocks, change.registers, point.active_blocks_per_sm,
                               point.occupancy, verdict, change.bounds))
    seen = {round(result.occupancy, 6)}
    for step in block_size_table(result):
        # Only block sizes that raise occupancy (the smallest at each level): the ones advice proposes.
        if step.occupancy <= result.occupancy or round(step.occupancy, 6) in seen or step.value % 32:
            continue
        seen.add(round(step.occupancy, 6))
        grid = math.ceil(grid_size * kernel.block_size / step.value) if grid_size else None
        found.append(Candidate(step.value, None, None, step.blocks_per_sm, step.occupancy,
                               block_size_verdict(known, step.value, grid), f"block {step.value}"))
    return found


def _launch_of(kernel, point):
    from .launch import LaunchConfig

    return LaunchConfig(registers=point.registers, block_size=kernel.block_size, spill_stores=point.spill_stores,
                        spill_loads=point.spill_loads)


def measured_outcome(time: float, baseline: float, noise: float) -> str:
    ratio = time / baseline
    return "faster" if ratio < 1 - noise else "slower" if ratio > 1 + noise else "equal"


def agrees(outcome: str, measured: str) -> bool | None:
    """Whether the measurement bears the verdict out; None for `unknown` (nothing was predicted)."""
    if outcome == "likely_gain":
        return measured == "faster"
    if outcome == "likely_loss":
        return measured in ("slower", "equal")
    return None


def _spread(times: list[float] | None) -> float:
    """The baseline's run-to-run spread: the median absolute deviation over the median (robust to
    the first, cold run that a mean and a standard deviation would let dominate)."""
    if not times or len(times) < 2:
        return 0.0
    middle = statistics.median(times)
    return statistics.median(abs(t - middle) for t in times) / middle


def document(kernel: str, arch: str, runner: str, device: str, candidates: list[Candidate],
             times: list[list[float] | None]) -> dict:
    """The tune document: each candidate's verdict beside its measured time, the best, and where
    prediction and measurement disagreed."""
    medians = [statistics.median(t) if t else None for t in times]
    baseline = medians[0]
    noise = max(NOISE_FLOOR, 2 * _spread(times[0]))
    rows = []
    for index, (candidate, median) in enumerate(zip(candidates, medians)):
        measured = None if median is None or baseline is None else \
            ("baseline" if index == 0 else measured_outcome(median, baseline, noise))
        rows.append({"label": candidate.label, "block_size": candidate.block_size,
                     "register_cap": candidate.register_cap, "min_blocks": candidate.min_blocks,
                     "blocks_per_sm": candidate.blocks_per_sm, "occupancy": round(candidate.occupancy, 6),
                     "verdict": candidate.verdict.to_dict(), "time_ms": median, "measured": measured,
                     "agrees": None if index == 0 or measured is None else agrees(candidate.verdict.outcome, measured)})
    timed = [i for i, m in enumerate(medians) if m is not None]
    best = min(timed, key=lambda i: medians[i], default=None)
    return {"schema_version": SCHEMA_VERSION, "kernel": kernel, "arch": arch, "runner": runner, "device": device,
            "noise": round(noise, 4), "candidates": rows, "best": best,
            "predictions": sum(r["agrees"] is not None for r in rows),
            "disagreements": [i for i, r in enumerate(rows) if r["agrees"] is False]}


def source_with_cap(text: str, line: int):
    """Kernel Tuner's kernel source as a function of the tunable parameters: the kernel's source
    with __launch_bounds__(block, minBlocks) on its definition where a cap is tuned."""
    from .toolchain.cap_check import edited_source

    def source(params: dict) -> str:
        blocks = params.get(CAP_PARAM, 0)
        if not blocks:
            return text
        return edited_source(text, line, {"launch_bounds": [params["block_size_x"], blocks]}) or text

    return source


def kernel_tuner_backend() -> str:
    """Kernel Tuner's CUDA backend to use: "nvcuda" (NVIDIA's cuda-python bindings) where they are
    installed, else "cupy". Kernel Tuner 1.5's CuPy backend builds the device's UUID from CuPy's
    properties and failed on one machine ("bytes is not a 16-char string": a UUID cut short,
    likely at a zero byte); the cuda-python bindings hand over a fixed 16-byte field."""
    from ..probes.gpu import has_cuda_python

    return "nvcuda" if has_cuda_python() else "cupy"


def kernel_tuner_ready():
    """Kernel Tuner's tune_kernel, its backend (`kernel_tuner_backend`) and the GPU's name;
    TuneMissing naming what is not here."""
    backend = kernel_tuner_backend()
    device = _device_name(backend)
    try:
        from kernel_tuner import tune_kernel
    except ImportError as exc:
        raise TuneMissing(f"tune needs Kernel Tuner to compile and time the candidates ({exc.name} is not "
                          "installed): pip install 'tuneadvise[tune-cuda13]' (CUDA 13 driver) or 'tuneadvise[tune]' (CUDA 12)") from None
    return tune_kernel, backend, device


def _device_name(backend: str) -> str:
    """The GPU's name as Kernel Tuner's `backend` sees it; TuneMissing where it sees none."""
    from ..probes.gpu import GpuUnavailable, cuda_python_device_name, device_info, load_cupy

    try:
        return cuda_python_device_name(0) if backend == "nvcuda" else device_info(load_cupy("tune"), 0).name
    except GpuUnavailable as exc:
        raise TuneMissing(str(exc)) from None


def run_kernel_tuner(tune_kernel, backend: str, source_text: str, line: int, kernel_name: str,
                     candidates: list[Candidate], given: dict, iterations: int) -> list[list[float] | None]:
    """Each candidate's times in milliseconds (None where Kernel Tuner could not time it), timed
    through Kernel Tuner's `backend` ("nvcuda" or "cupy")."""
    wanted = {(c.block_size, c.min_blocks or 0) for c in candidates}
    params = {"block_size_x": sorted({c.block_size for c in candidates}),
              CAP_PARAM: sorted({c.min_blocks or 0 for c in candidates})}

    def allowed(*given, **values) -> bool:
        # Kernel Tuner calls a restriction in several ways: keywords, one dict, or the values of the
        # parameters it names (block_size_x, then the cap) in order.
        if values:
            return (values["block_size_x"], values[CAP_PARAM]) in wanted
        if len(given) == 1 and isinstance(given[0], dict):
            return (given[0]["block_size_x"], given[0][CAP_PARAM]) in wanted
        flat = list(given[0]) if len(given) == 1 and isinstance(given[0], (list, tuple)) else list(given)
        return tuple(flat[:2]) in wanted

    try:
        results, _ = tune_kernel(kernel_name, source_with_cap(source_text, line), given["problem_size"],
                                 given["arguments"], params, lang=backend, strategy="brute_force",
                                 restrictions=[allowed],
                                 grid_div_x=given.get("grid_div_x"), iterations=iterations, quiet=True,
                                 verbose=False)
    except Exception as exc:  # noqa: BLE001  Kernel Tuner's and the driver's errors have no common base
        raise TuneRunFailed(f"Kernel Tuner failed: {type(exc).__name__}: {str(exc)[:200]}") from None
    by_key = {(r["block_size_x"], r[CAP_PARAM]): r for r in results}
    times = []
    for c in candidates:
        found = by_key.get((c.block_size, c.min_blocks or 0))
        value = found.get("times") or ([found["time"]] if isinstance(found.get("time"), float) else None) \
            if found else None
        times.append(value)
    return times


def triton_candidates(arch, compiled: list, sm_count: int | None) -> list[Candidate]:
    """A verdict for each compiled triton.Config against the first (the baseline), from the two
    configurations' own figures: its registers, warps, shared memory and local memory."""
    from .compiled import analyze_compiled, resources_of

    base, base_result = resources_of(compiled[0]), analyze_compiled(compiled[0], arch.sm)
    known = Known(base_result.arch, base_result.kernel._replace(spill_stores=base.local_bytes or 0), sm_count)
    found = []
    for index, kernel in enumerate(compiled):
        result = analyze_compiled(kernel, arch.sm)
        figures = resources_of(kernel)
        # A cubin's local memory per thread stands for the spills (Triton's n_spills is the same bytes / 4).
        built = {"registers": figures.registers, "spill_stores": figures.local_bytes or 0}
        verdict = combine([]) if index == 0 else change_verdict(known, base_result, result, built)
        found.append(Candidate(figures.block_size, None, None, result.active_blocks_per_sm, result.occupancy,
                               verdict, f"config {index}"))
    return found


def run_triton(path: str) -> tuple[list, list[list[float] | None], str]:
    """Each config of the user's file at `path` compiled (by `bench(config)`, which launches it
    once) and timed by triton.testing.do_bench, and the device's name."""
    try:
        import torch
        from triton.testing import do_bench
    except ImportError as exc:
        raise TuneMissing(f"tune of a Triton kernel needs Triton and PyTorch ({exc.name} is not installed)") from None
    if not torch.cuda.is_available():
        raise TuneMissing("tune needs a CUDA GPU: PyTorch sees none")
    given = arguments_file(path, None)
    configs, bench = given.get("configs"), given.get("bench")
    if not configs or not callable(bench):
        raise _file_error(None, f"{path} defines no `configs` (triton.Configs) and `bench(config)`, which a Triton "
                                "file for tune defines")
    compiled = [bench(config) for config in configs]
    times = [do_bench(lambda c=config: bench(c), return_mode="all") for config in configs]
    return compiled, times, torch.cuda.get_device_name(0)
