"""lint's analysis: the records gather.py read (build output, caches, compiled
sources, profiled launches) grouped by kernel, architecture and variant,
reconciled, joined with launch settings from the config, run through the engine
and the rules, with budgets, per-kernel ignores and source suppressions applied,
and ranked in one order (profiled launches included). `lint_paths` is the whole
of lint: gather, then this analysis.

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

import itertools
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, NamedTuple

from ...specs.names import UnknownArchError
from ...specs.records import Resolved
from ...specs.resolve import resolve
from ..engine.occupancy import Occupancy, occupancy
from ..engine.whatif import bounds_register_cap
from ..inputs import InputError
from ..launch import LaunchConfig
from ..measured import as_programmed, profiled_findings
from ..readers import demangle as names
from ..readers.compiler_output import KernelUsage, cuobjdump_reserved
from ..readers.demangle import kernel_names
from ..readers.source_index import SourceIndex
from ..readers.usage import InputProblem
from ..rules import (
    ASSUMPTION_KEYS,
    BudgetLimits,
    Finding,
    LintContext,
    RegisterCap,
    config_findings,
    finding_order,
    lint_findings,
    run_findings,
    said_per_run,
    with_machine_code,
)
from ..rules.lint_facts import Disagreement, Reading, RunTimeLaunch
from ..text import clip
from ..toolchain.settings import BuildSettings
from .host_launches import block_origin, disagreement, site_text
from .profiled import measured_document, with_library_control, with_profile
from .records import LintedKernel, LintOptions, worst_severity

if TYPE_CHECKING:  # the config model imports pydantic; a lint without a config file never does
    from .config import KernelEntry

DEFAULT_BLOCK = 256
# Whose figures win when sources disagree: the binary is what the driver loads.
SOURCE_PRIORITY = {"cubin": 0, "fatbin": 0, "ptxas": 1, "cuobjdump": 2, "config": 3}
NO_ARCH = "unknown"  # cuobjdump of a lone cubin prints no "arch =" line


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
    per_run: tuple  # (code, details as items) of its findings said once for the run (rules.run_findings)


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
    archs = set(options.target_archs)
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


# Analyses and launch configurations kept for kernels with the same figures: enough for every
# distinct configuration of a real code base, and a bound on a stream of ever-new ones (diff's store).
MAX_SHARED_ANALYSES = 16384
DEMANGLED_AT_ONCE = 8192  # names demangled per batch: one bounded worker each, never every name of a log


def lint_stream(grouped: Grouped, options: LintOptions, sources: SourceIndex | None, report: LintReport,
                consume: bool = False):
    """(rank, name, arch, variant, LintedKernel) for each kernel of `grouped`, in its order, as
    each is linted; `consume`: each kernel's records are taken out of `grouped` once linted, so
    a caller that keeps less than the records holds less as the stream goes. The run's own
    problems, notes and findings are in `report` once the stream is exhausted."""
    pairs = ((key, grouped.pop(key) if consume else grouped[key]) for key in list(grouped))
    yield from lint_groups(pairs, options, sources, report)


def lint_groups(pairs, options: LintOptions, sources: SourceIndex | None, report: LintReport):
    """lint_stream over ((name, arch, variant), records) pairs from any iterable (diff's on-disk
    spool among them), read a batch of DEMANGLED_AT_ONCE kernels at a time."""
    linter = _Linter(options, sources)
    unknown: dict[str, int] = {}
    pairs = iter(pairs)
    while batch := list(itertools.islice(pairs, DEMANGLED_AT_ONCE)):
        linter.demangled = names.demangle_many(name for (name, _, _), _ in batch)
        for key, grouped_value in batch:
            evidence = _evidence(grouped_value)
            name, arch, variant = key
            try:
                resolved = resolve(arch)
            except UnknownArchError:
                unknown[arch] = unknown.get(arch, 0) + 1
                continue
            try:
                kernel, rank = linter.lint(name, arch, resolved, evidence)
            except InputError as exc:  # figures no architecture allows (a corrupt or hand-edited log, a launch)
                report.problems.append(_refused(evidence[0], name, arch, exc))
                continue
            yield rank, name, arch, variant or "", kernel  # unique before the kernel, which is never compared
    for arch, count in sorted(unknown.items()):
        report.skipped.append(f"{count} kernel(s) for {arch}, which no shipped spec describes")
    _run_notes(linter, options, report)


def _refused(record: KernelUsage, name: str, arch: str, exc: InputError) -> InputProblem:
    """The problem of a kernel whose figures the parser refuses, where they come from: the host
    launch that gave them (`k<<<1, 2048>>>`: its file, line and column), else the record's own line."""
    site = record.host_launches[0] if record.launch and record.host_launches else None
    if site is not None:
        return InputProblem(site.file, site.line, f"{name} on {arch}, launched here (column {site.column}): {exc}")
    return InputProblem(record.file or record.source, record.line, f"{name} on {arch}: {exc}")


def _run_notes(linter: _Linter, options: LintOptions, report: LintReport) -> None:
    """What the run as a whole says: config entries that matched nothing, TA906 once, grid rules skipped."""
    for index, entry in enumerate(options.config.kernels):
        if index not in linter.matched and entry.registers is None:
            report.warnings.append(f"[[kernels]] entry {index + 1} (name = '{clip(entry.name, 80)}') matches no "
                                   "kernel: check the glob against the mangled, demangled or bare names")
    # Said once for the run, each points at the config, else the first input it was said of: code
    # scanning drops a SARIF result without a location.
    where = {"file": options.config_path or linter.per_run_file} if options.config_path or linter.per_run_file else {}
    report.source_findings += [f._replace(details={**f.details, **where}) for f in run_findings(linter.per_run)]
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


def _reconcile(evidence: list[KernelUsage]) -> tuple[KernelUsage, tuple[Disagreement, ...]]:
    """The figures to use, and each figure the sources disagree on (TA905 words them)."""
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
            disagreements.append(Disagreement(label, tuple(Reading(r.source, str(value), _where(r)) for r, value in seen)))
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
        # (code, details as items) of a finding said once for the run (TA906) -> kernels that had it
        self.per_run: dict[tuple[str, tuple], int] = {}
        self.per_run_file = ""  # the input the first kernel with such a finding came from
        self.grid_without_sm_count: set[str] = set()  # architectures of kernels whose grid rules could not run
        config = options.config
        self.default_dims = options.block_size or (tuple(config.block_size) if config.block_size else None)

    def lint(self, name, arch, resolved, evidence) -> tuple[LintedKernel, tuple]:
        """(the kernel's report entry, its rank in the report)."""
        if evidence[0].measured is not None:
            return self._lint_measured(evidence[0])
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
        run_time = tuple(RunTimeLaunch(keys[1], site_text(site), site.run_time) for site in usage.host_launches or ()
                         if not usage.launch)  # launches in host code that set the block at run time (TA906)
        key = (arch, launch, entry_index, budget_index, disagreements, suppressed, usage.source == "config", cap, previous,
               extras, bool(usage.launch), run_time)
        analysis = self.analyses.get(key)
        if analysis is None:
            budget = config.budgets[budget_index] if budget_index is not None else None
            if len(self.analyses) >= MAX_SHARED_ANALYSES:  # bounded: a log of all-distinct figures shares none
                self.analyses.clear()
            analysis = self.analyses[key] = self._analyse(resolved, launch, usage, disagreements, entry, budget,
                                                          suppressed, cap, previous, run_time)
        self._count_per_run(analysis.per_run, location[0])
        origin, site = block_origin(entry is not None and "block_size" in entry.launch_values(), usage,
                                    self._block_origin(launch))
        kernel = LintedKernel(name=name, demangled=keys[1], arch=arch, usage=usage, evidence=tuple(evidence),
                              launch=launch, configured_by=entry.name if entry else None, result=analysis.result,
                              findings=with_machine_code(analysis.findings, usage.sass), location=location,
                              launch_from=origin, launch_site=site)
        return kernel, analysis.rank

    def _count_per_run(self, said: list, file: str | None) -> None:
        """Tally the findings said once for the run, and remember the first input that gave one (where
        the run's finding points when no config file is given)."""
        for key in said:
            self.per_run[key] = self.per_run.get(key, 0) + 1
            self.per_run_file = self.per_run_file or file or ""

    def _lint_measured(self, usage: KernelUsage) -> tuple[LintedKernel, tuple]:
        """A profiled launch, analysed on its own as it ran: the engine on the launch the report
        gives (no config entry, budget or assumed block applies), the config rules that apply to
        a launch that ran, and the TA0xx rules on the report beside the engine."""
        measured = usage.measured
        result = with_library_control(usage.name, measured.result)
        # The configuration rules' what-ifs start from the program's carveout preference, not the
        # configuration the driver chose (as_programmed); TA702 counts the report's resident clusters.
        clusters = int(measured.report.get("max_active_clusters") or 0) or None
        programmed = with_library_control(usage.name, as_programmed(measured))
        findings = config_findings(Resolved(measured.arch), programmed, self.options.selection,
                                   measured=True, active_clusters=clusters)
        findings += profiled_findings(measured, self.options.selection, self.options.config.min_achieved_occupancy)
        self._count_per_run([(f.code, _hashable(f.details)) for f in findings if said_per_run(f)], usage.file)  # TA008
        document = measured_document(measured)
        findings = with_profile([f for f in findings if not said_per_run(f)], document)
        findings.sort(key=finding_order)
        kernel = LintedKernel(name=usage.name, demangled=usage.name, arch=usage.arch, usage=usage, evidence=(usage,),
                              launch=result.kernel, configured_by=None, result=result, findings=tuple(findings),
                              location=(usage.file, usage.line), measured=document)
        return kernel, (-worst_severity(findings), result.occupancy if result.launchable else -1)

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
            if len(self.configs) >= MAX_SHARED_ANALYSES:
                self.configs.clear()
            launch = self.configs[figures] = LaunchConfig.from_mapping(values)
        return launch

    def _block_origin(self, launch: LaunchConfig) -> str:
        """Where the assumed block came from when no launch was given (see _launch_config)."""
        if self.default_dims is not None:
            return "option"
        bound = launch.max_threads_per_block
        return "launch_bounds" if bound is not None and bound <= DEFAULT_BLOCK else "default"

    def _analyse(self, resolved, launch, usage, disagreements, entry, budget, suppressed, cap, previous,
                 run_time=()) -> _Analysis:
        result = occupancy(resolved.arch, launch)
        findings = config_findings(resolved, result, self.options.selection)
        context = LintContext(result=result, budget=BudgetLimits.of(budget) if budget is not None else None,
                              minimum=_minimum(budget, entry, self.options), disagreements=disagreements,
                              launch_given=entry is not None or usage.source == "config" or bool(usage.launch), register_cap=cap,
                              previous_registers=previous, assumed_blocks=_assumed_blocks(entry),
                              block_origin=self._block_origin(launch), run_time_launches=run_time,
                              reader_figures=usage.reader_figures())
        findings += lint_findings(context, self.options.selection)
        ignored = tuple(entry.ignore) if entry else ()
        findings = [f for f in findings if f.code not in suppressed and not f.code.startswith(ignored)]  # () matches nothing
        kept = [f for f in findings if not said_per_run(f)]
        kept.sort(key=finding_order)
        per_run = tuple((f.code, _hashable(f.details)) for f in findings if said_per_run(f))
        return _Analysis(result, tuple(kept), (-worst_severity(kept), result.occupancy if result.launchable else -1),
                         per_run)


def _hashable(details: dict) -> tuple:
    """A finding's details as sorted items, lists as tuples: a key to count kernels by."""
    return tuple(sorted((key, tuple(value) if isinstance(value, list) else value) for key, value in details.items()))


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
    from .gather import gather

    gathered = gather(paths, options, stdin, build)
    report = lint_records(gathered.read.records, options, gathered.index)
    if gathered.compiled is not None:  # the suggested register caps, built
        from ..toolchain.cap_check import check_caps

        report.kernels = check_caps(report.kernels, gathered.compiled[1], gathered.compiled[0])
    report.problems = gathered.read.problems + report.problems
    report.ptx_only = gathered.read.ptx_only
    report.warnings += gathered.unread
    if gathered.sources:
        # Every architecture the sources are built for: a rule flags what breaks on any of them.
        targets = [k.result.arch for k in report.kernels] or \
            [resolve(a).arch for a in options.target_archs]
        for source in gathered.sources:
            report.source_findings += scan_lines(source.lines, source.has_syncwarp, source.path, targets,
                                                 options.selection)
    return report


def side_by_side(kernels: list) -> list:
    """Lint's report order (worst first), with the variants of one kernel gathered where the
    first of them stands and ordered best first: launchable, most occupancy, least local memory."""
    groups: dict[tuple[str, str], list] = {}
    for kernel in kernels:
        if kernel.usage.variant is not None:
            groups.setdefault((kernel.name, kernel.arch), []).append(kernel)
    if not groups:
        return kernels
    for members in groups.values():
        members.sort(key=_best_first)
    out, placed = [], set()
    for kernel in kernels:
        key = (kernel.name, kernel.arch)
        if kernel.usage.variant is None:
            out.append(kernel)
        elif key not in placed:
            placed.add(key)
            out += groups[key]
    return out


def _best_first(kernel) -> tuple:
    result = kernel.result
    return (not result.launchable, -result.occupancy if result.launchable else 0,
            kernel.usage.stack_frame or 0, kernel.usage.variant or "")


def usage_launch(usage: KernelUsage) -> dict:
    """The launch a cache entry's framework makes, as LaunchConfig keys ({} for other records)."""
    return dict(usage.launch) if usage.launch else {}
