"""The lint result as one versioned JSON document (docs/lint.md); every other
machine format (advisor/lint_formats.py) is a view of this document, so they
cannot disagree."""

from __future__ import annotations

import json

from tuneadvise.advisor.baseline import kernel_key
from tuneadvise.advisor.report import SCHEMA_VERSION, occupancy_document, occupancy_json_line
from tuneadvise.advisor.rules import SEVERITIES, SEVERITY_RANK


def _finding_dict(finding, status: str | None) -> dict:
    out = finding.to_dict()
    if status is not None:
        out["baseline"] = status
    return out


def _kernel_head(kernel) -> dict:
    """A kernel's entry up to, not including, its "occupancy" and "findings" (the last two keys)."""
    usage = kernel.usage
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
        "launch": dict(kernel.launch, block_dims=list(kernel.launch["block_dims"])),
        "location": {"file": kernel.location[0], "line": kernel.location[1]},
    }


def _status(comparison, kernel, finding) -> str | None:
    if comparison is None:
        return None
    return comparison.status.get((kernel_key(kernel.name, kernel.arch), finding.code), "new")


def kernel_document(kernel, comparison=None) -> dict:
    doc = _kernel_head(kernel)
    doc["occupancy"] = occupancy_document(kernel.result, tuple(kernel.launch["block_dims"]))
    doc["findings"] = [_finding_dict(f, _status(comparison, kernel, f)) for f in kernel.findings]
    return doc


def summary(report, fail_on: str, comparison=None) -> dict:
    """The document's "summary": counts by severity and code, and whether the run passes."""
    by_severity = {s: 0 for s in SEVERITIES}
    by_code: dict[str, int] = {}
    counted = 0
    threshold = SEVERITY_RANK[fail_on]
    for kernel, finding in report.all_findings():
        by_severity[finding.severity] += 1
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
        if SEVERITY_RANK[finding.severity] >= threshold and (comparison is None or comparison.counts(kernel, finding)):
            counted += 1
    result = {
        "kernels": len(report.kernels),
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
        result["baseline"] = {
            "new": sum(1 for s in comparison.status.values() if s == "new"),
            "worse": sum(1 for s in comparison.status.values() if s == "worse"),
            "baselined": sum(1 for s in comparison.status.values() if s == "baselined"),
            "regressed_kernels": comparison.worse,
            "improved": comparison.improved,
        }
    return result


def _head(tool_version: str) -> dict:
    return {"schema_version": SCHEMA_VERSION, "tool": {"name": "tuneadvise", "version": tool_version}}


def _tail(report, totals: dict) -> dict:
    return {
        "source_findings": [_finding_dict(f, None) for f in report.source_findings],
        "problems": [{"file": p.file, "line": p.line, "message": p.message} for p in report.problems],
        "summary": totals,
    }


def document(report, fail_on: str, comparison=None, tool_version: str = "") -> dict:
    doc = _head(tool_version)
    doc["kernels"] = [kernel_document(k, comparison) for k in report.kernels]
    doc.update(_tail(report, summary(report, fail_on, comparison)))
    return doc


# --------------------------------------------------------------------------
# The same document as compact JSON text, written directly
# --------------------------------------------------------------------------
# A lint of 30,000 kernels writes some 70 MB of JSON, and most of it repeats:
# kernels with the same figures share one occupancy result and one list of
# rule findings (lint.py computes each once). Encoding the whole dictionary
# re-encodes every copy; document_json encodes each shared part once and
# joins the texts. tests/test_lint_report.py holds it equal, byte for byte, to
# json.dumps(document(...), separators=(",", ":")).

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def document_json(report, totals: dict, comparison=None, tool_version: str = "") -> str:
    """json.dumps(document(report, ...), separators=(",", ":")), where `totals` is summary(report, ...)."""
    occupancy_texts: dict = {}  # (id(result), dims) -> (result, text); the result kept so its id stays unique
    finding_texts: dict = {}  # (id(finding), status) -> (finding, text)

    def occupancy_text(kernel) -> str:
        dims = tuple(kernel.launch["block_dims"])
        key = (id(kernel.result), dims)
        hit = occupancy_texts.get(key)
        if hit is None:
            hit = occupancy_texts[key] = (kernel.result, occupancy_json_line(kernel.result, dims))
        return hit[1]

    def finding_text(kernel, finding) -> str:
        status = _status(comparison, kernel, finding)
        key = (id(finding), status)
        hit = finding_texts.get(key)
        if hit is None:
            hit = finding_texts[key] = (finding, _ENCODE(_finding_dict(finding, status)))
        return hit[1]

    kernels = [f'{_ENCODE(_kernel_head(k))[:-1]},"occupancy":{occupancy_text(k)},'
               f'"findings":[{",".join([finding_text(k, f) for f in k.findings])}]}}' for k in report.kernels]
    return (f'{_ENCODE(_head(tool_version))[:-1]},"kernels":[{",".join(kernels)}],'
            f'{_ENCODE(_tail(report, totals))[1:]}')
