"""TA5xx: registers and spills."""

from __future__ import annotations

from ...engine.occupancy import Occupancy
from .. import rule


@rule(
    code="TA501", name="register-spills", severity="warning", source="volta-guide#4.3.2",
    summary="The kernel spills registers to local memory",
    explanation="""Spill stores and loads go through the L1 cache to local memory. On Volta and Turing the cost
    of spills is lower than on Pascal, and the balance between occupancy and spilling should be re-evaluated: a
    cap that raises occupancy but adds spills may be slower, and vice versa. Compare -maxrregcount /
    __launch_bounds__ settings by timing.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 256, "spill_stores": 128},
    clean={"arch": "volta", "registers": 32, "block_size": 256, "spill_stores": 0},
)
def register_spills(result: Occupancy, params: dict):
    kernel = result.kernel
    if not kernel.spill_stores:
        return
    note = ""
    if result.arch.family in ("volta", "turing"):  # the guide's 7.x
        note = "; spills cost less on 7.x than on Pascal: re-evaluate the occupancy/spilling balance by timing both"
    loads = f" and {kernel.spill_loads} B of spill loads" if kernel.spill_loads else ""
    yield (f"{kernel.spill_stores} B of spill stores{loads} per thread{note}",
           {"spill_stores": kernel.spill_stores, "spill_loads": kernel.spill_loads})
