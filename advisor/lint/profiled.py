"""Nsight Compute exports in lint: each profiled launch becomes a kernel entry
like the others. Its `occupancy` document is the engine's, computed from the
launch's own figures (advisor/measured.py), and its `measured` object holds
what the report says: achieved and theoretical occupancy, waves per SM, the
block limits, the shared-memory configuration the driver chose, the process
and the launch's index. The findings are the config rules' on the engine's
result and the TA0xx rules on the launch. A launch is kept apart from other
launches of its kernel by its variant, "launch N" (ncu's ID), so that `diff`
and baselines pair launch N of one profile with launch N of the next."""

from __future__ import annotations

from pathlib import Path

from ...specs.records import Resolved
from ..advice.evidence_library import library_of
from ..advice.evidence_profile import figures, profile
from ..advice.verdict import with_evidence
from ..measured import Measured, MeasuredError, findings_of, measure
from ..readers.compiler_output import KernelUsage
from ..readers.ncu import NCU_REP_MAGIC, NcuConversionError, NcuMissing, is_ncu_export, read_ncu
from ..readers.usage import InputProblem
from ..rules import Finding, config_findings, finding_of, finding_order, registry
from ..rules.register_advice import LIBRARY
from .records import LintedKernel, LintOptions

LIBRARY_RULE = "TA008"  # said once per run (`library_note`), not on every launch

PERCENTAGE_RULES = ("TA401",)
SNIFF_BYTES = 64 << 10  # ncu's ==PROF== lines and a program's output may come before the header


def is_profile(path: str) -> bool:
    """An Nsight Compute export or saved report, by content."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    return head.startswith(NCU_REP_MAGIC) or is_ncu_export(head)


def lint_profile(path: str, options: LintOptions) -> tuple[list[LintedKernel], list[InputProblem]]:
    """One kernel entry per profiled launch of the export at `path`, and the problems met.
    Raises NcuMissing (a .ncu-rep with no ncu to convert it)."""
    try:
        read = read_ncu(path)
    except NcuMissing:
        raise
    except NcuConversionError as exc:
        return [], [InputProblem(path, None, str(exc))]
    problems = [InputProblem(p.file, p.line, p.message) for p in read.problems]
    minimum = options.config.min_achieved_occupancy
    kernels = []
    for launch in read.launches:
        try:
            measured = measure(launch)
        except MeasuredError as exc:
            problems.append(InputProblem(path, launch.line, str(exc)))
            continue
        kernels.append(_kernel(measured, options, minimum))
    return kernels, problems


def _kernel(measured: Measured, options: LintOptions, minimum: float | None) -> LintedKernel:
    launch, result = measured.launch, measured.result
    if library_of(launch.kernel) is not None:  # its vendor's registers: the rules propose no cap
        result = result._replace(kernel=result.kernel._replace(register_control=LIBRARY))
    usage = KernelUsage(name=launch.kernel, arch=measured.arch.sm, registers=measured.config.registers,
                        shared_mem=measured.config.static_shared_mem, source="ncu", line=launch.line,
                        file=launch.file, variant=f"launch {launch.launch_id}")
    # The engine's carveout percentage stands for the configuration the driver chose, not a
    # preference the program set: the rules on the percentage itself do not apply.
    findings = [f for f in config_findings(Resolved(measured.arch), result, options.selection)
                if f.code not in PERCENTAGE_RULES]
    findings += findings_of(measured, options.selection, minimum)
    document = measured_document(measured)
    evidence = profile(figures(document))
    findings = [with_evidence(f, evidence) if evidence else f for f in findings]
    findings.sort(key=finding_order)
    return LintedKernel(name=launch.kernel, demangled=launch.kernel, arch=measured.arch.sm, usage=usage,
                        evidence=(usage,), launch=result.kernel, configured_by=None, result=result,
                        findings=tuple(findings), location=(launch.file, launch.line), measured=document)


def library_note(kernels: list[LintedKernel]) -> tuple[list[LintedKernel], list[Finding]]:
    """The kernels without their TA008 findings, and one TA008 for the run that counts the launches
    of each library: said once, not on every launch."""
    counts: dict[str, int] = {}
    kept = []
    for kernel in kernels:
        found = [f for f in kernel.findings if f.code == LIBRARY_RULE]
        for finding in found:
            counts[finding.details["library"]] = counts.get(finding.details["library"], 0) + 1
        kept.append(kernel._replace(findings=tuple(f for f in kernel.findings if f.code != LIBRARY_RULE))
                    if found else kernel)
    if not counts:
        return kept, []
    named = ", ".join(f"{library} ({count})" for library, count in sorted(counts.items()))
    message = (f"{sum(counts.values())} launches of library kernels: {named}; their vendors chose their registers "
               "and launch bounds, so they get facts only, no register or launch-bounds advice")
    return kept, [finding_of(registry()[LIBRARY_RULE], message, "", {"libraries": counts})]


def measured_document(measured: Measured) -> dict:
    """The report's figures of one launch, as lint's `measured` object (docs/lint.md)."""
    report = measured.report
    limits = {name: int(report[key]) for key, name in _LIMIT_NAMES.items() if key in report}
    return {
        "achieved_occupancy": _fraction(report.get("achieved_occupancy")),
        "theoretical_occupancy": _fraction(report.get("theoretical_occupancy")),
        "waves_per_sm": report.get("waves_per_sm"),
        "block_limits": limits,
        "shared_mem_config_size": int(report["shared_mem_config_size"]),
        "duration_ns": report.get("duration_ns"),
        "process": measured.launch.process,
        "launch_index": measured.launch.launch_id,
        "grid_dims": list(measured.launch.grid),
    }


_LIMIT_NAMES = {"block_limit_warps": "warps", "block_limit_registers": "registers",
                "block_limit_shared_mem": "shared_memory", "block_limit_sm": "blocks",
                "block_limit_barriers": "barriers"}


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else round(percent / 100, 6)


def profile_path(path: str) -> bool:
    """Whether lint should read `path` as a profile: not a directory, and a profile by content."""
    return not Path(path).is_dir() and is_profile(path)
