"""diff through its on-disk store (advisor/lint/diff_store.py) equals diff's in-memory
comparison (diff.index_side + compare_sides), row for row and count for count, on recorded
logs and listings and on logs built to add, remove, repeat and filter kernels."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tuneadvise.advisor.lint.diff import _Registers, compare_sides, diff_paths, index_side
from tuneadvise.advisor.lint.diff_store import DiffStore, streamable
from tuneadvise.advisor.lint.run import LintOptions

from ..helpers import TESTS

LINT = TESTS / "fixtures" / "lint"


def in_memory(old, new, options):
    before = index_side(str(old), options)
    after = index_side(str(new), replace(options, previous_registers=_Registers(before)))
    return compare_sides(before, after).whole()


def log(path, *kernels):
    path.write_text("".join(f"ptxas info    : Compiling entry function '{name}' for '{arch}'\n"
                            f"ptxas info    : Used {registers} registers, used 0 barriers\n"
                            for name, arch, registers in kernels))
    return path


def cases(tmp_path):
    old = log(tmp_path / "old.log", ("a", "sm_90", 32), ("b", "sm_90", 64), ("gone", "sm_80", 40), ("a", "sm_80", 32),
              ("dup", "sm_90", 40), ("dup", "sm_90", 40))
    new = log(tmp_path / "new.log", ("a", "sm_90", 40), ("b", "sm_90", 48), ("a", "sm_80", 32), ("new", "sm_90", 255),
              ("dup", "sm_90", 40))
    return [(LINT / "ptxas_multi.log", LINT / "ptxas_multi_next.log", LintOptions()),
            (LINT / "ptxas_multi_next.log", LINT / "ptxas_multi.log", LintOptions()),
            (LINT / "ptxas_multi.log", LINT / "ptxas_multi_next.log", LintOptions(archs=("sm_90",))),
            (LINT / "cuobjdump_multi.txt", LINT / "ptxas_multi.log", LintOptions()),
            (old, new, LintOptions()), (new, old, LintOptions())]


def test_the_store_equals_the_in_memory_comparison(tmp_path):
    for old, new, options in cases(tmp_path):
        assert streamable(str(old), options) and streamable(str(new), options)
        stored = diff_paths(str(old), str(new), options)
        assert not stored.problems
        assert stored.whole() == in_memory(old, new, options), (old.name, new.name, options.archs)


def test_binaries_and_stdin_take_the_in_memory_path():
    assert not streamable(str(LINT / "lint_multi.o"), LintOptions())
    assert not streamable(str(LINT / "lint_sm_90.cubin"), LintOptions())
    assert not streamable("-", LintOptions())


def test_the_store_leaves_nothing_behind(tmp_path):
    store = DiffStore()
    folder = store.folder.name
    assert store.index(0, str(LINT / "ptxas_multi.log"), LintOptions()) == []
    store.close()
    import os

    assert not os.path.exists(folder)


@pytest.mark.parametrize("text", ["not a log\n", ""])
def test_a_side_that_is_not_a_log_is_a_problem_not_a_comparison(tmp_path, text):
    (tmp_path / "bad.log").write_text(text)
    doc = diff_paths(str(tmp_path / "bad.log"), str(LINT / "ptxas_multi.log"), LintOptions())
    assert doc.problems and list(doc.kernels()) == []
