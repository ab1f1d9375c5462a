"""The evidence of one occupancy step: a change (a register cap, a block size) that takes a kernel
from one residency to another, judged from what the launch shows. This is the one builder of it:
TA301's and TA302's steps and the judge (`tune`, frontier, suggest, the outcome table) all call
`step_evidence` or `block_step_evidence`, so a finding and a command give the same verdict on the
same change.

- the occupancy the change buys ("neutral"), or "no_gain" where it adds no resident warp;
- fewer resident warps (evidence_launch.fewer_warps);
- a kernel with barriers leaving one resident block per SM (evidence_launch.barrier_relief), where
  its machine code's barrier count is known;
- a grid already resident whole at today's occupancy (evidence_launch.resident_grid);
- for a block size, the new grid's last wave and barriers (evidence_launch.block_change).

    >>> step_evidence(Side(4, 32, 0.5), Side(5, 40, 0.625), grid_size=4096, sm_count=132)[0].why
    '50% -> 62.5% occupancy'
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import NamedTuple

from ..text import percent
from .evidence_launch import barrier_relief, block_change, fewer_warps, resident_grid
from .verdict import Evidence


class Side(NamedTuple):
    """A kernel's residency on one side of a change (the fields an engine Occupancy has, by the same
    names, so an Occupancy serves as one)."""

    active_blocks_per_sm: int
    active_warps_per_sm: int
    occupancy: float


def step_side(step, warps_per_block: int) -> Side:
    """The residency at an engine what-if Step (blocks per SM and occupancy) of blocks of
    `warps_per_block` warps."""
    return Side(step.blocks_per_sm, step.blocks_per_sm * warps_per_block, step.occupancy)


def step_evidence(before, after, grid_size: int | None, sm_count: int | None,
                  barrier_instructions: int = 0) -> list[Evidence]:
    """The occupancy step from `before` to `after` (Sides or Occupancy results) of a launch of
    `grid_size` blocks on `sm_count` SMs (either None where unknown); `barrier_instructions`: the BAR
    instructions of its machine code, 0 where unknown."""
    blocks = [before.active_blocks_per_sm, after.active_blocks_per_sm]
    value = {"blocks_per_sm": blocks, "occupancy": [round(before.occupancy, 6), round(after.occupancy, 6)]}
    said = f"{percent(before.occupancy)} -> {percent(after.occupancy)} occupancy"
    if after.active_warps_per_sm == before.active_warps_per_sm:
        found = [Evidence("occupancy", value, "no_gain", f"{said}: no more warps")]
    else:
        found = [Evidence("occupancy", value, "neutral", said), fewer_warps(before, after, grid_size, sm_count),
                 barrier_relief(*blocks, barrier_instructions)]
    found.append(resident_grid(grid_size, before.active_blocks_per_sm, sm_count))
    return [e for e in found if e is not None]


def block_step_evidence(before, after, block_sizes: tuple[int, int], grid_size: int | None, sm_count: int | None,
                        barriers: int, barrier_instructions: int = 0) -> list[Evidence]:
    """step_evidence for a new block size (`block_sizes`: today's and the new one) over the same
    threads, with what the new grid's waves make of it; `barriers`: the named barriers a block uses
    (the launch's figure)."""
    threads = (grid_size or 0) * block_sizes[0] or None
    tail = block_change(threads, (block_sizes[0], before.active_blocks_per_sm),
                        (block_sizes[1], after.active_blocks_per_sm), sm_count, barriers)
    return step_evidence(before, after, grid_size, sm_count, barrier_instructions) + tail
