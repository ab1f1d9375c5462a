"""The lint result as one versioned JSON document (docs/lint.md); every other
machine format (advisor/lint_formats.py) is a view of this document, so they
cannot disagree."""

from __future__ import annotations

from tuneadvise.advisor.baseline import kernel_key
from tuneadvise.advisor.report import SCHEMA_VERSION, occupancy_document
from tuneadvise.advisor.rules import SEVERITIES, SEVERITY_RANK


def _finding_dict(finding, status: str | None) -> dict:
    out = finding.to_dict()
    if status is not None:
        out["baseline"] = status
    return out


def kernel_document(kernel, comparison=None) -> dict:
    usage = kernel.usage
    key = kernel_key(kernel.name, kernel.arch)
    launch = dict(kernel.launch, block_dims=list(kernel.launch["block_dims"]))
    occupancy = occupancy_document(kernel.result, tuple(kernel.launch["block_dims"]))
    return {
        "name": kernel.name,
        "demangled": kernel.demangled,
        "arch": kernel.arch,
        "registers": usage.registers,
        "shared_mem": usage.shared_mem,
        "spill_bytes": usage.spill_bytes,
        "stack_frame": usage.stack_frame,
        "barriers": usage.barriers,
        "max_threads_per_block": usage.max_threads,
        "figures_from": usage.source,
        "sources": [{"tool": r.source, "file": r.file, "line": r.line, "registers": r.registers,
                     "shared_mem": r.shared_mem, "stack_frame": r.stack_frame, "spill_bytes": r.spill_bytes,
                     "barriers": r.barriers} for r in kernel.evidence],
        "launch": launch,
        "location": {"file": kernel.location[0], "line": kernel.location[1]},
        "occupancy": occupancy,
        "findings": [_finding_dict(f, comparison.status.get((key, f.code), "new") if comparison else None)
                     for f in kernel.findings],
    }


def document(report, fail_on: str, comparison=None, tool_version: str = "") -> dict:
    kernels = [kernel_document(k, comparison) for k in report.kernels]
    by_severity = {s: 0 for s in SEVERITIES}
    by_code: dict[str, int] = {}
    counted = 0
    threshold = SEVERITY_RANK[fail_on]
    for kernel, finding in report.all_findings():
        by_severity[finding.severity] += 1
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
        if SEVERITY_RANK[finding.severity] >= threshold and (comparison is None or comparison.counts(kernel, finding)):
            counted += 1
    summary = {
        "kernels": len(kernels),
        "findings": sum(by_severity.values()),
        "by_severity": by_severity,
        "by_code": dict(sorted(by_code.items())),
        "fail_on": fail_on,
        "failing_findings": counted,
        "passed": counted == 0 and not report.problems,
        "problems": len(report.problems),
        "skipped": report.skipped,
        "ptx_only_archs": report.ptx_only,
    }
    if comparison is not None:
        summary["baseline"] = {
            "new": sum(1 for s in comparison.status.values() if s == "new"),
            "worse": sum(1 for s in comparison.status.values() if s == "worse"),
            "baselined": sum(1 for s in comparison.status.values() if s == "baselined"),
            "regressed_kernels": comparison.worse,
            "improved": comparison.improved,
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tuneadvise", "version": tool_version},
        "kernels": kernels,
        "source_findings": [_finding_dict(f, None) for f in report.source_findings],
        "problems": [{"file": p.file, "line": p.line, "message": p.message} for p in report.problems],
        "summary": summary,
    }
