"""One verdict on one change, from everything known about the kernel: the composition of the
evidence gates that `tune`, frontier, suggest and the outcome table (benchmarks/advice.py)
share with the rules. Each gate is its own module; this only gathers what applies.

    >>> from tuneadvise.specs.resolve import resolve_arch
    >>> from tuneadvise.advisor.launch import LaunchConfig
    >>> known = Known(resolve_arch("sm_90"), LaunchConfig(registers=64, block_size=256, grid_size=4096),
    ...               sm_count=132)
    >>> register_cap_verdict(known, {"registers": 48, "spill_stores": 232}).outcome
    'likely_loss'
"""

from __future__ import annotations

from typing import NamedTuple

from ..engine.occupancy import occupancy
from ..launch import LaunchConfig
from ..text import percent
from .evidence_compiler import at_cap
from .evidence_launch import TAIL_SHARE
from .evidence_library import library
from .evidence_machine_code import machine_code
from .evidence_profile import profile
from .occupancy_step import block_step_evidence, step_evidence
from .verdict import Evidence, Verdict, combine


class Known(NamedTuple):
    """What is known about a kernel as it is today."""

    arch: object  # the Arch record
    launch: LaunchConfig  # its figures (registers, spills) and launch (block, grid)
    sm_count: int | None = None
    name: str = ""  # for the library gate
    instructions: dict | None = None  # sass.instructions
    hot_loop: dict | None = None  # sass.hot_loop
    profile: object = None  # evidence_profile.figures of its profiled launch (a LaunchFigures)


def _barriers(known: Known) -> int:
    return (known.instructions or {}).get("barriers", 0)


def _common(known: Known) -> list[Evidence]:
    found = [e for e in (library(known.name) if known.name else None,
                         machine_code(known.instructions, known.hot_loop)) if e is not None]
    return found + profile(known.profile)


def _verdict(known: Known, step: list[Evidence], built: dict | None) -> Verdict:
    """The step's evidence (occupancy_step.py), what a build of the change says, and the kernel's own gates."""
    launch = known.launch
    cap = [at_cap({"registers": launch.registers, "spill_stores": launch.spill_stores,
                   "spill_loads": launch.spill_loads}, built)] if built is not None and "spill_stores" in built else []
    return combine([*step, *cap, *_common(known)])


def change_verdict(known: Known, before, after, built: dict | None = None) -> Verdict:
    """A change that takes the kernel from Occupancy `before` to `after`; `built`: what ptxas
    reported for the changed build ({"registers", "spill_stores", ...}), where it was built."""
    step = step_evidence(before, after, known.launch.grid_size, known.sm_count, _barriers(known))
    return _verdict(known, step, built)


def register_cap_verdict(known: Known, built: dict) -> Verdict:
    """A register cap, from what ptxas reported at it ({"registers", "spill_stores", ...})."""
    before = occupancy(known.arch, known.launch)
    after = occupancy(known.arch, known.launch._replace(registers=built["registers"]))
    return change_verdict(known, before, after, built)


def block_size_verdict(known: Known, block_size: int, grid_size: int | None = None) -> Verdict:
    """A new block size for the same work: `grid_size` the grid at that block (else the same
    threads in all)."""
    launch = known.launch
    before = occupancy(known.arch, launch)
    after = occupancy(known.arch, launch.replace(block_size=block_size, grid_size=grid_size))
    step = block_step_evidence(before, after, (launch.block_size, block_size), launch.grid_size, known.sm_count,
                               launch.barriers, _barriers(known))
    return _verdict(known, step, None)


def chosen_block_verdict(occupancy_fraction: float, waves: dict | None) -> Verdict:
    """`suggest`'s block size: the highest occupancy is a heuristic (cudaOccMaxPotentialOccupancyBlockSize's
    own), so the verdict stays unknown unless the planned grid's tail already says it is no gain."""
    evidence = [Evidence("occupancy", {"occupancy": round(occupancy_fraction, 6)}, "neutral",
                         f"the highest occupancy of any block size, {percent(occupancy_fraction)}")]
    share = (waves or {}).get("tail_share_upper_bound") or 0
    if share >= TAIL_SHARE:
        evidence.append(Evidence("launch", {"tail_share": share}, "no_gain",
                                 f"the planned grid's last wave is partial: up to {percent(share)} of the run "
                                 "with SMs idle"))
    return combine(evidence)
