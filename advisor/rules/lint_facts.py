"""What lint hands its own rules about a kernel's build, as facts the rules word themselves."""

from __future__ import annotations

from typing import NamedTuple


class Reading(NamedTuple):
    """One source's value of a figure: `source` as lint names it ("ptxas", "cubin", "config", "host
    code"), `value` as written ("32", "16x16"), and where it was read (file:line), if known."""

    source: str
    value: str
    where: str | None = None


class Disagreement(NamedTuple):
    """A figure the kernel's sources give differently (TA905); the first reading is the one used."""

    figure: str  # "registers", "static shared memory", "stack frame", or "block" (a config entry against host code)
    readings: tuple[Reading, ...]
