"""`tune`: the candidates tuneadvise believes in, timed on the GPU (advisor/tune.py), as one
document: each candidate's verdict beside its measured time, the best, the disagreements."""

from __future__ import annotations

import math

from ..inputs import InputError

TRITON_SUFFIX = ".py"


def tune_query(source: str, arch: str, args: str | None, block_dims: tuple[int, ...], kernel_glob: str | None = None,
               grid_size: int | None = None, sm_count: int | None = None, iterations: int = 7,
               settings=None) -> dict:
    """Plan, prune and time the candidates of the one kernel `kernel_glob` picks in `source` (a .cu
    file: Kernel Tuner; a .py file defining `configs` and `bench`: Triton), launched today with a
    block of `block_dims` (256, or 16x16 as (16, 16)). Raises TuneMissing without a GPU or the
    runner, InputError for bad input."""
    from ...specs.resolve import resolve_arch
    from ..tune import document, run_triton, triton_candidates

    resolved = resolve_arch(arch)
    if source.lower().endswith(TRITON_SUFFIX):
        compiled, times, device = run_triton(source)
        candidates = triton_candidates(resolved, compiled, sm_count)
        return document(source, resolved.sm, "triton.testing.do_bench", device, candidates, times)
    if args is None:
        raise InputError("--args", "a .cu kernel needs the Python file that makes its arguments (Kernel Tuner's "
                                   "`arguments` and `problem_size`)")
    return _cuda(source, resolved, args, math.prod(block_dims), kernel_glob, grid_size, sm_count, iterations, settings)


def _cuda(source, resolved, args, block_size, kernel_glob, grid_size, sm_count, iterations, settings) -> dict:
    from ..frontier import frontier
    from ..prune import prune
    from ..readers.demangle import kernel_names
    from ..readers.source_index import SourceIndex
    from ..tune import arguments_file, cu_candidates, document, kernel_source, kernel_tuner_ready, run_kernel_tuner

    tune_kernel, backend, device = kernel_tuner_ready()  # before compiling anything: without a GPU, say so at once
    given = arguments_file(args)
    text = kernel_source(source)
    report = frontier(source, [resolved.sm], block_size, kernel_glob, settings)
    if len(report.kernels) != 1:
        raise InputError("--kernel", f"'{'*' if kernel_glob is None else kernel_glob}' matches {len(report.kernels)} kernels of {source}; "
                                     "name one")
    kernel = report.kernels[0]
    if "arguments" not in given or "problem_size" not in given:
        raise InputError("--args", f"{args} defines no `arguments` and `problem_size` (Kernel Tuner's convention)")
    candidates = cu_candidates(report, resolved, sm_count, grid_size)
    launchable = prune(candidates, resolved, lambda c: {"registers": c.register_cap or kernel.points[0].registers,
                                                        "block_size": c.block_size})
    candidates = [p.config for p in launchable]
    name = kernel_names(kernel.name)[2]
    index = SourceIndex()
    index.add_file(source, text)  # the text Kernel Tuner compiles, so the line found is the line changed
    definition = index.lookup(name)
    if definition is None:
        raise InputError("--kernel", f"{kernel.demangled}: its definition is not in {source}")
    times = run_kernel_tuner(tune_kernel, backend, text, definition.line, name, candidates,
                             given, iterations)
    return document(kernel.demangled, resolved.sm, f"kernel_tuner ({backend} backend)", device, candidates, times)
