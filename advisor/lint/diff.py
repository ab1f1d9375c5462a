"""`tuneadvise diff` as a library: two builds compared kernel by kernel, in memory that
grows with the kernel count by a small index, never by two whole lint reports.

Each side is read and linted a kernel at a time (`run.lint_stream`, each kernel's records
dropped once linted) into an index keyed by (name, architecture, variant) that keeps only
the figures diff compares (`FIGURES`); the new side is linted against the old side's
registers, so TA908 names a register change that loses resident blocks. The rows are then
written one at a time in the document's order, their demangled names a batch at a time.

    >>> from tuneadvise.advisor.lint.run import LintOptions
    >>> doc = diff_paths("old.log", "new.log", LintOptions())  # doctest: +SKIP
    >>> doc.summary["regressed"]  # doctest: +SKIP
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import NamedTuple

from ..readers import demangle as names
from .diff_rows import STATUSES, kernel_figures, lost_blocks, row_document, row_status
from .diff_store import DiffStore, store_error, streamable
from .gather import gather
from .run import DEMANGLED_AT_ONCE, LintOptions, LintReport, group_records, lint_stream

SCHEMA_VERSION = 1  # `diff --format json`'s own layout

HEAD = {"schema_version": SCHEMA_VERSION}


class Side(NamedTuple):
    """One build's index: (name, arch, variant) -> its figures, in FIGURES' order (equal figures
    share one tuple), and the TA908 sentences of the kernels that lost a block to a register change."""

    figures: dict[tuple, tuple]
    lost_blocks: dict[tuple, list[str]]
    problems: list


class DiffDocument(NamedTuple):
    """The diff as a stream: `kernels()` yields each row afresh; `summary` counts rows by status."""

    head: dict  # "schema_version"
    kernels: Callable[[], Iterator[dict]]
    summary: dict
    problems: list  # the inputs' problems (InputProblem): with any, there is no comparison to report

    @property
    def tail(self) -> dict:
        """What follows the rows in the JSON document (formats.json_chunks writes head, rows, tail)."""
        return {"summary": self.summary}

    def whole(self) -> dict:
        return {**self.head, "kernels": list(self.kernels()), **self.tail}

    def listed(self) -> Iterator[dict]:
        """The rows a human report lists: those that changed (the summary counts the unchanged ones;
        JSON holds every row)."""
        return (row for row in self.kernels() if row["status"] != "unchanged")

    def summary_text(self) -> str:
        """The counts, in one sentence."""
        s = self.summary
        return (f"{s['regressed']} regressed, {s['improved']} improved, {s['added']} added, {s['removed']} removed, "
                f"{s['unchanged']} unchanged")


class _Registers(Mapping):
    """(name, arch) -> registers per thread in the old build, read from its index (TA908's earlier build)."""

    def __init__(self, side: Side):
        self._figures = side.figures

    def __getitem__(self, key):
        figures = self._figures.get((*key, None))
        if figures is None:
            raise KeyError(key)
        return figures[0]

    def __iter__(self):
        return ((name, arch) for name, arch, variant in self._figures if variant is None)

    def __len__(self):
        return sum(1 for _ in self)


def index_side(path: str, options: LintOptions, stdin=None) -> Side:
    """One build's figures per kernel, linted a kernel at a time."""
    gathered = gather([path], options, stdin)
    report = LintReport()
    grouped = group_records(gathered.read.records, options, report)
    gathered.read.records.clear()  # the grouped records are all that is kept, and only until linted
    side = Side({}, {}, gathered.read.problems)
    shared: dict[tuple, tuple] = {}  # equal figures, one tuple
    for _, name, arch, variant, kernel in lint_stream(grouped, options, gathered.index, report, consume=True):
        key = (name, arch, variant or None)
        figures = kernel_figures(kernel)
        side.figures[key] = shared.setdefault(figures, figures)
        lost = lost_blocks(kernel)
        if lost:
            side.lost_blocks[key] = lost
    side.problems.extend(report.problems)
    return side


def diff_paths(old: str, new: str, options: LintOptions, stdin=None) -> DiffDocument:
    """The comparison of two builds' kernels (ptxas logs, cuobjdump listings or binaries; '-':
    `stdin`). With a problem in either input, `problems` says so and there is no comparison."""
    if streamable(old, options) and streamable(new, options):
        document = _diff_in_store(old, new, options)
        if document is not None:
            return document
    before = index_side(old, options, stdin)
    after = index_side(new, replace(options, previous_registers=_Registers(before)), stdin)
    if before.problems or after.problems:  # a side missing kernels would report them as added or removed
        return DiffDocument(HEAD, lambda: iter(()), dict.fromkeys(STATUSES, 0), before.problems + after.problems)
    return compare_sides(before, after)


def _diff_in_store(old: str, new: str, options: LintOptions) -> DiffDocument | None:
    """The comparison of two text logs through an on-disk store (diff_store.py: neither build's
    records held); None where a log holds records no architecture names, which the in-memory path reads."""
    try:
        store = DiffStore()
    except sqlite3.Error as exc:
        raise store_error(exc) from None
    try:
        before = store.index(0, old, options)
        after = store.index(1, new, options) if before is not None else None
        if before is None or after is None:
            store.close()
            return None
        if before or after:
            store.close()
            return DiffDocument(HEAD, lambda: iter(()), dict.fromkeys(STATUSES, 0), before + after)
        return DiffDocument(HEAD, store.rows, store.compare(), [])
    except sqlite3.Error as exc:  # a full disk under the store
        store.close()
        raise store_error(exc) from None


def compare_sides(before: Side, after: Side) -> DiffDocument:
    """The rows of two indexes in the document's order: by status, then name and architecture."""
    order = []
    for keys in (before.figures, (k for k in after.figures if k not in before.figures)):
        for key in keys:
            status, said = row_status(before.figures.get(key), after.figures.get(key), after.lost_blocks.get(key, ()))
            order.append((STATUSES.index(status), key[0], key[1], key[2] or "", key, said))
    order.sort(key=lambda row: row[:4])
    counts = dict.fromkeys(STATUSES, 0)
    for status, *_ in order:
        counts[STATUSES[status]] += 1

    def kernels() -> Iterator[dict]:
        for start in range(0, len(order), DEMANGLED_AT_ONCE):
            batch = order[start:start + DEMANGLED_AT_ONCE]
            demangled = names.demangle_many(row[1] for row in batch)
            for status, name, arch, _, key, said in batch:
                yield row_document(name, demangled[name], arch, before.figures.get(key), after.figures.get(key),
                                   STATUSES[status], said)

    return DiffDocument(HEAD, kernels, counts, [])

