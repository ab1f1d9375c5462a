"""Evidence from the launch: whether more resident blocks per SM can change anything for this
grid, and what a new block size does to its waves and barriers.

- A grid whose every block is already resident at once (grid <= blocks per SM x SMs) gains
  nothing from room for more blocks: no block is waiting for a slot ("no_gain").
- A block size whose grid ends in a partial last wave costing TAIL_SHARE (5%, TA703's threshold)
  or more of the run, where the present one does not, or that leaves SMs with a single block
  of a kernel with barriers (TA702: it idles at every __syncthreads), is not a likely gain.
- A change that leaves fewer resident warps is a likely loss: fewer warps to hide latency with
  (measured on an H200, benchmarks/recorded/advice-verdicts-h200.txt: of block sizes that lowered
  occupancy on grids that filled the SMs, all but one ran slower or the same). Where the grid has
  fewer blocks than SMs, smaller blocks spread it over more SMs whatever the occupancy, so it
  stays unknown.
- A kernel with barriers (BAR instructions in its machine code) at one resident block per SM idles
  the SM at every __syncthreads; a change that makes room for a second block lets it issue
  meanwhile (the Best Practices Guide's reason for several blocks per SM; TA702) ("gain")."""

from __future__ import annotations

from ..text import plural
from .verdict import Evidence

TAIL_SHARE = 0.05


def resident_grid(grid_size: int | None, blocks_per_sm: int, sm_count: int | None) -> Evidence | None:
    """'no_gain' when the whole grid is resident at once at today's occupancy."""
    if not grid_size or not sm_count:
        return None
    capacity = blocks_per_sm * sm_count
    if grid_size <= capacity:
        whole = "its one block is" if grid_size == 1 else f"all {grid_size} blocks of the grid are"
        return Evidence("launch", {"grid_size": grid_size, "resident_blocks": capacity}, "no_gain",
                        f"{whole} already resident at once ({plural(blocks_per_sm, 'block', grouped=False)}/SM x "
                        f"{plural(sm_count, 'SM', grouped=False)})")
    return Evidence("launch", {"grid_size": grid_size, "resident_blocks": capacity}, "neutral",
                    f"{grid_size} blocks run in waves of {capacity}")


def _tail(grid: int, per_wave: int) -> float:
    full, partial = divmod(grid, per_wave)
    return 0.0 if not partial else (1 - partial / per_wave) / (full + 1)


def block_change(grid_threads: int | None, before: tuple[int, int], after: tuple[int, int], sm_count: int | None,
                 barriers: int) -> list[Evidence]:
    """A block-size change for a fixed amount of work (`grid_threads` threads in all):
    `before`/`after` are (block size, blocks per SM)."""
    if not grid_threads or not sm_count:
        return []
    found = []
    (size0, blocks0), (size1, blocks1) = before, after
    grid0, grid1 = -(-grid_threads // size0), -(-grid_threads // size1)
    tail0, tail1 = _tail(grid0, blocks0 * sm_count), _tail(grid1, blocks1 * sm_count)
    if tail1 >= TAIL_SHARE and tail1 > tail0:
        found.append(Evidence("launch", {"tail_share": [round(tail0, 4), round(tail1, 4)]}, "no_gain",
                              f"its last wave is partial: up to {tail1:.0%} of the run with SMs idle"))
    if barriers and sm_count <= grid1 < 2 * sm_count:
        found.append(Evidence("launch", {"grid_size": grid1, "sm_count": sm_count}, "no_gain",
                              f"its grid of {grid1} blocks leaves SMs with one block that idles at __syncthreads"))
    return found


def fewer_warps(before, after, grid_size: int | None, sm_count: int | None) -> Evidence | None:
    """'loss' where `after` (an Occupancy) holds fewer resident warps than `before` on a grid that
    fills the SMs; 'no_gain' on a grid smaller than the SM count; None where warps do not fall."""
    if after.active_warps_per_sm >= before.active_warps_per_sm:
        return None
    value = {"warps_per_sm": [before.active_warps_per_sm, after.active_warps_per_sm]}
    if grid_size and sm_count and grid_size < sm_count:
        return Evidence("launch", {**value, "grid_size": grid_size, "sm_count": sm_count}, "no_gain",
                        f"the grid of {grid_size} blocks leaves SMs idle: smaller blocks spread it over more SMs")
    return Evidence("launch", value, "loss",
                    f"{before.active_warps_per_sm} -> {after.active_warps_per_sm} resident warps per SM: fewer "
                    "to hide latency with")


def barrier_relief(blocks_before: int, blocks_after: int, barrier_instructions: int) -> Evidence | None:
    """'gain' where a kernel with barriers goes from one resident block per SM to two or more."""
    if blocks_before == 1 and blocks_after >= 2 and barrier_instructions:
        return Evidence("launch", {"blocks_per_sm": [blocks_before, blocks_after],
                                   "barrier_instructions": barrier_instructions}, "gain",
                        f"at 1 block/SM the SM idles at every __syncthreads; {blocks_after} blocks/SM let one "
                        "issue while another waits")
    return None
