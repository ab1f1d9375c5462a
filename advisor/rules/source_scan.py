"""Scan CUDA sources (.cu/.cuh) with the source rules (TA8xx, in
families/ta8_source.py): legacy warp intrinsics and implicit warp-synchronous
code on targets with Independent Thread Scheduling (7.0+), and __mul24 on 2.0+.

Comments and string and character literals are ignored (code quoted in a
message is not code); `// tuneadvise: ignore[CODE]` on a line suppresses CODE
there. Every step is linear in the size of the file: one pass over its tokens,
then patterns without nested repetition over each line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from ..readers.cuda_source import strip_comments, suppressed_codes
from . import SEVERITIES, Finding, RuleSelection, SourceLine, SourceTarget, fails, source_rules
from .warp_uniform import uniform_spans


def built_for_targets(targets: Iterable) -> tuple[SourceTarget, ...]:
    """Each distinct target once, oldest first."""
    distinct = {SourceTarget(t.sm, t.major, t.independent_thread_scheduling, t.native_32bit_integer_multiply)
                for t in targets}
    return tuple(sorted(distinct, key=lambda t: (t.major, len(t.sm), t.sm)))


def scan_source(text: str, path: str, targets: Iterable, selection: RuleSelection | None = None) -> list[Finding]:
    """The selected source rules' findings (TA8xx, in families/ta8_source.py), line by line, for
    every target the file is built for (Arch records, or anything with `sm` and `major`): a rule
    flags what breaks or slows on any of them. `path:line:column: ` goes before each message, and
    file, line and column into its details."""
    return scan_lines(strip_comments(text), "__syncwarp" in text, path, targets, selection)


def scan_lines(lines: list[tuple[str, str]], has_syncwarp: bool, path: str, targets: Iterable,
               selection: RuleSelection | None = None) -> list[Finding]:
    """scan_source over a file's lines as strip_comments gave them (a caller that also indexes
    the file tokenizes it once); `has_syncwarp`: the file's text names __syncwarp."""
    rules = source_rules(selection)
    built_for = built_for_targets(targets)
    if not rules or not built_for:
        return []
    findings = []
    uniform = uniform_spans([code for code, _ in lines])
    for number, (code, comment) in enumerate(lines, 1):
        line = SourceLine(code=code, targets=built_for, file_has_syncwarp=has_syncwarp, uniform=uniform[number - 1])
        ignored = suppressed_codes(comment) if comment else ()
        for rule in rules:
            if rule.code in ignored:
                continue
            for message, details in rule.check(line, rule.params):
                column = details.get("column", 1)
                findings.append(Finding(rule.code, rule.severity, f"{path}:{number}:{column}: {message}",
                                        ",".join(details["targets"]), {"file": path, "line": number, **details},
                                        rule.source))
    return findings


# -- check-source's document --------------------------------------------------------

# 2: --target names every architecture the code is built for (`targets`, was `target`); findings carry
# `column`, `end_column`, `targets` and, where one exists, `replacement`; `tool` and `summary` added.
SOURCE_SCHEMA_VERSION = 2


class SourceDocument(NamedTuple):
    """check-source's result: what its text, JSON, SARIF and GitHub outputs are all written from.
    Shaped like lint's document (head, kernels, tail) so lint's serializers write it too."""

    head: dict  # "schema_version", "tool", "targets"
    tail: dict  # "source_findings", "problems", "summary"

    @staticmethod
    def kernels() -> Iterator[dict]:
        return iter(())

    @property
    def summary(self) -> dict:
        return self.tail["summary"]

    def whole(self) -> dict:
        """`check-source --format json`'s document."""
        return {**self.head, "findings": self.tail["source_findings"], "summary": self.summary}


def source_document(sources: Iterable[tuple[str, str]], targets, selection: RuleSelection | None = None,
                    fail_on: str = "error", tool_version: str = "") -> SourceDocument:
    """Scan each (path, text) for `targets` and count the findings against `fail_on`."""
    targets = list(targets)
    findings, files = [], 0
    for path, text in sources:
        findings += scan_source(text, path, targets, selection)
        files += 1
    by_severity = dict.fromkeys(SEVERITIES, 0)
    by_code: dict[str, int] = {}
    for finding in findings:
        by_severity[finding.severity] += 1
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
    failing = sum(1 for f in findings if fails(f.severity, fail_on))
    summary = {"files": files, "findings": len(findings), "by_severity": by_severity,
               "by_code": dict(sorted(by_code.items())), "fail_on": fail_on, "failing_findings": failing,
               "passed": failing == 0, "warnings": []}
    head = {"schema_version": SOURCE_SCHEMA_VERSION, "tool": {"name": "tuneadvise", "version": tool_version},
            "targets": [t.sm for t in built_for_targets(targets)]}
    return SourceDocument(head, {"source_findings": [f.to_dict() for f in findings], "problems": [],
                                 "summary": summary})
