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


class RunTimeLaunch(NamedTuple):
    """A launch in the source's host code that sets a kernel's block at run time (TA906 names it)."""

    kernel: str  # as the lint names it (demangled)
    site: str  # file:line:column
    run_time: tuple[str, ...]  # what it sets at run time ("block size", "grid", ...); () where nothing more is known
