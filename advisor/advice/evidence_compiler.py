"""Evidence from the compiler at the proposed cap: what ptxas reported when the change was
built (lint's cap check, frontier's points).

A cap that makes the kernel spill more than it does today is a likely loss: the occupancy it
buys is paid in local-memory traffic. Measured on an H200 (benchmarks/recorded/advice-h200.txt),
every cap that added 12 B or more of spill stores per thread ran slower (1.02x to 3.6x), while
caps that added 4-8 B ran faster in two of three cases: a spill of one or two values, stored
once outside the hot loop, costs little. So a spill of at most SMALL_SPILL_BYTES is reported
as a fact, not as a loss."""

from __future__ import annotations

from .verdict import Evidence

SMALL_SPILL_BYTES = 8  # per thread: two 32-bit values


def at_cap(before: dict, after: dict, small: int = SMALL_SPILL_BYTES) -> Evidence:
    """What the build at the cap says, against the build without it. `before` and `after`:
    {"registers", "spill_stores", "spill_loads", "stack_frame"} as ptxas reported them."""
    added = (after.get("spill_stores") or 0) - (before.get("spill_stores") or 0)
    value = {"registers": [before.get("registers"), after.get("registers")],
             "spill_stores": [before.get("spill_stores") or 0, after.get("spill_stores") or 0],
             "spill_loads": [before.get("spill_loads") or 0, after.get("spill_loads") or 0]}
    if added > small:
        return Evidence("compiler_at_cap", value, "loss",
                        f"built at the cap it spills {added} B more stores per thread")
    if added > 0:
        return Evidence("compiler_at_cap", value, "neutral",
                        f"built at the cap it spills {added} B more stores per thread (a small spill)")
    return Evidence("compiler_at_cap", value, "neutral", "built at the cap it spills no more than today")

