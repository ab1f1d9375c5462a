"""Paths and assertions shared by the test modules."""

from pathlib import Path

from hypothesis import strategies as st

# The suite's folder and the repository root, for fixtures and documents, from any test folder.
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


# A stand-in tool's Python body that allocates 1 GiB and, refused under its address-space bound,
# aborts as NVIDIA's C++ tools do on an allocation refused (SIGABRT: exit status -6).
ABORT_PAST_MEMORY = ("import os\ntry:\n    bytearray(1 << 30)\nexcept MemoryError:\n"
                     "    os.abort()")


def assert_one_line_error(result, *fragments: str, exit_code: int = 2) -> None:
    """The bad-input contract (docs/occupancy.md, docs/lint.md): the documented exit code, one
    line of output naming what was wrong (each of `fragments`), and no traceback."""
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


# Values of every JSON type, in and out of range, as users send them.
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 1100),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.sampled_from(["default", "max-l1", "max-shared", "50%", "12K", "16x16", "", "true", "256", "1e3"]),
    st.text(max_size=6),
    st.lists(st.integers(0, 64), max_size=4),
)
