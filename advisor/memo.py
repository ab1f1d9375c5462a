"""Bounded caches of answers computed from an architecture and a few hashable
values: what the engine's limits, the batch writer, the rules and the what-if
searches reuse across thousands of kernels.

One dict of answers per architecture, found by the Arch's id (an Arch holds a
dict, so it does not hash), with the Arch kept beside it so that an id reused
after an Arch is garbage-collected can never hit. A full table is dropped whole
rather than evicted entry by entry: the answers are cheap to recompute, and the
bookkeeping would not be.
"""

from __future__ import annotations

ARCHS = 64  # architectures held at once; one more (a sweep over spec files) drops them all
_MISSING = object()


class PerArch:
    def __init__(self, limit: int):
        self.limit = limit  # answers per architecture
        self.tables: dict = {}  # id(arch) -> (arch, {key: answer})

    def table(self, arch) -> dict:
        """The architecture's answers by key. A caller on a hot path reads it directly, and
        stores through put()."""
        entry = self.tables.get(id(arch))
        if entry is None or entry[0] is not arch:
            if len(self.tables) >= ARCHS:
                self.tables.clear()
            entry = self.tables[id(arch)] = (arch, {})
        return entry[1]

    def put(self, table: dict, key, answer):
        """Store `answer` in `table` (one of table()'s), dropping the table first when full."""
        if len(table) >= self.limit:
            table.clear()
        table[key] = answer
        return answer

    def get(self, arch, key, make):
        """The answer for (arch, key), from make() the first time."""
        table = self.table(arch)
        hit = table.get(key, _MISSING)
        return self.put(table, key, make()) if hit is _MISSING else hit

    def __len__(self) -> int:
        return sum(len(table) for _, table in self.tables.values())

    def clear(self) -> None:
        self.tables.clear()
