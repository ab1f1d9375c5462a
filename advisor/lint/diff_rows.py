"""A row of `diff`: one kernel's figures in both builds, its status and what changed. One
home for what the in-memory comparison (diff.py) and the on-disk store (diff_store.py) both
write, so that the two paths' rows are equal by construction."""

from __future__ import annotations

from collections.abc import Sequence

from .baseline import FIGURES, LOST_BLOCK, changed_figures, changes, figures_of

STATUSES = ("regressed", "added", "removed", "improved", "unchanged")  # the document's order


def kernel_figures(kernel) -> tuple:
    """A linted kernel's figures as diff compares them (baseline.figures_of), in FIGURES' order."""
    figures = figures_of(kernel)
    return tuple(figures[figure] for figure in FIGURES)


def lost_blocks(kernel) -> list[str]:
    """The kernel's TA908 sentences: a register change that cost it a resident block."""
    return [f"{finding.code} {finding.message}" for finding in kernel.findings if finding.code == LOST_BLOCK]


def row_status(old: Sequence | None, new: Sequence | None, lost: Sequence[str] = ()) -> tuple[str, list[str]]:
    """(status, the changes it lists: worse first) of a kernel whose figures, in FIGURES' order, are
    `old` and `new` (None: not in that build); `lost`: its TA908 sentences in the new build."""
    if old is None:
        return "added", []
    if new is None:
        return "removed", []
    worse, better = changes(changed_figures(dict(zip(FIGURES, old)), dict(zip(FIGURES, new))))
    worse += list(lost)
    return ("regressed" if worse else ("improved" if better else "unchanged")), worse + better


def row_document(name: str, demangled: str, arch: str, old: Sequence | None, new: Sequence | None, status: str,
                 said: list[str]) -> dict:
    """The row as `diff --format json` prints it."""
    return {"name": name, "demangled": demangled, "arch": arch,
            "old": dict(zip(FIGURES, old)) if old else None, "new": dict(zip(FIGURES, new)) if new else None,
            "status": status, "changes": said}
