"""The CUDA tokenizer's literals (advisor/readers/cuda_source.py) against a character-by-character
reading of the C++ rule (a literal ends at its unescaped closing quote, or is left open by a line
break), and its memory on a literal of megabytes: linear in the text, a few copies of it."""

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers.cuda_source import strip_comments


def blanked_by_hand(text: str) -> list[str]:
    """Each line's code with string and character literals blanked, one character at a time."""
    out, i, quote = [], 0, None
    while i < len(text):
        c = text[i]
        if quote is None:
            quote = c if c in "\"'" else None
            out.append(" " if quote else c)
        elif c == "\n":
            quote = None
            out.append(c)
        elif c == "\\" and i + 1 < len(text) and text[i + 1] != "\n":
            out.append("  ")
            i += 1
        elif c == "\\":
            quote = None  # a backslash escaping a line break or nothing closes no literal, and is code
            out.append(c)
        else:
            out.append(" ")
            quote = None if c == quote else quote
        i += 1
    lines = "".join(out).split("\n")
    return lines[:-1] if lines[-1] == "" else lines


# No letters or digits (a quote after one is a digit separator) and no '/' or 'R' (comments, raw strings).
LITERAL_TEXT = st.text(alphabet=st.sampled_from(['"', "'", "\\", "\n", " ", "-", ";"]), max_size=60)


@settings(max_examples=500, deadline=None)
@given(LITERAL_TEXT)
def test_literals_end_where_the_cpp_rule_ends_them(text):
    assert [code for code, _ in strip_comments(text)] == blanked_by_hand(text)


def test_a_literal_of_megabytes_takes_memory_linear_in_it():
    """An unterminated literal of 2 MB once took some 240 MB (the pattern kept state per character)."""
    for body in ("a" * (2 << 20), "a\\\\" * (1 << 16) + "a" * (2 << 20)):
        text = 'const char* s = "' + body + "\n__global__ void k() {}\n"
        tracemalloc.start()
        try:
            lines = strip_comments(text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert lines[1][0] == "__global__ void k() {}"
        assert peak < 12 * len(text), f"{peak:,} bytes for {len(text):,} characters"
