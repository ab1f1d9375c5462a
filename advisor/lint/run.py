"""`lint` as a library: join resource usage read from build output with launch
settings from the config, run the engine and the rules on each kernel and
architecture, and apply budgets, per-kernel ignores and source suppressions.

    >>> from tuneadvise.advisor.lint.run import LintOptions, lint_records
    >>> from tuneadvise.advisor.readers.compiler_output import KernelUsage
    >>> report = lint_records([KernelUsage("k", "sm_90", registers=128, shared_mem=0, source="ptxas")],
    ...                       LintOptions())
    >>> report.kernels[0].result.occupancy
    0.25

Each kernel's analysis is `occupancy(arch, LaunchConfig)`: the figures come
from the build output (registers, static shared memory, barriers, spills,
stack frame, `__launch_bounds__`), the launch from the config, and the one
parser (`LaunchConfig.from_mapping`) validates them together. The rules read
everything they need from that LaunchConfig (`result.kernel`). Kernels with the
same LaunchConfig, architecture and config entries share one analysis: a
dictionary local to the run, keyed by those values.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, NamedTuple

from ...specs.names import UnknownArchError
from ...specs.resolve import resolve
from ..engine.occupancy import Occupancy, occupancy
from ..engine.whatif import bounds_register_cap
from ..inputs import InputError
from ..launch import LaunchConfig
from ..readers import demangle as names
from ..readers.compiler_output import KernelUsage, cuobjdump_reserved
from ..readers.demangle import kernel_names
from ..readers.source_index import SourceIndex
from ..readers.usage import SOURCE_SUFFIXES, InputProblem, ReadResult, read_text, read_usage
from ..rules import (
    ASSUMPTION_KEYS,
    BudgetLimits,
    Finding,
    LintContext,
    RegisterCap,
    config_findings,
    finding_of,
    finding_order,
    lint_findings,
    registry,
)
from ..rules.families.ta9_lint import no_launch_settings_message
from ..text import clip
from ..toolchain.settings import BuildSettings, BuildSetupError, with_line_info
from .host_launches import HostCode, block_origin, disagreement, run_time_text
from .kernel_caches import side_by_side, usage_launch
from .machine_code import with_machine_code
from .records import LintedKernel, LintOptions, worst_severity

if TYPE_CHECKING:  # the config model imports pydantic; a lint without a config file never does
    from .config import KernelEntry

DEFAULT_BLOCK = 256
COMPILED_SUFFIXES = (".cu", ".cuda")  # sources lint compiles when no build output is given (.cuh: included only)
# Whose figures win when sources disagree: the binary is what the driver loads.
SOURCE_PRIORITY = {"cubin": 0, "fatbin": 0, "ptxas": 1, "cuobjdump": 2, "config": 3}
NO_ARCH = "unknown"  # cuobjdump of a lone cubin prints no "arch =" line
HOST_LAUNCHES_VARIABLE = "TUNEADVISE_HOST_LAUNCHES"  # "off": compile without reading the host code's launches


@dataclass
class LintReport:
    kernels: list[LintedKernel] = field(default_factory=list)
    source_findings: list[Finding] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why some records were not linted
    ptx_only: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # config that applied to nothing
    config_path: str = ""  # the config used ("" for none)

    def all_findings(self):
        for kernel in self.kernels:
            for finding in kernel.findings:
                yield kernel, finding
        for finding in self.source_findings:
            yield None, finding


class _Analysis(NamedTuple):
    result: Occupancy
    findings: tuple[Finding, ...]
    rank: tuple  # the report's order: worst first, then lowest occupancy
    unconfigured: bool  # TA906 applies: said once for the run (run_findings), not on the kernel


NO_LAUNCH_SETTINGS = "TA906"  # said once per run, not on each kernel


def run_findings(unconfigured: dict[tuple[tuple[int, ...], str], int], run_time: list[str] = ()) -> list[Finding]:
    """The findings about the run as a whole: TA906 once, counting the kernels (by the block size
    assumed for them) that no [[kernels]] entry configures, and naming their launches that set the
    block at run time."""
    if not unconfigured:
        return []
    rule = registry()[NO_LAUNCH_SETTINGS]
    assumed = sorted(unconfigured)
    named = list(dict.fromkeys(run_time))
    message = no_launch_settings_message(assumed, sum(unconfigured.values()), named)
    details = {"kernels": sum(unconfigured.values()), "block_dims": [list(dims) for dims, _ in assumed],
               "block_from": [origin for _, origin in assumed]}
    if named:  # the launches in host code that set these kernels' block at run time
        details["run_time_launches"] = named
    return [finding_of(rule, message, "", details)]


def lint_records(records, options: LintOptions, sources: SourceIndex | None = None) -> LintReport:
    """Every kernel of `records` linted, in the report's order (worst first)."""
    report = LintReport(config_path=options.config_path)
    grouped = group_records(records, options, report)
    ranked = sorted(lint_stream(grouped, options, sources, report))
    report.kernels = side_by_side([entry[-1] for entry in ranked])
    return report


# (name, arch, variant) -> one kernel's records from every source: the record itself when there is
# one (most kernels: a list each would be a third of a large log's records again), else a list.
Grouped = dict


def _evidence(grouped_value) -> list[KernelUsage]:
    return grouped_value if isinstance(grouped_value, list) else [grouped_value]


def group_records(records, options: LintOptions, report: LintReport) -> Grouped:
    """The records of each kernel on each architecture linted (variants of a cache's kernel stay
    apart), and the kernels the config describes on its own; what cannot be linted goes to `report`."""
    archs = set(options.archs or options.config.arch)
    grouped: Grouped = {}
    no_arch: dict[str, int] = {}
    for record in records:
        if record.arch == NO_ARCH:
            if len(archs) != 1:
                no_arch[record.file or record.source] = no_arch.get(record.file or record.source, 0) + 1
                continue
            record = _with_arch(record, next(iter(archs)))
        if archs and record.arch not in archs:
            continue
        key = (record.name, record.arch, record.variant)
        known = grouped.get(key)
        if known is None:
            grouped[key] = record
        elif isinstance(known, list):
            known.append(record)
        else:
            grouped[key] = [known, record]
    for file, count in no_arch.items():
        report.problems.append(InputProblem(file, None, f"{count} kernel(s) in a cuobjdump listing that names no "
                                                        "architecture (a lone cubin's): give exactly one --arch"))
    config = options.config
    for entry in config.kernels:  # kernels the config describes on its own
        if entry.registers is None:
            continue
        for arch in entry.arch or sorted(archs):
            if (entry.name, arch, None) not in grouped:
                grouped[(entry.name, arch, None)] = _config_usage(entry, arch, options.config_path)
    if any(e.registers is not None and not (e.arch or archs) for e in config.kernels):
        report.skipped.append("config kernels with registers but no architecture: give arch in the entry, "
                              "the config or --arch")
    return grouped


DEMANGLED_AT_ONCE = 8192  # names demangled per batch: one bounded worker each, never every name of a log


def lint_stream(grouped: Grouped, options: LintOptions, sources: SourceIndex | None, report: LintReport,
                consume: bool = False):
    """(rank, name, arch, variant, LintedKernel) for each kernel of `grouped`, in its order, as
    each is linted; `consume`: each kernel's records are taken out of `grouped` once linted, so
    a caller that keeps less than the records holds less as the stream goes. The run's own
    problems, notes and findings are in `report` once the stream is exhausted."""
    linter = _Linter(options, sources)
    unknown: dict[str, int] = {}
    keys = list(grouped)
    for start in range(0, len(keys), DEMANGLED_AT_ONCE):
        batch = keys[start:start + DEMANGLED_AT_ONCE]
        linter.demangled = names.demangle_many(name for name, _, _ in batch)
        for key in batch:
            evidence = _evidence(grouped.pop(key) if consume else grouped[key])
            name, arch, variant = key
            try:
                resolved = resolve(arch)
            except UnknownArchError:
                unknown[arch] = unknown.get(arch, 0) + 1
                continue
            try:
                kernel, rank = linter.lint(name, arch, resolved, evidence)
            except InputError as exc:  # figures no architecture allows (a corrupt or hand-edited log)
                record = evidence[0]
                report.problems.append(InputProblem(record.file or record.source, record.line,
                                                    f"{name} on {arch}: {exc}"))
                continue
            yield rank, name, arch, variant or "", kernel  # unique before the kernel, which is never compared
    for arch, count in sorted(unknown.items()):
        report.skipped.append(f"{count} kernel(s) for {arch}, which no shipped spec describes")
    _run_notes(linter, options, report)


def _run_notes(linter: _Linter, options: LintOptions, report: LintReport) -> None:
    """What the run as a whole says: config entries that matched nothing, TA906 once, grid rules skipped."""
    for index, entry in enumerate(options.config.kernels):
        if index not in linter.matched and entry.registers is None:
            report.warnings.append(f"[[kernels]] entry {index + 1} (name = '{clip(entry.name, 80)}') matches no "
                                   "kernel: check the glob against the mangled, demangled or bare names")
    report.source_findings += run_findings(linter.unconfigured, linter.run_time)
    if linter.grid_without_sm_count:
        report.warnings.append(grid_rules_skipped(sorted(linter.grid_without_sm_count)))


def _with_arch(record: KernelUsage, arch: str) -> KernelUsage:
    """A record of a listing that named no architecture, on the one architecture linted."""
    shared = record.shared_mem
    if record.source == "cuobjdump":  # its SHARED could not be corrected without the arch
        shared = max(0, shared - cuobjdump_reserved(arch))
    return replace(record, arch=arch, shared_mem=shared)


def grid_rules_skipped(archs: list[str]) -> str:
    """Why the grid rules did not run, said once per run."""
    return (f"grid_size is set but the SM count of {', '.join(archs)} is unknown, so the grid rules (TA7xx) did "
            "not run: name a product (--arch h100-sxm), or give --sm-count or sm_count in the config")


def _config_usage(entry: KernelEntry, arch: str, file: str) -> KernelUsage:
    return KernelUsage(name=entry.name, arch=arch, registers=entry.registers, shared_mem=entry.shared_mem or 0,
                       barriers=entry.barriers, stack_frame=entry.stack_frame, spill_stores=entry.spill_stores,
                       spill_loads=entry.spill_loads, source="config", file=file or "config",
                       spills_from="config" if entry.spill_stores is not None else None)


def _reconcile(evidence: list[KernelUsage]) -> tuple[KernelUsage, tuple[str, ...]]:
    """The figures to use, and a sentence per disagreement between sources."""
    if len(evidence) == 1:
        return evidence[0], ()  # one source: its own figures, nothing to disagree with (the usual ptxas log)
    ordered = sorted(evidence, key=lambda r: SOURCE_PRIORITY.get(r.source, 9))
    chosen = ordered[0]
    # Stores and loads: one source's, ptxas's report before the machine code's reading (they agree).
    spills = next((r for r in ordered if r.spill_stores is not None and r.spills_from != "sass"), None) or \
        next((r for r in ordered if r.spill_stores is not None), chosen)
    missing = {name: next((v for v in (getattr(r, name) for r in ordered) if v is not None), None)
               for name in _FILLED if getattr(chosen, name) is None}
    missing["spills_from"] = spills.spill_origin
    usage = replace(chosen, spill_stores=spills.spill_stores, spill_loads=spills.spill_loads, **missing)
    disagreements = []
    for label, attribute in (("registers", "registers"), ("static shared memory", "shared_mem"),
                             ("stack frame", "stack_frame")):
        seen = [(r, getattr(r, attribute)) for r in ordered if getattr(r, attribute) is not None]
        if len({value for _, value in seen}) > 1:
            figures = ", ".join(f"{r.source} {value} ({_where(r)})" for r, value in seen)
            disagreements.append(f"{label}: {figures}; using {seen[0][0].source}'s")
    return usage, tuple(disagreements)


# What the winning source may lack and another give: every optional field (a reader's own too)
# but the spills, which come as a pair, and where the winning record stands.
_FILLED = tuple(f.name for f in fields(KernelUsage) if f.default is None
                and f.name not in ("spill_stores", "spill_loads", "line"))


def _where(record: KernelUsage) -> str:
    return f"{record.file}:{record.line}" if record.line else record.file or record.source


_NOTHING = frozenset()  # no suppressions


class _Linter:
    """Lints one kernel at a time. Kernels with the same LaunchConfig on the same architecture,
    under the same config entries and suppressions, share one analysis (`analyses`, keyed by
    those values): a code base has many kernels with the same figures."""

    def __init__(self, options: LintOptions, sources: SourceIndex | None):
        self.options = options
        self.sources = sources if sources is not None and sources.definitions else None  # none: nothing to look up
        self.analyses: dict[tuple, _Analysis] = {}
        self.configs: dict[tuple, LaunchConfig] = {}
        self.matched: set[int] = set()  # indexes of the [[kernels]] entries that matched a kernel
        self.demangled: dict[str, str] = {}  # name -> demangled name, for the names known up front
        # (block assumed, where it came from) -> kernels no entry configures (TA906)
        self.unconfigured: dict[tuple[tuple[int, ...], str], int] = {}
        self.grid_without_sm_count: set[str] = set()  # architectures of kernels whose grid rules could not run
        self.run_time: list[str] = []  # the run-time launches of the kernels TA906 counts, by site
        config = options.config
        self.default_dims = options.block_size or (tuple(config.block_size) if config.block_size else None)

    def lint(self, name, arch, resolved, evidence) -> tuple[LintedKernel, tuple]:
        """(the kernel's report entry, its rank in the report)."""
        config = self.options.config
        keys = kernel_names(name, self.demangled.get(name))
        usage, disagreements = _reconcile(evidence)
        entry_index = config.kernel_index(keys, arch) if config.kernels else None
        budget_index = config.budget_index(keys, arch) if config.budgets else None
        location, suppressed, bound = (usage.file, usage.line), _NOTHING, usage.max_threads
        definition = self.sources.lookup(keys[2]) if self.sources is not None else None
        if definition is not None:
            location, suppressed = (definition.file, definition.line), definition.suppressed
            if bound is None:  # the binary records __launch_bounds__; a log does not, the source does
                bound = definition.max_threads
        entry = None
        if entry_index is not None:
            self.matched.add(entry_index)
            entry = config.kernels[entry_index]
        launch = self._launch_config(usage, bound, entry_index, entry)
        differs = disagreement(entry.launch_values(), usage) if entry is not None else None
        disagreements += (differs,) if differs else ()
        if definition is not None and definition.max_registers is not None:  # what the register advice changes
            launch = launch._replace(register_control="__maxnreg__")
        elif usage.framework == "triton":
            launch = launch._replace(register_control="triton")
        cap = register_cap(resolved.arch, definition, usage.max_registers)
        previous = self.options.previous_registers.get((name, arch))
        extras = usage.reader_figures()
        key = (arch, launch, entry_index, budget_index, disagreements, suppressed, usage.source == "config", cap, previous,
               extras, bool(usage.launch))
        analysis = self.analyses.get(key)
        if analysis is None:
            budget = config.budgets[budget_index] if budget_index is not None else None
            analysis = self.analyses[key] = self._analyse(resolved, launch, usage, disagreements, entry, budget,
                                                          suppressed, cap, previous)
        if analysis.unconfigured:
            assumed = (launch.dims, self._block_origin(launch))
            self.unconfigured[assumed] = self.unconfigured.get(assumed, 0) + 1
            self.run_time += [f"{keys[1]}: {run_time_text(site)}" for site in usage.host_launches or ()]
        origin, site = block_origin(entry is not None and "block_size" in entry.launch_values(), usage,
                                    self._block_origin(launch))
        kernel = LintedKernel(name=name, demangled=keys[1], arch=arch, usage=usage, evidence=tuple(evidence),
                              launch=launch, configured_by=entry.name if entry else None, result=analysis.result,
                              findings=with_machine_code(analysis.findings, usage.sass), location=location,
                              launch_from=origin, launch_site=site)
        return kernel, analysis.rank

    def _launch_config(self, usage: KernelUsage, bound, entry_index, entry) -> LaunchConfig:
        """The figures from the build output and the launch from the config, through the one parser."""
        figures = (usage.arch, usage.registers, usage.shared_mem, usage.barriers, usage.spill_stores,
                   usage.spill_loads, usage.stack_frame, bound, entry_index, usage.launch)
        launch = self.configs.get(figures)
        if launch is None:
            values = usage_launch(usage)  # how a cache's framework launches it; the config may say otherwise
            values.update(entry.launch_values() if entry is not None else {})
            values.update(registers=usage.registers, shared_mem=usage.shared_mem, barriers=usage.barriers,
                          spill_stores=usage.spill_stores, spill_loads=usage.spill_loads,
                          stack_frame=usage.stack_frame)
            values.setdefault("max_threads_per_block", bound)
            if values.get("grid_size") is not None and values.get("sm_count") is None:
                values["sm_count"] = self.options.sm_count_for(usage.arch)
                if values["sm_count"] is None:
                    self.grid_without_sm_count.add(usage.arch)
            if values.get("block_size") is None:
                if self.default_dims is not None:
                    values["block_size"] = list(self.default_dims)
                else:  # no one said: the default block, or the kernel's own __launch_bounds__ if smaller
                    limit = values["max_threads_per_block"]
                    values["block_size"] = min(DEFAULT_BLOCK, limit) if limit else DEFAULT_BLOCK
            launch = self.configs[figures] = LaunchConfig.from_mapping(values)
        return launch

    def _block_origin(self, launch: LaunchConfig) -> str:
        """Where the assumed block came from when no launch was given (see _launch_config)."""
        if self.default_dims is not None:
            return "option"
        bound = launch.max_threads_per_block
        return "launch_bounds" if bound is not None and bound <= DEFAULT_BLOCK else "default"

    def _analyse(self, resolved, launch, usage, disagreements, entry, budget, suppressed, cap, previous) -> _Analysis:
        result = occupancy(resolved.arch, launch)
        findings = config_findings(resolved, result, self.options.selection)
        context = LintContext(result=result, budget=BudgetLimits.of(budget) if budget is not None else None,
                              minimum=_minimum(budget, entry, self.options), disagreements=disagreements,
                              launch_given=entry is not None or usage.source == "config" or bool(usage.launch), register_cap=cap,
                              previous_registers=previous, assumed_blocks=_assumed_blocks(entry),
                              block_origin=self._block_origin(launch),
                              reader_figures=usage.reader_figures())
        findings += lint_findings(context, self.options.selection)
        ignored = tuple(entry.ignore) if entry else ()
        findings = [f for f in findings if f.code not in suppressed and not f.code.startswith(ignored)]  # () matches nothing
        kept = [f for f in findings if f.code != NO_LAUNCH_SETTINGS]
        kept.sort(key=finding_order)
        return _Analysis(result, tuple(kept), (-worst_severity(kept), result.occupancy if result.launchable else -1),
                         len(kept) != len(findings))


def _minimum(budget, entry, options: LintOptions) -> float | None:
    """The min_occupancy that applies: the budget's, the [[kernels]] entry's, --min-occupancy's, the config's."""
    return next((m for m in (budget.min_occupancy if budget else None, entry.min_occupancy if entry else None,
                             options.min_occupancy, options.config.min_occupancy) if m is not None), None)


def _assumed_blocks(entry) -> tuple[tuple[str, int], ...]:
    """The host-side launch assumptions a [[kernels]] entry records: (key, blocks per SM)."""
    if entry is None:
        return ()
    return tuple((key, getattr(entry, key)) for key in ASSUMPTION_KEYS if getattr(entry, key) is not None)


def register_cap(arch, definition, max_registers: int | None) -> RegisterCap | None:
    """The register cap the build put on a kernel, and what set it: `__maxnreg__(N)`, else
    `__launch_bounds__(T, M)` (the most registers with which M blocks of T threads are resident),
    else the build's -maxrregcount, which the compiler ignores for a kernel with either attribute."""
    if definition is not None and definition.max_registers is not None:
        return RegisterCap(definition.max_registers, f"__maxnreg__({definition.max_registers})")
    if definition is not None and definition.max_threads is not None:
        blocks = definition.min_blocks or 1
        cap = min(bounds_register_cap(arch, definition.max_threads, blocks), arch.max_registers_per_thread)
        written = f"{definition.max_threads}, {definition.min_blocks}" if definition.min_blocks else str(definition.max_threads)
        return RegisterCap(cap, f"__launch_bounds__({written})")
    if max_registers is not None:
        return RegisterCap(max_registers, f"-maxrregcount={max_registers}")
    return None


def lint_paths(paths, options: LintOptions, stdin=None, build: BuildSettings | None = None) -> LintReport:
    """Lint build output files (and CUDA sources, for locations, suppressions, launch bounds
    and the source rules). '-' reads a ptxas log or cuobjdump listing from `stdin`.

    CUDA sources given with no build output are compiled for each architecture of the options
    (`-Xptxas -v`, with `build`'s flags), as are the `.cu` entries of `build.compile_commands`;
    a source the compiler rejects is one problem, and the rest are still linted. Raises
    toolchain.discovery.ToolchainMissing when there is something to compile and no compiler,
    BuildSetupError when no architecture is named."""
    from ..rules.source_scan import scan_lines

    gathered = gather(paths, options, stdin, build)
    report = lint_records(gathered.read.records, options, gathered.index)
    if gathered.compiled is not None:  # the suggested register caps, built
        from ..toolchain.cap_check import check_caps

        report.kernels = check_caps(report.kernels, gathered.compiled[1], gathered.compiled[0])
    report.kernels += gathered.profiled
    report.problems = gathered.read.problems + report.problems
    report.ptx_only = gathered.read.ptx_only
    report.warnings += gathered.unread
    if gathered.sources:
        # Every architecture the sources are built for: a rule flags what breaks on any of them.
        targets = [k.result.arch for k in report.kernels] or \
            [resolve(a).arch for a in (options.archs or options.config.arch)]
        for source in gathered.sources:
            report.source_findings += scan_lines(source.lines, source.has_syncwarp, source.path, targets,
                                                 options.selection)
    return report


class Gathered(NamedTuple):
    """What lint reads from its inputs: the kernel records (and the inputs' problems), the source
    index and the CUDA sources read."""

    read: ReadResult
    index: SourceIndex
    sources: list[SourceText]
    profiled: list  # kernel entries of profiled launches (advisor/lint/profiled.py), each analysed on its own
    compiled: tuple | None = None  # (the Compiler, {(source as shown, arch): its Build}) where lint compiled
    # Warnings: a sentence per cubin whose machine code nvdisasm could not read, per launch in host code
    # set at run time of a kernel checked at its other launches, and where host code was not read.
    unread: list | tuple = ()


def gather(paths, options: LintOptions, stdin=None, build: BuildSettings | None = None) -> Gathered:
    """Read (and, for CUDA sources with no build output, compile) lint's inputs: lint_paths's
    first half, for a caller that lints the records its own way (diff)."""
    from .kernel_caches import read_directory
    from .machine_code import machine_code_reader

    paths = [str(path) for path in paths]
    build_output = any(path == "-" or not path.lower().endswith(SOURCE_SUFFIXES) for path in paths)
    compile_sources = [] if build_output else [p for p in paths if p.lower().endswith(COMPILED_SUFFIXES)]
    if compile_sources and not (options.archs or options.config.arch):  # before reading anything
        raise BuildSetupError("--arch: needed to compile CUDA sources; name the targets (sm_80, sm_90, ...)")
    from .profiled import lint_profile, profile_path

    machine_code = machine_code_reader(options.machine_code)
    gathered = Gathered(ReadResult(), SourceIndex(), [], [], None,
                        machine_code.unread if machine_code is not None else ())
    read = gathered.read
    for path in paths:
        if path == "-":
            read_text(stdin, "<stdin>", read)
        elif path.lower().endswith(SOURCE_SUFFIXES):
            _read_source(path, read, gathered.index, gathered.sources, compiled=path in compile_sources)
        elif profile_path(path):
            kernels, problems = lint_profile(path, options)
            gathered.profiled.extend(kernels)
            read.problems += problems
        else:
            one = read_directory(path, machine_code) if os.path.isdir(path) else read_usage(path, machine_code)
            read.records += one.records
            read.problems += one.problems
            read.ptx_only += [f"{path}: {arch}" for arch in one.ptx_only]
    readable = {source.path for source in gathered.sources}
    compile_sources = [path for path in compile_sources if path in readable]
    if compile_sources or (build is not None and build.compile_commands):
        compiler, built, notes = _compile_into(compile_sources, options, build or BuildSettings(), read,
                                               gathered.index, gathered.sources, machine_code)
        return gathered._replace(compiled=(compiler, built), unread=[*gathered.unread, *notes])
    return gathered


def _read_source(path: str, gathered, index: SourceIndex, source_texts: list, compiled: bool = False) -> bool:
    """Read a source into the index; False (and a problem) when it cannot be read, or compiled."""
    from ...specs.files import MAX_SOURCE_BYTES, read_bounded, read_source_to_compile
    from ..rules.source_scan import strip_comments

    try:
        read = read_source_to_compile if compiled else read_bounded
        text = read(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        gathered.problems.append(InputProblem(path, None, f"cannot read: {exc.strerror}"))
        return False
    source = SourceText(path, strip_comments(text), "__syncwarp" in text)  # tokenized once: index and source rules
    index.add_lines(path, source.lines)
    source_texts.append(source)
    return True


class SourceText(NamedTuple):
    """A CUDA source read for lint: its lines as strip_comments gives them, read by the source
    index and the source rules alike."""

    path: str
    lines: list[tuple[str, str]]
    has_syncwarp: bool


def _shown_path(path: str) -> str:
    """A compile-commands source as a path relative to the working directory, when it is under it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _compile_into(sources, options: LintOptions, settings: BuildSettings, gathered, index, source_texts,
                  machine_code=None):
    """Compile `sources` (and the compile commands' entries) for each architecture, with line
    info (-lineinfo: machine code by source line; ptxas emits the same code); add what ptxas
    reports to `gathered` (with each build's machine code where `machine_code` is given), and
    each compile-commands source to the index. Returns the compiler and {(source as shown, arch):
    its Build} of the builds that succeeded."""
    from ..toolchain.compile import Build, Compiler
    from ..toolchain.compile_commands import CompileCommandsError, load_builds
    from ..toolchain.discovery import find_toolchain

    archs = tuple(options.archs or options.config.arch)
    builds = []
    if sources:
        builds += [Build(os.path.abspath(path), arch, with_line_info(settings.flags), settings.max_registers)
                   for path in sources for arch in archs]
    if settings.compile_commands:
        try:
            entries, problems = load_builds(settings.compile_commands, archs)
        except CompileCommandsError as exc:
            raise BuildSetupError(str(exc)) from None
        gathered.problems += [InputProblem(settings.compile_commands, None, p) for p in problems]
        known = {os.path.abspath(source.path) for source in source_texts}
        unreadable = {source for source in dict.fromkeys(b.source for b in entries)
                      if source not in known and not _read_source(_shown_path(source), gathered, index, source_texts,
                                                                  compiled=True)}
        # The command line's flags come after the entry's: its -maxrregcount, like theirs, wins.
        builds += [b._replace(flags=with_line_info(b.flags + settings.flags),
                              max_registers=b.max_registers if settings.max_registers is None else settings.max_registers)
                   for b in entries if b.source not in unreadable]
    host = HostCode(_shown_path, enabled=os.environ.get(HOST_LAUNCHES_VARIABLE, "").lower() != "off")
    builds += host.builds(builds)
    shown = {os.path.abspath(path): path for path in sources}  # name sources as the user did
    compiler, built = Compiler(find_toolchain(), settings, keep_cubins=machine_code is not None), {}
    for result in compiler.run(builds):
        build = result.build
        where = shown.get(build.source) or _shown_path(build.source)
        if host.took(result, where):
            continue
        if result.error is not None:
            gathered.problems.append(InputProblem(where, None, f"{build.arch}: the compiler failed: {result.error}"))
            host.rejected.add(where)  # said once, by the device build: its host half says nothing more
            continue
        built[(where, build.arch)] = build
        records = result.usage(where)  # each record carries its build's -maxrregcount
        if machine_code is not None and result.cubin is not None and records:
            records = machine_code(result.cubin, records)
        host.add(where, records)
    records, notes = host.joined()
    gathered.records += records
    return compiler, built, notes
