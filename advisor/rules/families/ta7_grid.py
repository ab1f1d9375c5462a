"""TA7xx: the launch as a whole. These need the grid size (from the launch) and
the SM count (the launch's, else the product's), so they take a LaunchContext."""

from __future__ import annotations

from ...engine.occupancy import Occupancy, grid_waves
from ...text import percent, plural
from .. import LaunchContext, rule
from ..wording import per_sm


@rule(
    code="TA701", name="grid-smaller-than-sms", severity="warning", source="fermi-guide#Device Utilization",
    summary="Fewer blocks than SMs: part of the GPU idles",
    explanation="""A grid with fewer blocks than the device has SMs leaves SMs without work for the whole kernel.
    Raise the block count (smaller blocks, more work items) or run independent kernels concurrently in streams. A
    warning, as Nsight Compute's launch statistics flag a grid smaller than the SM count.""",
    trigger={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 100},
    clean={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1056},
    # On a profiled launch the grid under one wave is TA002's, with the measurement: one cause, one finding.
    on_measured_launch=False,
    needs=("grid_size",),
)
def grid_smaller_than_sms(launch: LaunchContext, params: dict):
    grid, sms = launch.result.kernel.grid_size, launch.sm_count
    if grid and sms and grid < sms:
        yield f"grid of {plural(grid, 'block', grouped=False)} leaves {sms - grid} of {sms} SMs idle", {"grid_size": grid, "sm_count": sms}


def _count(n: int, cluster: int | None) -> str:
    """Blocks, in clusters where the launch has them."""
    blocks = plural(n, "block", grouped=False)
    return f"{plural(n // cluster, 'cluster', grouped=False)} ({blocks})" if cluster else blocks


@rule(
    code="TA702", name="grid-small-with-barriers", severity="info", source="bpg",
    summary="Fewer than two blocks per SM for a kernel with barriers, where two could be resident",
    explanation="""While one block waits at __syncthreads, a second resident block can issue. With fewer blocks than
    twice the SM count, some SMs hold a single block and idle at every barrier. Silent where a second block could
    not be resident anyway (one block per SM fits, or the grid already fills every cluster slot of the device):
    more blocks would only queue; and where the grid is well under one wave, which TA703 says (with the barriers).
    Information: Nsight Compute notes grids under two blocks per SM; the cost depends
    on how long blocks wait at barriers.""",
    trigger={"arch": "h100-sxm", "registers": 32, "block_size": 1024, "grid_size": 260, "barriers": 1},
    clean={"arch": "h100-sxm", "registers": 32, "block_size": 1024, "grid_size": 260, "barriers": 0},
    needs=("grid_size",),
)
def grid_small_with_barriers(launch: LaunchContext, params: dict):
    kernel, sms, wave = launch.result.kernel, launch.sm_count, launch.wave
    grid = kernel.grid_size
    if not (grid and sms and wave and kernel.barriers > 0) or under_a_wave(launch):
        return  # a grid well under one wave is TA703's, which names the barriers too
    resident, cluster = wave
    aim = min(2 * sms, resident)  # more than can be resident at once would only queue
    if cluster:
        aim -= aim % cluster
    if sms <= grid < aim:
        # Blocks go out breadth first: every SM gets one, then grid - sm_count SMs a second.
        single = 2 * sms - grid
        yield (f"grid of {grid} blocks on {sms} SMs leaves {plural(single, 'SM', grouped=False)} with a single block, "
               f"which idles at every __syncthreads; aim for at least {_count(aim, cluster)}"), \
            {"grid_size": grid, "sm_count": sms, "single_block_sms": single, "aim": aim, "cluster_size": cluster}


def waves(result: Occupancy, grid_size: int, sm_count: int, per_wave: int | None = None) -> dict | None:
    """The grid in waves of (blocks per SM x SMs) blocks, or of `per_wave` (resident clusters x
    their size); None when no block is resident."""
    per_wave = per_wave if per_wave is not None else result.active_blocks_per_sm * sm_count
    if not per_wave:
        return None
    full, partial = divmod(grid_size, per_wave)
    fill = partial / per_wave
    lost = (1 - fill) / (full + 1) if partial else 0.0
    return {"blocks_per_wave": per_wave, "full_waves": full, "partial_wave_blocks": partial,
            "waves": round(grid_waves(result, grid_size, sm_count), 4), "tail_share_upper_bound": round(lost, 4)}


def under_a_wave(launch: LaunchContext, min_share: float = 0.05) -> bool:
    """The grid leaves `min_share` or more of one wave's slots empty, with every SM busy and room
    for more than one block on each: TA703's first case, which TA702 defers to."""
    result, sms, wave = launch.result, launch.sm_count, launch.wave
    grid = result.kernel.grid_size
    return bool(grid and sms and wave and result.launchable and sms <= grid < wave[0]
                and result.active_blocks_per_sm > 1 and 1 - grid / wave[0] >= min_share)


@rule(
    code="TA703", name="tail-effect", severity="warning", source="bpg",
    summary="The last wave of blocks is partial",
    explanation="""A grid runs in waves of (blocks per SM x SMs) blocks, or, with clusters, of (clusters resident on
    the device x cluster size) blocks. When the last wave is only partly full, the SMs without blocks idle until it
    ends. The upper bound assumes blocks of uniform duration: with W full waves and a partial one, the partial wave
    may cost up to 1/(W+1) of the run time. A warning when the partial wave may cost 5% or more of the run time (the
    upper bound 1/(W+1), Nsight Compute's tail-effect estimate); below that it is noise. A grid under one wave is
    said only where the slots it leaves empty are 5% or more of a wave.""",
    params={"min_share": 0.05},
    trigger={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1200},
    clean={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1056},
    # On a profiled launch the tail and the grid under a wave are TA003's and TA002's: one cause, one finding.
    on_measured_launch=False,
    needs=("grid_size",),
)
def tail_effect(launch: LaunchContext, params: dict):
    result, sms, wave = launch.result, launch.sm_count, launch.wave
    grid = result.kernel.grid_size
    if not (grid and sms and wave and result.launchable) or grid < sms:
        return
    resident, cluster = wave
    w = waves(result, grid, sms, resident)
    w["cluster_size"] = cluster
    if not w["full_waves"]:
        # Less than one wave: every SM has work, it just holds fewer blocks than it could.
        blocks = result.active_blocks_per_sm
        if under_a_wave(launch, params["min_share"]):
            barriers = ("; SMs holding a single block idle at every __syncthreads"
                        if result.kernel.barriers > 0 and grid < 2 * sms else "")
            yield (f"grid of {_count(grid, cluster)} is {w['waves']} of one wave of {_count(resident, cluster)}"
                   f" ({per_sm(blocks)} x {sms} SMs at most): no SM is idle, but each runs about {grid / sms:.2g} of "
                   f"the {blocks} blocks it could hold{barriers}; a larger grid (smaller blocks or less work per "
                   "block) fills them"), w
        return
    if w["partial_wave_blocks"] and w["tail_share_upper_bound"] >= params["min_share"]:
        yield (f"{w['waves']} waves of {_count(resident, cluster)}: the last holds "
               f"{_count(w['partial_wave_blocks'], cluster)}, "
               f"so up to {percent(w['tail_share_upper_bound'])} of the run time may be spent with SMs idle "
               "(local upper bound, uniform block times); round the grid to a multiple of "
               f"{_count(resident, cluster)} or make blocks smaller"), w
