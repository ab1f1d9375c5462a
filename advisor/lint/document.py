"""The lint result as one versioned JSON document (docs/lint.md); every other
machine format (advisor/lint/formats.py) is a view of this document, so they
cannot disagree."""

from __future__ import annotations

from tuneadvise.advisor.lint.baseline import kernel_key
from tuneadvise.advisor.report import (
    SCHEMA_VERSION,
    compact_json,
    json_int,
    json_string,
    occupancy_document,
    occupancy_json_line,
)
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


def _weighted_findings(report, comparison):
    """(kernel, its findings, how many kernels have that list), then (None, the source findings, 1).
    Kernels with the same configuration share one findings list, counted once and weighted; with a
    baseline each kernel's findings have their own status, so each kernel comes alone."""
    if comparison is not None:
        for kernel in report.kernels:
            yield kernel, kernel.findings, 1
    else:
        lists: dict = {}  # id(findings) -> [a kernel with them, how many]
        for kernel in report.kernels:
            entry = lists.get(id(kernel.findings))
            if entry is None:
                lists[id(kernel.findings)] = [kernel, 1]
            else:
                entry[1] += 1
        for kernel, times in lists.values():
            yield kernel, kernel.findings, times
    yield None, report.source_findings, 1


def summary(report, fail_on: str, comparison=None) -> dict:
    """The document's "summary": counts by severity and code, and whether the run passes."""
    by_severity = dict.fromkeys(SEVERITIES, 0)
    by_code: dict[str, int] = {}
    counted = 0
    threshold = SEVERITY_RANK[fail_on]
    for kernel, findings, times in _weighted_findings(report, comparison):
        for finding in findings:
            by_severity[finding.severity] += times
            by_code[finding.code] = by_code.get(finding.code, 0) + times
            if SEVERITY_RANK[finding.severity] >= threshold and (comparison is None or comparison.counts(kernel, finding)):
                counted += times
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
# json.dumps(document(...), separators=(",", ":")). The text is ASCII (json's
# escapes), and it is cached encoded: the shared parts are encoded once, not per copy.


def _record_key(record) -> tuple:
    """What a source record's entry shows, its line apart."""
    return (record.source, record.file, record.registers, record.shared_mem, record.stack_frame,
            record.spill_bytes, record.barriers)


class _KernelWriter:
    """Each kernel's entry as JSON text, distinct parts encoded once.

    Parts keyed by value (a kernel's frame: its figures, source records and
    files) are cached by that value; shared objects (a launch dict, an occupancy result, a findings list,
    a finding) by id(): the report keeps every one of them alive for as long
    as the writer runs, so no id can be reused meanwhile.
    """

    def __init__(self, comparison):
        self.comparison = comparison
        self.frames: dict = {}
        self.launches: dict = {}
        self.files: dict = {}
        self.results: dict = {}
        self.occupancies: dict = {}
        self.findings: dict = {}

    def __call__(self, kernel) -> tuple[str, bytes]:
        """(the entry up to its results, then b'"occupancy":...,"findings":[...]}'): two chunks, so
        the second, often shared by thousands of kernels, is encoded once and written without being copied."""
        usage, evidence, (file, line) = kernel.usage, kernel.evidence, kernel.location
        figures = (kernel.arch, usage.registers, usage.shared_mem, usage.spill_bytes, usage.stack_frame,
                   usage.barriers, usage.max_threads, usage.source, id(kernel.launch), file)
        # What lies between the names and the line numbers: shared by kernels with the same figures,
        # sources, launch and location file. One source with its own figures (a ptxas log) needs
        # no more key than the kernel's figures and the file.
        single = len(evidence) == 1 and evidence[0] is usage
        key = (*figures, usage.file) if single else (*figures, *map(_record_key, evidence))
        frame = self.frames.get(key)
        if frame is None:
            frame = self.frames[key] = self._frame(kernel)
        names = f'{{"name":{json_string(kernel.name)},"demangled":{json_string(kernel.demangled)},'
        if single:
            head = f"{names}{frame[0]}{json_int(usage.line)}{frame[1]}{json_int(line)}{frame[2]}"
        else:
            lines = [json_int(record.line) for record in evidence] + [json_int(line)]
            head = names + "".join([text for pair in zip(frame, lines) for text in pair]) + frame[-1]
        return head, self._results(kernel)

    def _frame(self, kernel) -> tuple[str, ...]:
        """The entry from its figures to its end, cut before each line number (one per source
        record, then the location's)."""
        figures = compact_json(dict(arch=kernel.arch, **_figures(kernel.usage)))[1:-1]
        launch = self.launches.get(id(kernel.launch))
        if launch is None:
            launch = self.launches[id(kernel.launch)] = compact_json(_launch(kernel.launch))
        pieces, before = [], f'{figures},"sources":['
        for index, record in enumerate(kernel.evidence):
            comma = "," if index else ""
            pieces.append(f'{before}{comma}{self._file({"tool": record.source, "file": record.file})},"line":')
            before = f",{compact_json(_source_figures(record))[1:]}"
        pieces.append(f'{before}],"launch":{launch},"location":{self._file({"file": kernel.location[0]})},"line":')
        return (*pieces, "},")

    def _file(self, fields: dict) -> str:
        """'{"tool":...,"file":...' or '{"file":...': few distinct ones, many kernels."""
        key = tuple(fields.values())
        text = self.files.get(key)
        if text is None:
            text = self.files[key] = compact_json(fields)[:-1]
        return text

    def _results(self, kernel) -> bytes:
        """b'"occupancy":...,"findings":[...]}': shared by kernels with the same result and findings list."""
        if self.comparison is not None:  # each kernel's findings carry their own baseline status
            return self._results_text(kernel).encode("ascii")
        key = (id(kernel.result), id(kernel.findings), tuple(kernel.launch["block_dims"]))
        text = self.results.get(key)
        if text is None:
            text = self.results[key] = self._results_text(kernel).encode("ascii")
        return text

    def _results_text(self, kernel) -> str:
        dims = tuple(kernel.launch["block_dims"])
        findings = ",".join([self._finding(f, _status(self.comparison, kernel, f)) for f in kernel.findings])
        return f'"occupancy":{self._occupancy(kernel.result, dims)},"findings":[{findings}]}}'

    def _occupancy(self, result, dims) -> str:
        key = (id(result), dims)
        text = self.occupancies.get(key)
        if text is None:
            text = self.occupancies[key] = occupancy_json_line(result, dims)
        return text

    def _finding(self, finding, status) -> str:
        key = (id(finding), status)
        text = self.findings.get(key)
        if text is None:  # compact_json(_finding_dict(finding, status)), without building the dict
            text = self.findings[key] = (
                f'{{"code":{json_string(finding.code)},"severity":{json_string(finding.severity)},'
                f'"message":{json_string(finding.message)},"arch":{json_string(finding.arch)},'
                f'"details":{compact_json(finding.details)},"source":{json_string(finding.source)}'
                + ("}" if status is None else f',"baseline":{json_string(status)}}}'))
        return text


def iter_document_json(report, totals: dict, comparison=None, tool_version: str = "", end: str = ""):
    """document_json as ASCII bytes in chunks, two per kernel, followed by `end`:
    written as they come, a large report is never held whole."""
    write = _KernelWriter(comparison)
    separator = ""
    yield f'{compact_json(_head(tool_version))[:-1]},"kernels":['.encode("ascii")
    for kernel in report.kernels:
        head, results = write(kernel)
        yield (separator + head).encode("ascii")
        yield results
        separator = ","
    yield f'],{compact_json(_tail(report, totals))[1:]}{end}'.encode("ascii")


def document_json(report, totals: dict, comparison=None, tool_version: str = "") -> str:
    """json.dumps(document(report, ...), separators=(",", ":")), where `totals` is summary(report, ...)."""
    return b"".join(iter_document_json(report, totals, comparison, tool_version)).decode("ascii")
