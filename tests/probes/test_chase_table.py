"""The latency probe's pointer-chase table, made on the device from the cycle alone: run here with
numpy standing in for CuPy (the calls it makes, zeros, a strided slice assignment and asarray,
mean the same in both)."""

import numpy as np

from tuneadvise.probes.suite import _chase_table, _random_cycle


def test_the_table_holds_one_cycle_through_every_slot_and_nothing_else():
    entries, stride = 5000, 32
    table = _chase_table(np, entries, stride, seed=4)
    assert table.dtype == np.uint32 and table.shape == (entries * stride,)
    # As the table was built on the host before: each slot's first word the index of the next slot.
    expected = np.zeros(entries * stride, dtype=np.uint32)
    expected[np.arange(entries) * stride] = (_random_cycle(entries, 4) * stride).astype(np.uint32)
    assert np.array_equal(table, expected)
    seen, position = set(), 0
    for _ in range(entries):
        assert position % stride == 0 and position not in seen
        seen.add(position)
        position = int(table[position])
    assert position == 0 and len(seen) == entries
