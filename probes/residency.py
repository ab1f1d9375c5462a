"""Counting co-resident blocks from the (SM, start, end) record each block of
the residency kernel writes. Pure Python, so it is tested without a GPU."""

from __future__ import annotations

from collections import defaultdict


def max_resident_per_sm(records, margin_ns: int = 0) -> dict[int, int]:
    """records: iterable of (sm_id, start_ns, end_ns). Returns, per SM, the most
    blocks that were resident at one instant.

    Each interval is shrunk by `margin_ns` at both ends before counting: blocks
    of one wave overlap for nearly the whole hold time, while a block that
    replaces a retired one can appear to overlap it by a timer tick or two
    (%globaltimer is coarse and read by different blocks). Measured on an H100,
    without a margin one extra block per SM showed up at wave boundaries. At
    equal times, ends are counted before starts.
    """
    events = defaultdict(list)
    for sm, start, end in records:
        start, end = int(start) + margin_ns, int(end) - margin_ns
        if end <= start:
            continue  # shorter than twice the margin: cannot tell; the caller holds blocks long enough
        events[int(sm)].append((start, 1))
        events[int(sm)].append((end, -1))
    result = {}
    for sm, items in events.items():
        items.sort(key=lambda e: (e[0], e[1]))  # at equal times, ends (-1) before starts (+1)
        current = best = 0
        for _, delta in items:
            current += delta
            best = max(best, current)
        result[sm] = best
    return result


def summarize(per_sm: dict[int, int]) -> dict:
    """The figure compared with the engine is the most blocks any SM held; the
    least is reported too, since an SM that never filled up means the grid or
    the hold time was too small to tell."""
    values = list(per_sm.values())
    return {"max": max(values), "min": min(values), "sms": len(values)} if values else {"max": 0, "min": 0, "sms": 0}
