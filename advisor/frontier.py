"""The register-cap frontier: for each kernel, ptxas's own figures at every register cap
where the kernel's occupancy changes at one block size.

The caps come from the engine (`whatif.register_caps`: the steps of the register
staircase below the kernel's uncapped count, the other limits applied); each cap is
one build of the whole source at `-maxrregcount=N` (nvcc passes the cap to cicc and
ptxas, as a user's build would), all caps of all kernels in one bounded pool, each
distinct build once. Every point's registers, spills and stack frame are what that
build's ptxas printed; its blocks per SM and occupancy are the engine's for those
figures at the block size.

A kernel with its own `__launch_bounds__` or `__maxnreg__` ignores -maxrregcount, so
its points repeat the uncapped figures (as ptxas reports them); the advice then
names the attribute to change.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from .engine.occupancy import occupancy
from .engine.whatif import bounds_register_cap, register_caps
from .launch import LaunchConfig
from .lint.machine_code import machine_code_reader
from .readers.compiler_output import KernelUsage
from .readers.demangle import kernel_names, name_matches
from .readers.sass import lines_by_bytes
from .readers.source_index import SourceIndex
from .text import plural, utf8_text
from .toolchain.compile import Build, Compiler
from .toolchain.discovery import find_toolchain
from .toolchain.settings import BuildSettings, BuildSetupError, with_line_info

SCHEMA_VERSION = 1
FRONTIER_SUFFIXES = (".cu", ".cuda", ".ptx")
SPILL_LINES_SHOWN = 3  # source lines named per spilling build in the text; all are in the JSON


class Point(NamedTuple):
    max_registers: int | None  # the cap; None: the uncapped build
    registers: int
    spill_stores: int | None
    spill_loads: int | None
    stack_frame: int | None
    active_blocks_per_sm: int
    occupancy: float
    # Where this build spills, by source line, most bytes first ({file, line, stores, loads}):
    # from its machine code, where nvdisasm read it.
    spill_lines: tuple[dict, ...] = ()

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)

    @property
    def spill_places(self) -> str | None:
        """'cap 40 spills at k.cu:23 (96 B), k.cu:14 (64 B) and 2 more lines': the source lines
        where this build spills most (stores and loads), where its machine code names them."""
        if not (self.spills and self.spill_lines):
            return None
        shown = [f"{utf8_text(os.path.basename(p['file'] or '?'))}:{p['line']} ({p['stores'] + p['loads']} B)"
                 for p in self.spill_lines[:SPILL_LINES_SHOWN]]
        more = (f" and {plural(len(self.spill_lines) - SPILL_LINES_SHOWN, 'more line')}"
                if len(self.spill_lines) > SPILL_LINES_SHOWN else "")
        cap = "uncapped" if self.max_registers is None else f"cap {self.max_registers}"
        return f"{cap} spills at " + ", ".join(shown) + more

    def to_dict(self) -> dict:
        return {"max_registers": self.max_registers, "registers": self.registers, "spill_stores": self.spill_stores,
                "spill_loads": self.spill_loads, "stack_frame": self.stack_frame,
                "active_blocks_per_sm": self.active_blocks_per_sm, "occupancy": round(self.occupancy, 6),
                "spill_lines": list(self.spill_lines)}


class KernelFrontier(NamedTuple):
    name: str  # as the compiler wrote it
    demangled: str
    arch: str
    block_size: int
    points: tuple[Point, ...]  # the uncapped build first, then the caps, descending
    best: int | None  # index of the most occupancy at zero spills, when a cap gains it
    spills_begin: int | None  # index of the first point (from the uncapped build down) that spills
    advice: str | None  # the __launch_bounds__ or -maxrregcount that gives `best`
    own_cap: str | None  # the kernel's own __launch_bounds__ / __maxnreg__ (ignores -maxrregcount)
    verdict: dict | None = None  # the best cap's verdict (advice/verdict.py's to_dict), where there is a best

    def to_dict(self) -> dict:
        return {"name": self.name, "demangled": self.demangled, "arch": self.arch, "block_size": self.block_size,
                "points": [p.to_dict() for p in self.points], "best": self.best, "spills_begin": self.spills_begin,
                "advice": self.advice, "own_cap": self.own_cap, "verdict": self.verdict}


class FrontierReport(NamedTuple):
    kernels: list[KernelFrontier]
    problems: list[str]  # one line per build the compiler rejected
    toolchain: str  # ptxas's version line

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "toolchain": self.toolchain,
                "kernels": [k.to_dict() for k in self.kernels], "problems": self.problems}


def _launch(usage: KernelUsage, block_size: int, max_threads: int | None) -> LaunchConfig:
    return LaunchConfig.from_mapping({"registers": usage.registers, "block_size": block_size,
                                      "shared_mem": usage.shared_mem, "barriers": usage.barriers,
                                      "max_threads_per_block": max_threads})


def _point(arch, usage: KernelUsage, block_size: int, max_threads: int | None, cap: int | None) -> Point:
    result = occupancy(arch, _launch(usage, block_size, max_threads))
    lines = tuple(lines_by_bytes(usage.sass.spill_sites)) if usage.sass is not None else ()
    return Point(cap, usage.registers, usage.spill_stores, usage.spill_loads, usage.stack_frame,
                 result.active_blocks_per_sm, result.occupancy, lines)


def _matches(name: str, glob: str | None) -> bool:
    return glob is None or name_matches(name, glob)


def _own_cap(definition) -> str | None:
    if definition is None:
        return None
    if definition.max_registers is not None:
        return f"__maxnreg__({definition.max_registers})"
    if definition.max_threads is not None:
        return (f"__launch_bounds__({definition.max_threads}, {definition.min_blocks})" if definition.min_blocks
                else f"__launch_bounds__({definition.max_threads})")
    return None


def _marks(arch, points: list[Point], block_size: int, own_cap: str | None):
    clean = [i for i, p in enumerate(points) if not p.spills]
    best = max(clean, key=lambda i: (points[i].occupancy, -i), default=None)  # ties: the largest cap
    if best is not None and points[best].occupancy <= points[0].occupancy:
        best = None  # no cap gains occupancy without spills
    spills_begin = next((i for i, p in enumerate(points) if p.spills), None)
    advice = None
    if best is not None:
        point = points[best]
        blocks = point.active_blocks_per_sm
        bounds = f"__launch_bounds__({block_size}, {blocks})"
        if own_cap is not None:
            advice = (f"{own_cap} keeps -maxrregcount from applying; {bounds} (registers <= "
                      f"{bounds_register_cap(arch, block_size, blocks)}): {blocks} blocks/SM, "
                      f"occupancy {point.occupancy:.1%}, no spills")
        else:
            advice = (f"{bounds} or -maxrregcount={point.max_registers}: {point.registers} registers, {blocks} "
                      f"blocks/SM, occupancy {point.occupancy:.1%}, no spills")
    return best, spills_begin, advice


def frontier(source: str, archs, block_size: int, kernel_glob: str | None = None,
             settings: BuildSettings | None = None, compiler: Compiler | None = None) -> FrontierReport:
    """The frontier of every kernel of `source` (.cu or .ptx) matching `kernel_glob`, on each of
    `archs` (sm_XX), at `block_size` threads per block. Raises ToolchainMissing without a
    compiler, BuildSetupError for a source that cannot be read or an architecture no spec knows."""
    from ..specs.names import UnknownArchError
    from ..specs.resolve import resolve_arch

    settings = settings or BuildSettings()
    try:
        resolved = {arch: resolve_arch(arch) for arch in archs}
    except UnknownArchError as exc:
        raise BuildSetupError(exc.as_option()) from None
    index = source_index(source)
    machine_code = machine_code_reader(None, cache=settings.cache)  # where nvdisasm is installed: where each cap's spills land
    compiler = compiler or Compiler(find_toolchain(), settings, keep_cubins=machine_code is not None)
    problems: list[str] = []
    kernels = _frontier(compiler, machine_code, source, resolved, settings, block_size, kernel_glob, index, problems)
    return FrontierReport(kernels, problems, compiler.toolchain.version)


def _usages(result, machine_code) -> list[KernelUsage]:
    """A build's kernels, with their machine code where it can be read."""
    records = result.usage()
    if machine_code is not None and result.cubin is not None and records:
        return machine_code(result.cubin, records)
    return records


def _frontier(compiler, machine_code, source, resolved, settings, block_size, kernel_glob, index, problems):
    """Every build of the frontier (with -lineinfo: machine code by source line; ptxas emits the same
    code), then each kernel's points."""
    path = os.path.abspath(source)
    flags = with_line_info(settings.flags)
    wanted = []  # (arch, usage, its source definition, caps)
    for result in compiler.run([Build(path, arch, flags, settings.max_registers) for arch in resolved]):
        if result.error is not None:
            problems.append(f"{source}: {result.build.arch}: the compiler failed: {result.error}")
            continue
        arch = resolved[result.build.arch]
        for usage in _usages(result, machine_code):
            if _matches(usage.name, kernel_glob):
                definition = index.lookup(kernel_names(usage.name)[2])
                bound = definition.max_threads if definition is not None else None
                base = occupancy(arch, _launch(usage, block_size, bound))
                wanted.append((result.build.arch, usage, definition, register_caps(base) if base.launchable else ()))
    capped = {(b.arch, b.max_registers): b for b in
              (Build(path, arch, flags, cap) for arch, _, _, caps in wanted for cap in caps)}
    by_build = {(r.build.arch, r.build.max_registers): r for r in compiler.run(capped.values())}
    for result in by_build.values():
        if result.error is not None:
            problems.append(f"{source}: {result.build.arch} at -maxrregcount={result.build.max_registers}: "
                            f"the compiler failed: {result.error}")
    usages = {key: {u.name: u for u in _usages(result, machine_code)} for key, result in by_build.items()}
    return [_kernel_frontier(resolved[arch_name], arch_name, usage, definition, caps, usages, block_size)
            for arch_name, usage, definition, caps in wanted]


def source_index(source: str) -> SourceIndex:
    """The source's kernel definitions (none for PTX); BuildSetupError for a file that cannot be read."""
    if not source.lower().endswith(FRONTIER_SUFFIXES):
        raise BuildSetupError(f"FILE: {source} is neither a CUDA source (.cu) nor PTX (.ptx)")
    index = SourceIndex()
    if not source.lower().endswith(".ptx"):
        from ..specs.files import source_text

        try:
            index.add_file(source, source_text(source))
        except OSError as exc:
            raise BuildSetupError(f"FILE: cannot read {source}: {exc.strerror}") from None
    elif not os.path.isfile(source):
        raise BuildSetupError(f"FILE: cannot read {source}: not a file")
    return index


def _kernel_frontier(arch, arch_name: str, usage, definition, caps, usages, block_size: int) -> KernelFrontier:
    """One kernel's points: the uncapped build's, then each cap's that compiled."""
    bound = definition.max_threads if definition is not None else None
    points = [_point(arch, usage, block_size, bound, None)]
    for cap in caps:
        capped_usage = usages.get((arch_name, cap), {}).get(usage.name)
        if capped_usage is not None:
            points.append(_point(arch, capped_usage, block_size, bound, cap))
    own = _own_cap(definition)
    best, spills_begin, advice = _marks(arch, points, block_size, own)
    verdict = None
    if best is not None:
        verdict = _best_verdict(arch, usage, points[best], block_size, bound)
        advice = f"{advice}; {verdict.text()}"
    return KernelFrontier(usage.name, kernel_names(usage.name)[1], arch_name, block_size, tuple(points), best,
                          spills_begin, advice, own, verdict.to_dict() if verdict is not None else None)


def _best_verdict(arch, usage: KernelUsage, point: Point, block_size: int, bound: int | None):
    """The best cap's verdict: its build against the uncapped one, and the uncapped machine code."""
    from .advice.judge import Known, register_cap_verdict

    sass = usage.sass
    known = Known(arch, _launch(usage, block_size, bound)._replace(spill_stores=usage.spill_stores,
                                                                   spill_loads=usage.spill_loads),
                  instructions=sass.instructions if sass is not None else None,
                  hot_loop=sass.hot_loop if sass is not None else None)
    return register_cap_verdict(known, {"registers": point.registers, "spill_stores": point.spill_stores,
                                        "spill_loads": point.spill_loads})
