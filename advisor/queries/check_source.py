"""`check-source`: the source rules (legacy warp intrinsics, implicit warp-synchronous code,
__mul24) over CUDA files, for a target architecture. What is detected lives in
rules/source_scan.py; this only gathers its findings into the command's document."""

from __future__ import annotations

from dataclasses import dataclass

from ..report import SCHEMA_VERSION


class UnreadableSource(Exception):
    def __init__(self, path: str, reason: str):
        super().__init__(f"cannot read {path}: {reason}")
        self.path, self.reason = path, reason


@dataclass(frozen=True)
class SourceAnswer:
    target: str  # the architecture's sm name
    files: int
    findings: tuple  # rules' Finding objects, by file and line

    def to_json(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "target": self.target, "findings": [f.to_dict() for f in self.findings]}

    def fails(self, fail_on: str) -> bool:
        """Whether a finding is at or above the severity `fail_on`."""
        from ..rules import SEVERITY_RANK

        return any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] for f in self.findings)


def check_source_query(paths, arch, selection=None) -> SourceAnswer:
    """The findings of the selected source rules in `paths` for `arch` (an Arch)."""
    from ...specs.files import MAX_SOURCE_BYTES, read_bounded
    from ..rules.source_scan import scan_source

    findings = []
    for path in paths:
        try:
            text = read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            raise UnreadableSource(path, exc.strerror) from None
        findings += scan_source(text, path, arch.major, selection)
    return SourceAnswer(arch.sm, len(paths), tuple(findings))
