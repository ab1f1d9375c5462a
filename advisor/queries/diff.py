"""`diff`: two builds' resource usage compared kernel by kernel, with the regressions flagged."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DiffAnswer:
    document: dict  # advisor.lint.baseline.diff_reports's document
    problems: tuple  # inputs that could not be read, from either side

    @property
    def regressed(self) -> bool:
        return bool(self.document["summary"]["regressed"])

    def to_json(self) -> dict:
        return self.document


def diff_query(old: str, new: str, options, stdin=None) -> DiffAnswer:
    """Lint `old` and `new` (paths, one of them '-' for `stdin`) with `options` (LintOptions) and
    compare them; the new build is linted against the old one's registers, so that TA908 names a
    change that loses a block."""
    from ..lint.baseline import diff_reports
    from ..lint.run import lint_paths

    before = lint_paths([old], options, stdin=stdin)
    previous = {(k.name, k.arch): k.launch.registers for k in before.kernels}
    after = lint_paths([new], replace(options, previous_registers=previous), stdin=stdin)
    return DiffAnswer(diff_reports(before, after), tuple(before.problems + after.problems))
