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
    head = {"name": kernel.name, "demangled": kernel.demangled, "arch": kernel.arch}
    head.update(_figures(kernel.usage))
    head["sources"] = [dict({"tool": r.source, "file": r.file, "line": r.line}, **_source_figures(r))
                       for r in kernel.evidence]
    head["launch"] = _launch(kernel.launch)
    head["location"] = {"file": kernel.location[0], "line": kernel.location[1]}
    return head


def _figures(usage) -> dict:
    return {"registers": usage.registers, "shared_mem": usage.shared_mem, "spill_bytes": usage.spill_bytes,
            "stack_frame": usage.stack_frame, "barriers": usage.barriers, "max_threads_per_block": usage.max_threads,
            "figures_from": usage.source}


def _source_figures(record) -> dict:
    return {"registers": record.registers, "shared_mem": record.shared_mem, "stack_frame": record.stack_frame,
            "spill_bytes": record.spill_bytes, "barriers": record.barriers}


def _launch(launch: dict) -> dict:
    return dict(launch, block_dims=list(launch["block_dims"]))


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
# kernels with the same figures share one occupancy result and one findings
# list (lint.py computes each once), and their figures, launch settings and
# source records repeat too. Encoding the whole dictionary re-encodes every
# copy; document_json encodes each distinct part once, with json itself, and
# joins the texts. tests/test_lint_report.py holds it equal, byte for byte, to
# json.dumps(document(...), separators=(",", ":")).

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_STRING = json.encoder.encode_basestring_ascii  # what _ENCODE does to a str


def _number(value) -> str:
    return str(value) if type(value) is int else _ENCODE(value)


class _KernelWriter:
    """Each kernel's entry as JSON text, distinct parts encoded once."""

    def __init__(self, comparison):
        self.comparison = comparison
        self.texts: dict = {}  # (part, key) -> text, for parts keyed by their values
        self.kept: dict = {}  # (part, id) -> (object, text), the object kept so its id stays unique

    def _by_value(self, part: str, key, make) -> str:
        text = self.texts.get((part, key))
        if text is None:
            text = self.texts[(part, key)] = make()
        return text

    def _by_identity(self, part: str, obj, key, make) -> str:
        hit = self.kept.get((part, id(obj), key))
        if hit is None:
            hit = self.kept[(part, id(obj), key)] = (obj, make())
        return hit[1]

    def __call__(self, kernel) -> str:
        usage, launch, (file, line) = kernel.usage, kernel.launch, kernel.location
        figures = (usage.registers, usage.shared_mem, usage.spill_bytes, usage.stack_frame, usage.barriers,
                   usage.max_threads, usage.source)
        return (f'{{"name":{_STRING(kernel.name)},"demangled":{_STRING(kernel.demangled)},'
                f'"arch":{self._by_value("arch", kernel.arch, lambda: _STRING(kernel.arch))},'
                f'{self._by_value("figures", figures, lambda: _ENCODE(_figures(usage))[1:-1])},'
                f'"sources":[{",".join([self._source(r) for r in kernel.evidence])}],'
                f'"launch":{self._by_value("launch", tuple(launch.values()), lambda: _ENCODE(_launch(launch)))},'
                f'"location":{self._by_value("file", file, lambda: _ENCODE({"file": file})[:-1])},"line":{_number(line)}}},'
                f'{self._results(kernel)}}}')

    def _source(self, record) -> str:
        head = self._by_value("file", (record.source, record.file),
                              lambda: _ENCODE({"tool": record.source, "file": record.file})[:-1])
        figures = (record.registers, record.shared_mem, record.stack_frame, record.spill_bytes, record.barriers)
        rest = self._by_value("source", figures, lambda: _ENCODE(_source_figures(record))[1:])
        return f'{head},"line":{_number(record.line)},{rest}'

    def _results(self, kernel) -> str:
        """'"occupancy":...,"findings":[...]': shared by kernels with the same result and findings list."""
        dims = tuple(kernel.launch["block_dims"])
        occupancy = self._by_identity("occupancy", kernel.result, dims,
                                      lambda: occupancy_json_line(kernel.result, dims))
        if self.comparison is None:  # then the findings list alone decides its text
            findings = self._by_identity("findings", kernel.findings, None, lambda: ",".join(
                [self._finding(f, None) for f in kernel.findings]))
        else:
            findings = ",".join([self._finding(f, _status(self.comparison, kernel, f)) for f in kernel.findings])
        return f'"occupancy":{occupancy},"findings":[{findings}]'

    def _finding(self, finding, status) -> str:
        return self._by_identity("finding", finding, status, lambda: _ENCODE(_finding_dict(finding, status)))


def document_json(report, totals: dict, comparison=None, tool_version: str = "") -> str:
    """json.dumps(document(report, ...), separators=(",", ":")), where `totals` is summary(report, ...)."""
    write = _KernelWriter(comparison)
    return (f'{_ENCODE(_head(tool_version))[:-1]},"kernels":[{",".join([write(k) for k in report.kernels])}],'
            f'{_ENCODE(_tail(report, totals))[1:]}')
