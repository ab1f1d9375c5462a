"""frontier's words for where a build spills (advisor/frontier.Point.spill_places), which the
command's text lays out unchanged."""

import pytest

from tuneadvise.advisor.frontier import SPILL_LINES_SHOWN, Point


def point(cap, stores, lines):
    return Point(max_registers=cap, registers=32, spill_stores=stores, spill_loads=stores, stack_frame=stores,
                 active_blocks_per_sm=8, occupancy=1.0, spill_lines=tuple(lines))


def line(path, number, stores, loads):
    return {"file": path, "line": number, "stores": stores, "loads": loads}


def test_the_lines_that_spill_most_are_named_with_their_bytes_and_the_rest_counted():
    lines = [line("/src/k.cu", 23, 64, 32), line("/src/k.cu", 14, 32, 32), line("/src/h.cuh", 7, 8, 0),
             line("/src/k.cu", 40, 4, 4), line(None, 9, 4, 0)]
    assert SPILL_LINES_SHOWN == 3
    assert point(40, 100, lines).spill_places == \
        "cap 40 spills at k.cu:23 (96 B), k.cu:14 (64 B), h.cuh:7 (8 B) and 2 more lines"
    assert point(None, 100, lines[:1]).spill_places == "uncapped spills at k.cu:23 (96 B)"
    assert point(40, 100, lines[:4]).spill_places.endswith("h.cuh:7 (8 B) and 1 more line")


def test_no_words_without_spills_or_without_their_lines():
    assert point(40, 0, [line("k.cu", 1, 4, 4)]).spill_places is None
    assert point(40, 100, []).spill_places is None


@pytest.mark.parametrize("count, said", [(4, "and 1 more line"), (5, "and 2 more lines"), (3, None)])
def test_frontiers_spill_lines_agree_in_number(count, said):
    text = point(40, 100, [line("k.cu", n, 4, 4) for n in range(count)]).spill_places
    assert (text.endswith(said) if said else "more" not in text) and "1 more lines" not in text


@pytest.mark.parametrize("glob, said", [(None, "FILE: k.cu holds no kernel"),
                                        ("", "--kernel: '' matches no kernel of k.cu"),
                                        ("gemm*", "--kernel: 'gemm*' matches no kernel of k.cu")])
def test_a_glob_that_picks_nothing_is_named_even_when_empty(monkeypatch, glob, said):
    """`frontier k.cu --kernel ''` said 'k.cu holds no kernel' of a file that holds several."""
    from tuneadvise.advisor.frontier import FrontierReport
    from tuneadvise.advisor.queries.frontier import frontier_query
    from tuneadvise.specs.errors import InputError

    monkeypatch.setattr("tuneadvise.advisor.frontier.frontier", lambda *a, **k: FrontierReport([], [], "ptxas"))
    with pytest.raises(InputError) as raised:
        frontier_query("k.cu", ["sm_90"], (256,), glob)
    assert str(raised.value) == said
