"""`diff` of two text logs (ptxas -v output, cuobjdump listings) without holding either build's records.

Each side's records stream from the log into an on-disk SQLite table (a temporary file),
come back in key order (name, architecture, variant) a kernel at a time to be linted, and
leave only their figures, in a second table; the comparison is a join of the two sides'
figures, its rows written to a third table and read back in the document's order. What
Python holds a batch of kernels (run.DEMANGLED_AT_ONCE) at a time; the rows equal diff.py's
in-memory comparison (tests/lint/test_diff_store.py). So the process's peak stays flat as the
logs grow, where the in-memory comparison's grows with them (benchmarks/diff_memory.py).
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import pickle
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping

from ..readers import demangle as names
from ..readers.usage import SOURCE_SUFFIXES, ReadResult, is_binary, read_text
from .diff_rows import STATUSES, kernel_figures, lost_blocks, row_document, row_status
from .run import DEMANGLED_AT_ONCE, NO_ARCH, LintOptions, LintReport, lint_groups

_SCHEMA = """
CREATE TABLE records (side INTEGER, name TEXT, arch TEXT, variant TEXT, record BLOB);
CREATE TABLE figures (side INTEGER, name TEXT, arch TEXT, variant TEXT, figures TEXT, lost TEXT,
                      PRIMARY KEY (side, name, arch, variant));
CREATE TABLE rows (status INTEGER, name TEXT, arch TEXT, variant TEXT, old TEXT, new TEXT, changes TEXT);
"""
_BATCH = 4096  # rows inserted at once


def streamable(path: str, options: LintOptions) -> bool:
    """Whether `path` can be diffed through the store: a regular file of text build output (no
    binary, source, profile or folder), and no config kernel described by its figures alone."""
    from ..readers.ncu import SNIFF_BYTES
    from .profiled import is_profile

    if path == "-" or not os.path.isfile(path) or path.lower().endswith(SOURCE_SUFFIXES):
        return False
    if any(entry.registers is not None for entry in options.config.kernels):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    return not (is_binary(head) or is_profile(head, path))


class _Spool:
    """ReadResult.records for read_text: each record pickled into the store as it is parsed."""

    def __init__(self, db: sqlite3.Connection, side: int):
        self.db, self.side, self.count = db, side, 0

    def extend(self, records) -> None:
        rows = ((self.side, r.name, r.arch, r.variant or "", pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL))
                for r in records)
        while chunk := list(itertools.islice(rows, _BATCH)):
            self.db.executemany("INSERT INTO records VALUES (?, ?, ?, ?, ?)", chunk)
            self.count += len(chunk)

    def __len__(self) -> int:
        return self.count


class _Registers(Mapping):
    """(name, arch) -> the old build's registers per thread, looked up in the store (TA908's earlier build)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __getitem__(self, key):
        row = self.db.execute("SELECT figures FROM figures WHERE side = 0 AND name = ? AND arch = ? AND variant = ''",
                              key).fetchone()
        if row is None:
            raise KeyError(key)
        return json.loads(row[0])[0]

    def __iter__(self):
        return iter(())  # looked up, never listed

    def __len__(self):
        return 0


def store_error(exc: sqlite3.Error) -> OSError:
    """What a failed store raises: the OSError of a full or failing disk (exit 74, one line naming
    the folder), as writing the output there would, rather than an internal error."""
    folder = tempfile.gettempdir()
    if "full" in str(exc):
        return OSError(errno.ENOSPC, "no space left for diff's temporary store (TMPDIR names another folder)", folder)
    return OSError(errno.EIO, f"diff's temporary store failed: {exc}", folder)


class DiffStore:
    """The two sides of one diff in a temporary SQLite file, removed when closed."""

    def __init__(self):
        self.folder = tempfile.TemporaryDirectory(prefix="tuneadvise-diff-")
        self.db = sqlite3.connect(os.path.join(self.folder.name, "diff.sqlite"))
        # Sorts and the page cache on disk past a few megabytes: memory flat in the logs' size.
        self.db.executescript("PRAGMA temp_store = FILE; PRAGMA cache_size = -8192; PRAGMA journal_mode = OFF;"
                              + _SCHEMA)

    def close(self) -> None:
        self.db.close()
        self.folder.cleanup()

    def index(self, side: int, path: str, options: LintOptions) -> list | None:
        """Lint one side into the store; its problems, or None when it holds records no
        architecture names (a lone cubin's cuobjdump listing: diff.py's own path handles them)."""
        result = ReadResult(records=_Spool(self.db, side))
        with open(path, encoding="utf-8", errors="replace") as handle:
            read_text(handle, path, result)
        if self.db.execute("SELECT 1 FROM records WHERE side = ? AND arch = ? LIMIT 1", (side, NO_ARCH)).fetchone():
            return None
        if side == 1:
            options = _with_previous(options, _Registers(self.db))
        report = LintReport()
        rows = []
        for _, name, arch, variant, kernel in lint_groups(self._groups(side, options), options, None, report):
            lost = lost_blocks(kernel)
            rows.append((side, name, arch, variant, json.dumps(kernel_figures(kernel)), json.dumps(lost) if lost else None))
            if len(rows) >= _BATCH:
                self._figures(rows)
        self._figures(rows)
        self.db.execute("DELETE FROM records WHERE side = ?", (side,))
        return result.problems + report.problems

    def _figures(self, rows: list) -> None:
        self.db.executemany("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?, ?)", rows)
        rows.clear()

    def _groups(self, side: int, options: LintOptions) -> Iterator:
        archs = set(options.target_archs)
        cursor = self.db.execute("SELECT name, arch, variant, record FROM records WHERE side = ? "
                                 "ORDER BY name, arch, variant, rowid", (side,))
        for (name, arch, variant), rows in itertools.groupby(cursor, key=lambda row: row[:3]):
            if archs and arch not in archs:
                continue
            evidence = [pickle.loads(row[3]) for row in rows]
            yield (name, arch, variant or None), evidence[0] if len(evidence) == 1 else evidence

    def compare(self) -> dict:
        """The rows of both sides into the store in status order; the count of each status."""
        counts = dict.fromkeys(STATUSES, 0)
        joined = self.db.execute(
            "SELECT a.name, a.arch, a.variant, a.figures, b.figures, b.lost FROM figures a LEFT JOIN figures b "
            "ON b.side = 1 AND b.name = a.name AND b.arch = a.arch AND b.variant = a.variant WHERE a.side = 0 "
            "UNION ALL SELECT b.name, b.arch, b.variant, NULL, b.figures, b.lost FROM figures b WHERE b.side = 1 "
            "AND NOT EXISTS (SELECT 1 FROM figures a WHERE a.side = 0 AND a.name = b.name AND a.arch = b.arch "
            "AND a.variant = b.variant)")
        writer = self.db.cursor()
        while chunk := joined.fetchmany(_BATCH):
            rows = []
            for name, arch, variant, old, new, lost in chunk:
                status, said = row_status(json.loads(old) if old else None, json.loads(new) if new else None,
                                          json.loads(lost) if lost else ())
                counts[status] += 1
                rows.append((STATUSES.index(status), name, arch, variant, old, new, json.dumps(said)))
            writer.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        return counts

    def rows(self) -> Iterator[dict]:
        """The comparison's rows in the document's order: status, then name, architecture, variant."""
        try:
            yield from self._rows()
        except sqlite3.Error as exc:  # the sort's temporary pages on a full disk
            raise store_error(exc) from None

    def _rows(self) -> Iterator[dict]:
        cursor = self.db.execute("SELECT status, name, arch, old, new, changes FROM rows "
                                 "ORDER BY status, name, arch, variant")
        while batch := cursor.fetchmany(DEMANGLED_AT_ONCE):
            demangled = names.demangle_many(row[1] for row in batch)
            for status, name, arch, old, new, said in batch:
                yield row_document(name, demangled[name], arch, json.loads(old) if old else None,
                                   json.loads(new) if new else None, STATUSES[status], json.loads(said))


def _with_previous(options: LintOptions, registers: Mapping) -> LintOptions:
    from dataclasses import replace

    return replace(options, previous_registers=registers)
