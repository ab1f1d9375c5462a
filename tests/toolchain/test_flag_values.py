"""flag_values: one reading of a command line's flag values, in each spelling the compilers take."""

from __future__ import annotations

import pytest

from tuneadvise.advisor.toolchain.compile_commands import _include_folders
from tuneadvise.advisor.toolchain.flag_values import flag_values
from tuneadvise.advisor.toolchain.host_code import host_half

SPELLINGS = [(["-I", "inc"], ("-I", "inc")), (["-Iinc"], ("-I", "inc")), (["-isystem", "sys"], ("-isystem", "sys")),
             (["-isystemsys"], ("-isystem", "sys")), (["--include-path=inc"], ("--include-path", "inc")),
             (["--include-path", "inc"], ("--include-path", "inc")), (["-DN=4"], ("-D", "N=4")),
             (["-D", "N=4"], ("-D", "N=4")), (["-std=c++17"], ("-std", "c++17")), (["-iquoteq"], ("-iquote", "q"))]
NAMES = ("-D", "-I", "-isystem", "-iquote", "--include-path", "-std")


@pytest.mark.parametrize(("words", "expected"), SPELLINGS)
def test_each_spelling_gives_the_flag_and_its_value(words, expected):
    assert list(flag_values(["-O3", *words, "-c"], NAMES)) == [expected]


def test_a_flag_last_on_the_line_without_its_value_gives_an_empty_one():
    assert list(flag_values(["-c", "-I"], NAMES)) == [("-I", "")]


def test_other_flags_are_not_read_as_these():
    assert list(flag_values(["-O3", "-stdlib=libc++", "-include-pch", "-Wall", "inc"], ("-I", "-std"))) == []


def test_the_compile_database_and_nvccs_listing_read_flags_alike():
    words = ["-I", "a", "-Ib", "-isystem", "c", "-isystemd", "--include-path=e", "-DX=1", "-std=c++17"]
    assert _include_folders(words) == ["a", "b", "c", "d", "e"]
    listing = ["#$ cudafe++ --x", "#$ gcc -E " + " ".join(words) + " k.cu -o k.ii"]
    assert host_half(listing)[1] == ["-I", "a", "-I", "b", "-isystem", "c", "-isystem", "d", "-D", "X=1",
                                     "-std=c++17"]
