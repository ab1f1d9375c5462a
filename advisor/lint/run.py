"""`lint` as a library: join resource usage read from build output with launch
settings from the config, run the engine and the rules on each kernel and
architecture, and apply budgets, per-kernel ignores and source suppressions.

    >>> from tuneadvise.advisor.lint.run import LintOptions, lint_records
    >>> from tuneadvise.advisor.readers.compiler_output import KernelUsage, cuobjdump_reserved
    >>> report = lint_records([KernelUsage("k", "sm_90", registers=128, shared_mem=0, source="ptxas")],
    ...                       LintOptions())
    >>> report.kernels[0].result.occupancy
    0.25
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from tuneadvise.advisor.engine.occupancy import Occupancy, occupancy
from tuneadvise.advisor.inputs import InputError
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.lint.settings import NO_CONFIG
from tuneadvise.advisor.readers import demangle as names
from tuneadvise.advisor.readers.compiler_output import KernelUsage, cuobjdump_reserved
from tuneadvise.advisor.readers.source_index import SourceIndex
from tuneadvise.advisor.readers.usage import InputProblem
from tuneadvise.advisor.rules import (
    SEVERITY_RANK,
    Finding,
    RuleSelection,
    checks_reading,
    config_findings,
    finding_of,
    finding_order,
    registry,
)
from tuneadvise.specs.catalog import UnknownArchError, shipped_catalog

if TYPE_CHECKING:  # the config model imports pydantic; a lint without a config file never does
    from tuneadvise.advisor.lint.config import Budget, KernelEntry, LintConfig
    from tuneadvise.advisor.lint.settings import NoConfig

DEFAULT_BLOCK = (256,)
# Whose figures win when sources disagree: the binary is what the driver loads.
SOURCE_PRIORITY = {"cubin": 0, "fatbin": 0, "ptxas": 1, "cuobjdump": 2, "config": 3}


@dataclass
class LintOptions:
    config: LintConfig | NoConfig = NO_CONFIG
    archs: tuple[str, ...] = ()  # sm_XX; empty: every architecture the inputs hold
    block_size: tuple[int, ...] | None = None  # --block-size; else config's; else 256
    selection: RuleSelection = field(default_factory=RuleSelection)
    fail_on: str = "error"
    min_occupancy: float | None = None  # --min-occupancy; else config's
    config_path: str = ""  # where the config came from, for annotations of config-only kernels


@dataclass(slots=True)
class LintedKernel:
    name: str  # as the compiler wrote it
    demangled: str
    arch: str
    usage: KernelUsage  # the figures used (the winning source's, spills from ptxas)
    evidence: list[KernelUsage]
    launch: dict
    result: Occupancy
    findings: list[Finding]
    location: tuple[str, int | None]

    @property
    def worst(self) -> int:
        return worst_severity(self.findings)


def worst_severity(findings) -> int:
    """SEVERITY_RANK of the most severe finding; -1 for none."""
    return max((SEVERITY_RANK[f.severity] for f in findings), default=-1)


@dataclass
class LintReport:
    kernels: list[LintedKernel] = field(default_factory=list)
    source_findings: list[Finding] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why some records were not linted
    ptx_only: list[str] = field(default_factory=list)

    def all_findings(self):
        for kernel in self.kernels:
            for finding in kernel.findings:
                yield kernel, finding
        for finding in self.source_findings:
            yield None, finding


def lint_records(records, options: LintOptions, sources: SourceIndex | None = None) -> LintReport:
    report = LintReport()
    config = options.config
    archs = set(options.archs or config.arch)
    grouped: dict[tuple[str, str], list[KernelUsage]] = {}
    no_arch = 0
    for record in records:
        if record.arch == "unknown":  # cuobjdump of a lone cubin prints no "arch =" line
            if len(archs) != 1:
                no_arch += 1
                continue
            record.arch = next(iter(archs))
            if record.source == "cuobjdump":  # its SHARED could not be corrected without the arch
                record.shared_mem = max(0, record.shared_mem - cuobjdump_reserved(record.arch))
        if archs and record.arch not in archs:
            continue
        key = (record.name, record.arch)
        known = grouped.get(key)
        if known is None:
            grouped[key] = [record]
        else:
            known.append(record)
    for entry in config.kernels:  # kernels the config describes on its own
        if entry.registers is None:
            continue
        for arch in entry.arch or sorted(archs):
            if (entry.name, arch) not in grouped:
                grouped[(entry.name, arch)] = [_config_usage(entry, arch, options.config_path)]
    if any(e.registers is not None and not (e.arch or archs) for e in config.kernels):
        report.skipped.append("config kernels with registers but no architecture: give arch in the entry, "
                              "the config or --arch")
    if no_arch:
        report.skipped.append(f"{no_arch} kernel(s) from a cuobjdump listing that names no architecture: "
                              "give exactly one --arch")
    linter = _Linter(options, sources)
    ranked = []  # (rank, name, arch, LintedKernel): (name, arch) is unique, so kernels are never compared
    unknown: dict[str, int] = {}
    for (name, arch), evidence in grouped.items():
        try:
            resolved = _resolve(arch)
        except UnknownArchError:
            unknown[arch] = unknown.get(arch, 0) + 1
            continue
        try:
            kernel, rank = linter.lint(name, arch, resolved, evidence)
            ranked.append((rank, name, arch, kernel))
        except InputError as exc:  # figures no architecture allows (a corrupt or hand-edited log)
            record = evidence[0]
            report.problems.append(InputProblem(record.file or record.source, record.line,
                                                f"{name} on {arch}: {exc}"))
    for arch, count in sorted(unknown.items()):
        report.skipped.append(f"{count} kernel(s) for {arch}, which no shipped spec describes")
    # Worst first, then lowest occupancy (the rank computed once per shared analysis).
    ranked.sort()
    report.kernels = [entry[3] for entry in ranked]
    return report


@lru_cache(maxsize=256)
def _resolve(arch: str):
    return shipped_catalog().resolve(arch)


def _config_usage(entry: KernelEntry, arch: str, file: str) -> KernelUsage:
    return KernelUsage(name=entry.name, arch=arch, registers=entry.registers, shared_mem=entry.shared_mem or 0,
                       barriers=entry.barriers, spill_stores=entry.spill_bytes, spill_loads=0 if entry.spill_bytes
                       is not None else None, source="config", file=file or "config")


def _reconcile(evidence: list[KernelUsage]) -> tuple[KernelUsage, tuple[str, ...]]:
    """The figures to use, and a sentence per disagreement between sources."""
    if len(evidence) == 1 and (evidence[0].spill_stores is not None or evidence[0].spill_loads is None):
        return evidence[0], ()  # one source: its own figures, nothing to disagree with (the usual ptxas log)
    ordered = sorted(evidence, key=lambda r: SOURCE_PRIORITY.get(r.source, 9))
    chosen = ordered[0]
    spills = next((r for r in ordered if r.spill_stores is not None), None)
    barriers = next((r.barriers for r in ordered if r.barriers is not None), None)
    stack = next((r.stack_frame for r in ordered if r.stack_frame is not None), None)
    bounds = next((r.max_threads for r in ordered if r.max_threads is not None), None)
    usage = KernelUsage(name=chosen.name, arch=chosen.arch, registers=chosen.registers, shared_mem=chosen.shared_mem,
                        barriers=barriers, stack_frame=stack,
                        spill_stores=spills.spill_stores if spills else None,
                        spill_loads=spills.spill_loads if spills else None,
                        source=chosen.source, line=chosen.line, file=chosen.file, max_threads=bounds)
    disagreements = []
    for label, attribute in (("registers", "registers"), ("static shared memory", "shared_mem"),
                             ("stack frame", "stack_frame")):
        seen = [(r, getattr(r, attribute)) for r in ordered if getattr(r, attribute) is not None]
        if len({value for _, value in seen}) > 1:
            figures = ", ".join(f"{r.source} {value} ({_where(r)})" for r, value in seen)
            disagreements.append(f"{label}: {figures}; using {seen[0][0].source}'s")
    return usage, tuple(disagreements)


def _where(record: KernelUsage) -> str:
    return f"{record.file}:{record.line}" if record.line else record.file or record.source


def _launch(entry: KernelEntry | None, options: LintOptions, launch_bound: int | None) -> dict:
    config = options.config
    dims = tuple(entry.block_size) if entry and entry.block_size else \
        options.block_size or (tuple(config.block_size) if config.block_size else None)
    if dims is None:
        # No one said: the default block, or the kernel's own __launch_bounds__ if smaller.
        dims = (min(DEFAULT_BLOCK[0], launch_bound),) if launch_bound else DEFAULT_BLOCK
    return {
        "block_dims": dims,
        "dynamic_shared_mem": (entry.dynamic_shared_mem if entry else None) or 0,
        "carveout": (entry.carveout if entry else None) or "default",
        "opt_in": bool(entry and entry.opt_in),
        "grid_size": entry.grid_size if entry else None,
        "cluster_size": entry.cluster_size() if entry else None,
        "max_threads_per_block": entry.max_threads_per_block if entry else None,
        "configured_by": entry.name if entry else None,
    }


@lru_cache(maxsize=65536)
def _names(name: str) -> tuple[str, str, str]:
    """(as written, demangled, base name): what config globs and source definitions match."""
    demangled = names.demangle(name)
    return name, demangled, names.base_name(demangled)


SPILL_BUDGET = "TA902"  # lint's own rule that reads spills
_NOTHING = frozenset()  # no suppressions


class _Linter:
    """Lints one kernel at a time, computing each distinct launch, configuration and spill
    figure once: a code base has many kernels with the same figures.

    Two levels: a configuration (figures and launch, spills apart) gets its occupancy result
    and the findings of every rule that does not read spills; then each spill figure on top of
    it the rules that do (the checks that declare spill_bytes, and the spill budget), and the
    ignores and suppressions. Kernels that differ only in their spills share the result and
    most findings. tests/test_lint.py holds every kernel's findings equal to a lint of it alone.
    """

    def __init__(self, options: LintOptions, sources: SourceIndex | None):
        self.options = options
        self.sources = sources if sources is not None and sources.definitions else None  # none: nothing to look up
        self.launches: dict = {}  # (id(entry), __launch_bounds__) -> launch settings, one dict each
        self.configurations: dict = {}  # figures and launch -> (result, findings that read no spills)
        self.analyses: dict = {}  # that, plus spills and suppressions -> (result, findings, rank)
        selection = options.selection
        reading = checks_reading("spill_bytes")
        self.without_spills = selection._replace(ignore=selection.ignore + reading)
        allowed = tuple(code for code in reading if selection.allows(code))
        # An empty select means every rule, so no allowed spill rule means no second-level checks at all.
        self.spill_checks = RuleSelection(select=allowed) if allowed else None
        self.spill_budget = selection.allows(SPILL_BUDGET)

    def lint(self, name, arch, resolved, evidence) -> tuple[LintedKernel, tuple]:
        """(the kernel's report entry, its rank in the report)."""
        config = self.options.config
        keys = _names(name)
        usage, disagreements = _reconcile(evidence)
        entry = config.kernel_entry(keys, arch) if config.kernels else None
        budget = config.budget(keys, arch) if config.budgets else None
        location, suppressed = (usage.file, usage.line), _NOTHING
        if self.sources is not None:
            definition = self.sources.lookup(keys[2])
            if definition is not None:
                location, suppressed = (definition.file, definition.line), frozenset(definition.suppressed)
        # One dict per distinct launch, shared: the JSON writer encodes each once.
        launch_key = (id(entry), usage.max_threads)
        launch = self.launches.get(launch_key) or \
            self.launches.setdefault(launch_key, _launch(entry, self.options, usage.max_threads))
        # Everything but the spills that the result and the findings depend on.
        configuration = (arch, usage.registers, usage.shared_mem, usage.barriers, usage.max_threads,
                         usage.source == "config", disagreements, id(entry), id(budget))
        key = (configuration, usage.spill_bytes, suppressed)
        shared = self.analyses.get(key)
        if shared is None:
            base = self.configurations.get(configuration)
            if base is None:
                base = self.configurations[configuration] = self._configuration(
                    resolved, usage, disagreements, entry, budget, launch)
            shared = self.analyses[key] = self._with_spills(resolved, usage, base, entry, budget, launch, suppressed)
        result, findings, rank = shared
        return LintedKernel(name, keys[1], arch, usage, evidence, launch, result, findings, location), rank

    def _configuration(self, resolved, usage, disagreements, entry, budget, launch) -> tuple:
        """(occupancy result, the findings of every rule that does not read spills) for one kernel's
        figures and launch."""
        barriers = usage.barriers if usage.barriers is not None else 1
        kernel = LaunchConfig.from_mapping({
            "registers": usage.registers, "block_size": list(launch["block_dims"]), "shared_mem": usage.shared_mem,
            "dynamic_shared_mem": launch["dynamic_shared_mem"], "carveout": launch["carveout"],
            "opt_in": launch["opt_in"], "barriers": barriers,
            "max_threads_per_block": launch["max_threads_per_block"] or usage.max_threads})
        dims = kernel.dims
        result = occupancy(resolved.arch, kernel)
        findings = config_findings(resolved, result, self.without_spills, _context(launch, dims, None))
        findings += _lint_findings(usage, result, disagreements, entry, budget, launch, self.options)
        return result, findings

    def _with_spills(self, resolved, usage, base, entry, budget, launch, suppressed) -> tuple:
        """(result, findings worst first, the report's sort rank): the configuration's findings, those
        of the rules that read spills, then ignores and suppressions applied."""
        result, findings = base
        spills = usage.spill_bytes
        if self.spill_checks is not None:
            dims = tuple(launch["block_dims"])
            findings = findings + config_findings(resolved, result, self.spill_checks, _context(launch, dims, spills))
        if self.spill_budget and budget is not None:
            limit = budget.spill_limit()
            if limit is not None and spills is not None and spills > limit:
                findings = findings + [_finding(SPILL_BUDGET, f"{spills} B of spills per thread, budget {limit} B "
                                                              f"(budget '{budget.kernel}')",
                                                usage.arch, {"spill_bytes": spills, "budget": limit})]
        ignored = tuple(entry.ignore) if entry else ()
        findings = [f for f in findings if f.code not in suppressed and not f.code.startswith(ignored)]  # () matches nothing
        findings.sort(key=finding_order)
        return result, findings, (-worst_severity(findings), result.occupancy if result.launchable else -1)


def _context(launch: dict, dims: tuple, spill_bytes: int | None) -> dict:
    """What the rules read beyond the occupancy result (rules.check_occupancy's context)."""
    return {"spill_bytes": spill_bytes, "grid_size": launch["grid_size"], "cluster_size": launch["cluster_size"],
            "block_dims": dims}


def _finding(code: str, message: str, arch: str, details: dict) -> Finding:
    return finding_of(registry()[code], message, arch, details)


def _lint_findings(usage, result, disagreements, entry, budget: Budget | None, launch, options) -> list[Finding]:
    """Lint's own findings that do not read spills (the spill budget is _Linter._with_spills')."""
    allows = options.selection.allows
    arch = usage.arch
    out = []
    if budget is not None:
        if budget.max_registers is not None and usage.registers > budget.max_registers and allows("TA901"):
            out.append(_finding("TA901", f"{usage.registers} registers per thread, budget {budget.max_registers} "
                                         f"(budget '{budget.kernel}'); cap with -maxrregcount={budget.max_registers} "
                                         "or __launch_bounds__", arch,
                                {"registers": usage.registers, "budget": budget.max_registers}))
        total = result.kernel.static_shared_mem + result.kernel.dynamic_shared_mem
        if budget.max_shared_mem is not None and total > budget.max_shared_mem and allows("TA904"):
            out.append(_finding("TA904", f"{total} B of shared memory per block, budget {budget.max_shared_mem} B "
                                         f"(budget '{budget.kernel}')", arch,
                                {"shared_mem": total, "budget": budget.max_shared_mem}))
    minimum = next((m for m in (budget.min_occupancy if budget else None, entry.min_occupancy if entry else None,
                                options.min_occupancy, options.config.min_occupancy) if m is not None), None)
    if minimum is not None and result.launchable and result.occupancy < minimum and allows("TA903"):
        out.append(_finding("TA903", f"occupancy {result.occupancy:.1%} ({result.active_warps_per_sm}/"
                                     f"{result.max_warps_per_sm} warps) is below the minimum {minimum:.1%}, "
                                     f"limited by {' + '.join(result.limiters)}", arch,
                            {"occupancy": round(result.occupancy, 6), "minimum": minimum, "limiters": result.limiters}))
    if disagreements and allows("TA905"):
        out.append(_finding("TA905", "; ".join(disagreements), arch, {"disagreements": list(disagreements)}))
    if launch["configured_by"] is None and usage.source != "config" and allows("TA906"):
        dims = "x".join(map(str, launch["block_dims"]))
        out.append(_finding("TA906", f"no [[kernels]] entry matches; assumed block {dims}, no dynamic shared memory",
                            arch, {"block_dims": list(launch["block_dims"])}))
    return out


def lint_paths(paths, options: LintOptions, stdin=None) -> LintReport:
    """Lint build output files (and CUDA sources, for locations, suppressions
    and the source rules). '-' reads a ptxas log or cuobjdump listing from `stdin`."""
    from tuneadvise.advisor.readers.usage import SOURCE_SUFFIXES, ReadResult, read_text, read_usage
    from tuneadvise.advisor.rules.source_scan import scan_source

    gathered = ReadResult()
    index = SourceIndex()
    source_texts = []
    for path in paths:
        path = str(path)
        if path == "-":
            read_text(stdin, "<stdin>", gathered)
        elif path.lower().endswith(SOURCE_SUFFIXES):
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError as exc:
                gathered.problems.append(InputProblem(path, None, f"cannot read: {exc.strerror}"))
                continue
            index.add_file(path, text)
            source_texts.append((path, text))
        else:
            one = read_usage(path)
            gathered.records += one.records
            gathered.problems += one.problems
            gathered.ptx_only += [f"{path}: {arch}" for arch in one.ptx_only]
    report = lint_records(gathered.records, options, index)
    report.problems = gathered.problems + report.problems
    report.ptx_only = gathered.ptx_only
    if source_texts:
        majors = [k.result.arch.major for k in report.kernels] or \
            [_resolve(a).arch.major for a in (options.archs or options.config.arch)]
        if majors:
            for path, text in source_texts:
                report.source_findings += scan_source(text, path, min(majors), options.selection)
    return report
