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

from collections.abc import Iterable

from ...specs.records import Resolved
from ..measured import Measured, MeasuredError, as_programmed, findings_of, measure
from ..measured_figures import figures_document
from ..readers.compiler_output import KernelUsage
from ..readers.ncu import NcuConversionError, NcuMissing, NcuReadResult, read_lines, read_ncu
from ..readers.usage import InputProblem
from ..rules import config_findings, finding_order
from .records import LintedKernel, LintOptions

PERCENTAGE_RULES = ("TA401",)
# Causes the TA0xx rules own on a profiled launch, with the measurement: the grid under one wave
# and the tail (TA002, TA003); the configuration rules on the same cause are not repeated.
OWNED_BY_MEASURED = ("TA701", "TA703")


def lint_profile(path: str, options: LintOptions, opened=None) -> tuple[list[LintedKernel], list[InputProblem]]:
    """One kernel entry per profiled launch of the export at `path` (`opened`: already open, see
    readers.ncu.open_export), and the problems met. Raises NcuMissing (a .ncu-rep with no ncu to convert it)."""
    try:
        read = read_ncu(path, opened)
    except NcuMissing:
        raise
    except NcuConversionError as exc:
        return [], [InputProblem(path, None, str(exc))]
    return lint_read(read, path, options)


def lint_profile_lines(lines: Iterable[str], name: str, options: LintOptions):
    """lint_profile for an export given as lines (standard input)."""
    return lint_read(read_lines(lines, name), name, options)


def lint_read(read: NcuReadResult, path: str, options: LintOptions):
    """The kernel entries of the launches read and the problems: the reader's, and one per cause
    a launch could not be analysed for (how many launches, and the first's line), never one
    per launch."""
    problems = [InputProblem(p.file, p.line, p.message) for p in read.problems]
    minimum = options.config.min_achieved_occupancy
    kernels, unread = [], {}
    for launch in read.launches:
        try:
            measured = measure(launch)
        except MeasuredError as exc:
            unread.setdefault(exc.cause, []).append((launch, exc))
            continue
        kernels.append(_kernel(measured, options, minimum))
    for failed in unread.values():
        first, exc = failed[0]
        more = f" (and {len(failed) - 1} more launches of {len(read.launches)} for the same cause)" \
            if len(failed) > 1 else ""
        problems.append(InputProblem(path, first.line, f"{exc}{more}"))
    return kernels, problems


def _kernel(measured: Measured, options: LintOptions, minimum: float | None) -> LintedKernel:
    launch, result = measured.launch, measured.result
    usage = KernelUsage(name=launch.kernel, arch=measured.arch.sm, registers=measured.config.registers,
                        shared_mem=measured.config.static_shared_mem, source="ncu", line=launch.line,
                        file=launch.file, variant=f"launch {launch.launch_id}")
    # The engine's carveout percentage stands for the configuration the driver chose, not a
    # preference the program set: the rules on the percentage itself do not apply, and the
    # configuration rules' what-ifs start from the program's preference (as_programmed).
    clusters = int(measured.report.get("max_active_clusters") or 0) or None  # the report's, for TA702
    findings = [f for f in config_findings(Resolved(measured.arch), as_programmed(measured), options.selection,
                                           clusters)
                if f.code not in PERCENTAGE_RULES + OWNED_BY_MEASURED]
    findings += findings_of(measured, options.selection, minimum)
    findings.sort(key=finding_order)
    return LintedKernel(name=launch.kernel, demangled=launch.kernel, arch=measured.arch.sm, usage=usage,
                        evidence=(usage,), launch=measured.config, configured_by=None, result=result,
                        findings=tuple(findings), location=(launch.file, launch.line),
                        measured=measured_document(measured))


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
        **figures_document(measured.figures),
    }


_LIMIT_NAMES = {"block_limit_warps": "warps", "block_limit_registers": "registers",
                "block_limit_shared_mem": "shared_memory", "block_limit_sm": "blocks",
                "block_limit_barriers": "barriers"}


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else round(percent / 100, 6)
