"""Nsight Compute exports in lint: each profiled launch becomes a kernel record
like the others (`KernelUsage.measured`), analysed by the one linter
(advisor/lint/run.py) as its launch ran: its `occupancy` document is the
engine's, computed from the launch's own figures (advisor/measured.py), and its
`measured` object holds what the report says: achieved and theoretical
occupancy, waves per SM, the block limits, the shared-memory configuration the
driver chose, the process and the launch's index. The findings are the config
rules' on the engine's result (those that apply to a launch that ran) and the
TA0xx rules on the launch. A launch is kept apart from other launches of its
kernel by its variant, "launch N" (ncu's ID), so that `diff` and baselines
pair launch N of one profile with launch N of the next."""

from __future__ import annotations

from collections.abc import Iterable

from ..measured import BLOCK_LIMITS, Measured, MeasuredError, measure
from ..measured_figures import figures_document
from ..readers.compiler_output import KernelUsage
from ..readers.ncu import (
    EXPORT_SUFFIXES,
    NcuConversionError,
    NcuMissing,
    NcuReadResult,
    is_export_head,
    read_lines,
    read_ncu_opened,
)
from ..readers.usage import InputProblem, ReadResult


def is_profile(head: bytes, name: str = "") -> bool:
    """An Nsight Compute export (gzip-compressed or not) or saved report, by the first
    SNIFF_BYTES of its content, or by its name (EXPORT_SUFFIXES: a .csv that holds no export, an
    empty one included, is told so as an export)."""
    return is_export_head(head) or name.lower().endswith(EXPORT_SUFFIXES)


def read_profile(handle, name: str, result: ReadResult) -> None:
    """One record per profiled launch of the export open in `handle` into `result`, and the
    problems met. Raises NcuMissing (a .ncu-rep with no ncu to convert it)."""
    try:
        read = read_ncu_opened(handle, name)
    except NcuMissing:
        raise
    except NcuConversionError as exc:
        result.problems.append(InputProblem(name, None, str(exc)))
        return
    _records(read, name, result)


def read_profile_lines(lines: Iterable[str], name: str, result: ReadResult) -> None:
    """read_profile for an export given as lines (standard input)."""
    _records(read_lines(lines, name), name, result)


def _records(read: NcuReadResult, name: str, result: ReadResult) -> None:
    """The launches read as records, and the problems: the reader's, and one per cause a launch
    could not be analysed for (with how many launches, and the first's line), never one per
    launch."""
    result.problems += read.problems
    unread: dict[str, list] = {}
    for launch in read.launches:
        try:
            measured = measure(launch)
        except MeasuredError as exc:
            unread.setdefault(exc.cause, []).append((launch, exc))
            continue
        result.records.append(profiled_record(measured))
    for failed in unread.values():
        first, exc = failed[0]
        more = f" (and {len(failed) - 1} more launches of {len(read.launches)} for the same cause)" \
            if len(failed) > 1 else ""
        result.problems.append(InputProblem(name, first.line, f"{exc}{more}"))


def profiled_record(measured: Measured) -> KernelUsage:
    """A profiled launch as a kernel record: the figures the engine took from its report."""
    launch = measured.launch
    return KernelUsage(name=launch.kernel, arch=measured.arch.sm, registers=measured.config.registers,
                       shared_mem=measured.config.static_shared_mem, source="ncu", line=launch.line,
                       file=launch.file, variant=f"launch {launch.launch_id}", measured=measured)


def measured_document(measured: Measured) -> dict:
    """The report's figures of one launch, as lint's `measured` object (docs/lint.md)."""
    report = measured.report
    limits = {name: int(report[key]) for key, name in BLOCK_LIMITS.items() if key in report}
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


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else round(percent / 100, 6)


def with_library_control(name: str, result):
    """The engine's result for a launch of `name`, marked as a library kernel's where it is one
    (advice/evidence_library.py): its vendor set its registers, so the rules propose no cap."""
    from ..advice.evidence_library import library_of
    from ..rules.register_advice import LIBRARY

    if library_of(name) is None:
        return result
    return result._replace(kernel=result.kernel._replace(register_control=LIBRARY))


def with_profile(findings: list, document: dict) -> list:
    """The findings with each proposed change's verdict weighed against the launch's profile
    (advice/evidence_profile.py: throughput, schedulers, stalls)."""
    from ..advice.evidence_profile import figures, profile
    from ..rules import with_evidence

    evidence = profile(figures(document))
    return [with_evidence(f, evidence) for f in findings] if evidence else findings
