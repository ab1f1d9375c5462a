"""The shared words and text rules (advisor/text.py): each example's expected text is what the
README and the messages promise, written out by hand."""

from __future__ import annotations

import errno
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuneadvise.advisor.text import (
    clip,
    json_line,
    markdown_text,
    percent,
    plural,
    quoted,
    terminal_text,
    utf8_text,
    xml_text,
)
from tuneadvise.specs.files import read_bounded


@pytest.mark.parametrize("fraction, text", [(0.625, "62.5%"), (0.75, "75%"), (0.5, "50%"), (1.0, "100%"),
                                            (0.0, "0%"), (1 / 3, "33.3%")])
def test_occupancy_is_printed_one_way(fraction, text):
    assert percent(fraction) == text


@pytest.mark.parametrize("args, kwargs, text", [
    ((1, "block"), {}, "1 block"), ((4, "block"), {}, "4 blocks"), ((1024, "thread"), {}, "1,024 threads"),
    ((1024, "thread"), {"grouped": False}, "1024 threads"), ((2, "index", "indices"), {}, "2 indices"),
    ((2.5, "wave"), {}, "2.5 waves")])
def test_plural_agrees_with_its_count(args, kwargs, text):
    assert plural(*args, **kwargs) == text


def test_clip_keeps_both_ends_on_one_line():
    assert clip("a\nb\x1b[31m", 40) == "a\\nb\\x1b[31m"
    long = "x" * 50 + "MIDDLE" + "y" * 50
    clipped = clip(long, 21)
    assert clipped == "x" * 9 + "..." + "y" * 9 and len(clipped) == 21


@given(st.text(max_size=300), st.integers(min_value=5, max_value=120))
def test_clip_never_exceeds_its_limit_nor_breaks_a_line(text, limit):
    clipped = clip(text, limit)
    assert len(clipped) <= limit and "\n" not in clipped and "\r" not in clipped
    if len(text) <= limit and text.isprintable():
        assert clipped == text


def test_quoted_repeats_a_scalar_and_names_a_structure():
    assert quoted("12Q") == "'12Q'"
    assert quoted({"a": [1] * 10_000}) == "a dict"
    assert quoted(10 ** 5000).startswith("an integer of about 5001 digits")
    assert len(quoted("z" * 1000)) == 60


def test_terminal_and_xml_and_markdown_text_escape_what_would_act():
    assert terminal_text("k\x1b[31m") == "k\\x1b[31m"
    assert set(utf8_text("a\udcff")) == {"a", "\ufffd"}
    assert xml_text("a\x01b") == "a\\x01b"
    assert markdown_text("a|b*c\nd") == "a\\|b\\*c d"


def test_json_line_is_compact_and_reads_back():
    document = {"a": [1, 2], "b": {"c": "d"}}
    line = json_line(document)
    assert line == '{"a":[1,2],"b":{"c":"d"}}' and json.loads(line) == document


def test_the_bounded_reader_refuses_a_file_past_its_limit(tmp_path):
    path = tmp_path / "big.cubin"
    path.write_bytes(b"\0" * 2049)
    assert read_bounded(path, 4096) == b"\0" * 2049
    with pytest.raises(OSError) as caught:
        read_bounded(path, 2048, "cubin")
    assert caught.value.errno == errno.EFBIG and "more than any cubin" in caught.value.strerror


def test_the_bounded_reader_refuses_a_link_where_only_a_regular_file_is_read(tmp_path):
    target = tmp_path / "t"
    target.write_bytes(b"x")
    (tmp_path / "l").symlink_to(target)
    with pytest.raises(OSError):
        read_bounded(tmp_path / "l", regular_only=True)
    assert read_bounded(tmp_path / "l") == b"x"
