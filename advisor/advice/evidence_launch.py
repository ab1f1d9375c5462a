"""Evidence from the launch: whether more resident blocks per SM can change anything for this
grid, and what a new block size does to its waves and barriers.

- A grid whose every block is already resident at once (grid <= blocks per SM x SMs) gains
  nothing from room for more blocks: no block is waiting for a slot ("no_gain").
- A block size whose grid ends in a partial last wave costing TAIL_SHARE (5%, TA703's threshold)
  or more of the run, where the present one does not, or that leaves SMs with a single block
  of a kernel with barriers (TA702: it idles at every __syncthreads), is not a likely gain."""

from __future__ import annotations

from .verdict import Evidence

TAIL_SHARE = 0.05


def resident_grid(grid_size: int | None, blocks_per_sm: int, sm_count: int | None) -> Evidence | None:
    """'no_gain' when the whole grid is resident at once at today's occupancy."""
    if not grid_size or not sm_count:
        return None
    capacity = blocks_per_sm * sm_count
    if grid_size <= capacity:
        return Evidence("launch", {"grid_size": grid_size, "resident_blocks": capacity}, "no_gain",
                        f"all {grid_size} blocks of the grid are already resident at once "
                        f"({blocks_per_sm} blocks/SM x {sm_count} SMs)")
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
