"""A bounded cache for answers computed from an architecture and a few
hashable values: what the batch writer, the rules and the what-if searches
reuse across thousands of kernels.

Keyed by the Arch's id (an Arch holds a dict, so it does not hash), with the
Arch kept in the entry so that an id reused after an Arch is garbage-collected
can never hit. A full cache is dropped whole rather than evicted entry by
entry: the answers are cheap to recompute, and the bookkeeping would not be.
"""

from __future__ import annotations


class PerArch:
    def __init__(self, limit: int):
        self.limit = limit
        self.entries: dict = {}

    def get(self, arch, key, make):
        """The answer for (arch, key), from make() the first time."""
        slot = (id(arch), key)
        hit = self.entries.get(slot)
        if hit is None or hit[0] is not arch:
            if len(self.entries) >= self.limit:
                self.entries.clear()
            hit = self.entries[slot] = (arch, make())
        return hit[1]

    def __len__(self) -> int:
        return len(self.entries)

    def clear(self) -> None:
        self.entries.clear()
