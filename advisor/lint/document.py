"""The lint result as one versioned document (docs/lint.md, `tuneadvise schema
lint`), built once and streamed: a head, each kernel's entry in report order,
and a tail. Every output format (advisor/lint/formats.py: JSON, SARIF, JUnit,
CSV, Markdown, GitHub annotations, and the human text) is a serializer of this
one stream, so they cannot disagree, and none holds a large report whole.

    >>> from tuneadvise.advisor.lint.run import LintOptions, lint_records
    >>> from tuneadvise.advisor.readers.compiler_output import KernelUsage
    >>> report = lint_records([KernelUsage("k", "sm_90", registers=128, shared_mem=0, source="ptxas")],
    ...                       LintOptions())
    >>> doc = lint_document(report, "error")
    >>> [k["occupancy"]["occupancy"] for k in doc.kernels()]
    [0.25]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..engine.occupancy import CARVEOUT_NAMES
from ..report import occupancy_document
from ..rules import SEVERITIES, fails
from .host_launches import site_document
from .machine_code import sass_document

# 2: spill_bytes (stores plus loads) replaced by spill_stores and spill_loads, in kernels and
# their sources; summary gains config, warnings and failing_kernels.
# 3: each kernel gains spills_from (whose the spill figures are) and sass (what its machine code proves).
# 4: each kernel's launch gains `from` (where its block comes from) and `site` (the host code's launch).
SCHEMA_VERSION = 4
CARVEOUT_LABEL = {value: name for name, value in CARVEOUT_NAMES.items()}  # as the config names them


class LintDocument(NamedTuple):
    """The document as a stream: `kernels()` yields each kernel's entry afresh on every call."""

    head: dict  # "schema_version", "tool"
    kernels: Callable[[], Iterator[dict]]
    tail: dict  # "source_findings", "problems", "summary"
    # Rules were selected (--select): a human report lists only the kernels with a finding.
    selected_only: bool = False

    def listed(self) -> Iterator[dict]:
        """The kernels a human report lists: all, or under a rule selection those with a selected
        finding (the summary still counts every kernel; machine formats hold them all)."""
        return (k for k in self.kernels() if k["findings"] or not self.selected_only)

    @property
    def summary(self) -> dict:
        return self.tail["summary"]

    def failing(self, finding: dict) -> bool:
        """Whether a finding of this document (a kernel's or a source finding) fails the run, as
        the summary's failing_findings counted it."""
        return fails(finding["severity"], self.summary["fail_on"], finding.get("baseline"))

    def whole(self) -> dict:
        """The document as one dict: json.dumps of it is `--format json`'s output."""
        return {**self.head, "kernels": list(self.kernels()), **self.tail}


def _finding_dict(finding, status: str | None) -> dict:
    out = finding.to_dict()
    if status is not None:
        out["baseline"] = status
    return out


def _source(record) -> dict:
    return {"tool": record.source, "file": record.file, "line": record.line, "registers": record.registers,
            "shared_mem": record.shared_mem, "stack_frame": record.stack_frame,
            "spill_stores": record.spill_stores, "spill_loads": record.spill_loads, "barriers": record.barriers}


def _launch(kernel) -> dict:
    launch = kernel.launch
    return {"block_dims": list(launch.dims), "dynamic_shared_mem": launch.dynamic_shared_mem,
            "carveout": CARVEOUT_LABEL.get(launch.carveout, launch.carveout), "opt_in": launch.opt_in,
            "grid_size": launch.grid_size, "cluster_size": launch.cluster_size,
            "max_threads_per_block": launch.max_threads_per_block, "configured_by": kernel.configured_by,
            "from": kernel.launch_from, "site": site_document(kernel.launch_site)}


def kernel_document(kernel, comparison=None, occupancy: dict | None = None) -> dict:
    """One kernel's entry. `occupancy`: its occupancy_document, when the caller already has it
    (kernels with the same launch on the same architecture have the same one)."""
    usage = kernel.usage
    entry = {
        "name": kernel.name, "demangled": kernel.demangled, "arch": kernel.arch,
        "registers": usage.registers, "shared_mem": usage.shared_mem,
        "spill_stores": usage.spill_stores, "spill_loads": usage.spill_loads, "stack_frame": usage.stack_frame,
        "barriers": usage.barriers, "max_threads_per_block": usage.max_threads, "figures_from": usage.source,
        "spills_from": usage.spill_origin,
        "variant": usage.variant,
        "sources": [_source(r) for r in kernel.evidence],
        "launch": _launch(kernel),
        "location": {"file": kernel.location[0], "line": kernel.location[1]},
        "occupancy": occupancy if occupancy is not None else occupancy_document(kernel.result, kernel.launch.dims),
        "findings": [_finding_dict(f, None if comparison is None else comparison.status_of(kernel, f.code))
                     for f in kernel.findings],
        "sass": sass_document(usage.sass),
    }
    if kernel.measured is not None:  # a profiled launch (advisor/lint/profiled.py)
        entry["measured"] = kernel.measured
    return entry


def summary(report, fail_on: str, comparison=None, allow_regressions: bool = False) -> dict:
    """The document's "summary": counts by severity and code, and whether the run passes: no
    problem, no finding at or above `fail_on` that counts (against the baseline: new or worse),
    and, unless `allow_regressions`, no kernel below the baseline's occupancy."""
    by_severity = dict.fromkeys(SEVERITIES, 0)
    by_code: dict[str, int] = {}
    counted = failing_kernels = 0

    def count(kernel, findings) -> int:
        failing = 0
        for finding in findings:
            by_severity[finding.severity] += 1
            by_code[finding.code] = by_code.get(finding.code, 0) + 1
            failing += fails(finding.severity, fail_on,
                             None if comparison is None else comparison.status_of(kernel, finding.code))
        return failing

    for kernel in report.kernels:
        failing = count(kernel, kernel.findings)
        counted += failing
        failing_kernels += failing > 0
    counted += count(None, report.source_findings)
    result = {
        "kernels": len(report.kernels),
        "findings": sum(by_severity.values()),
        "by_severity": by_severity,
        "by_code": dict(sorted(by_code.items())),
        "fail_on": fail_on,
        "failing_findings": counted,
        "failing_kernels": failing_kernels,
        "passed": counted == 0 and not report.problems and (allow_regressions or comparison is None
                                                            or not comparison.lost_occupancy),
        "problems": len(report.problems),
        "skipped": report.skipped,
        "ptx_only_archs": report.ptx_only,
        "config": report.config_path or None,
        "warnings": report.warnings,
    }
    if comparison is not None:
        result["baseline"] = {
            "new": sum(1 for s in comparison.status.values() if s == "new"),
            "worse": sum(1 for s in comparison.status.values() if s == "worse"),
            "baselined": sum(1 for s in comparison.status.values() if s == "baselined"),
            "regressed_kernels": comparison.worse,
            "improved": comparison.improved,
            "lost_occupancy": [f"{key}: {change}" for key, change in sorted(comparison.lost_occupancy.items())],
            "regressions_fail": not allow_regressions,
        }
    return result


def lint_document(report, fail_on: str, comparison=None, tool_version: str = "",
                  allow_regressions: bool = False, selected_only: bool = False) -> LintDocument:
    """The report's document, its kernels built one at a time as a serializer asks for them.
    `selected_only`: rules were selected, so a human report lists only kernels with findings."""

    def kernels() -> Iterator[dict]:
        # Kernels with the same launch on one architecture share their occupancy result, so its
        # document is built once per pass: a dict local to this pass, keyed by those values.
        occupancies: dict = {}
        for kernel in report.kernels:
            key = (kernel.arch, kernel.launch)
            part = occupancies.get(key)
            if part is None:
                part = occupancies[key] = occupancy_document(kernel.result, kernel.launch.dims)
            yield kernel_document(kernel, comparison, part)

    head = {"schema_version": SCHEMA_VERSION, "tool": {"name": "tuneadvise", "version": tool_version}}
    tail = {
        "source_findings": [_finding_dict(f, None) for f in report.source_findings],
        "problems": [{"file": p.file, "line": p.line, "message": p.message} for p in report.problems],
        "summary": summary(report, fail_on, comparison, allow_regressions),
    }
    return LintDocument(head, kernels, tail, selected_only)


def whole_lint_document(report, fail_on: str, comparison=None, tool_version: str = "") -> dict:
    """The whole document as one dict (small reports, tests, the library)."""
    return lint_document(report, fail_on, comparison, tool_version).whole()
