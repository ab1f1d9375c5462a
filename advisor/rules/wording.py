"""Phrases the rule messages share ("1 block/SM", "2 blocks/SM", "k.cu:12, k.cu:40", what a launch sets at
run time)."""

from __future__ import annotations

import os

from ..text import plural


def per_sm(n: int) -> str:
    """'1 block/SM', '4 blocks/SM'."""
    return plural(n, "block", grouped=False) + "/SM"


MAX_NAMED_LINES = 5  # source lines named in a finding's message; all go to its details


def named_lines(places) -> str:
    """'k.cu:12, k.cu:40 and 3 more': the first MAX_NAMED_LINES of {file, line} places."""
    shown = [f"{os.path.basename(p['file'] or '?')}:{p['line']}" for p in places[:MAX_NAMED_LINES]]
    more = f" and {len(places) - MAX_NAMED_LINES} more" if len(places) > MAX_NAMED_LINES else ""
    return ", ".join(shown) + more


def register_peak(sass):
    """What TA301 and TA907 (occupancy limited by registers; a cap met by spilling) add from the
    machine code: the registers live at once and the lines where they peak; None where unknown."""
    peaks = [{"file": file, "line": line} for file, line in sass.peak_lines]
    if not peaks or sass.peak_live_registers is None:
        return None
    return (f"{sass.peak_live_registers} registers live at once at {named_lines(peaks)}",
            {"peak_live_registers": sass.peak_live_registers, "pressure_lines": peaks})


def cap_built(at_cap: dict) -> tuple[str, dict]:
    """What TA301 and TA304 add where lint built the register change they suggest
    (toolchain/cap_check.py): ptxas's figures at that cap, spills always said."""
    stores, loads = at_cap["spill_stores"] or 0, at_cap["spill_loads"] or 0
    if stores or loads:
        words = (f"built: {at_cap['registers']} registers and {stores} B spill stores, {loads} B spill loads per "
                 f"thread ({at_cap['stack_frame'] or 0} B stack frame, in local memory)")
    else:
        words = f"built: {at_cap['registers']} registers, no spills"
    return words, {"at_cap": at_cap}


def run_time_text(run_time: tuple[str, ...], site: str) -> str:
    """'block size set at run time at softmax.cu:571:5': what a launch at `site` sets at run time
    (lint_facts.RunTimeLaunch.run_time; () says the launch)."""
    values = list(run_time) or ["launch"]
    listed = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} and {values[-1]}"
    return f"{listed} set at run time at {site}"
