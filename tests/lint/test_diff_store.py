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


def _no_room_for_files():
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of ending the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


def test_a_store_with_no_room_is_exit_74_and_one_line(tmp_path):
    """The store's folder full (here: no file may grow past 64 KiB, and the logs outgrow the page cache): exit 74 and one line naming
    the folder, as for output that cannot be written; before, SQLite's error was an internal error
    (exit 70)."""
    import os
    import subprocess
    import sys

    for side, registers in (("old", 32), ("new", 40)):  # 40,000 kernels: past the store's 8 MB page cache
        (tmp_path / f"{side}.log").write_text("".join(
            f"ptxas info    : Compiling entry function 'a_kernel_of_a_large_build_{i}' for 'sm_90'\n"
            f"ptxas info    : Function properties for a_kernel_of_a_large_build_{i}\n"
            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
            f"ptxas info    : Used {registers + i % 7} registers, used 0 barriers\n" for i in range(40_000)))
    done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", "diff", "old.log", "new.log", "--format", "json"],
                          cwd=tmp_path, capture_output=True, timeout=120, preexec_fn=_no_room_for_files,
                          env={**os.environ, "TMPDIR": str(tmp_path), "TUNEADVISE_CACHE_DIR": "off"})
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 74 and len(lines) == 1, (done.returncode, lines[-3:])
    assert lines[0].startswith(f"tuneadvise: error: cannot write the output: {tmp_path}: diff's temporary store")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("tuneadvise-diff-")]  # removed


# Run in a fresh interpreter: in a test session, caches other tests filled would count toward one
# size's peak and not the other's. The store's batches and the linter's shared-analysis bound are
# made small, so that a few thousand kernels already span many batches.
_TRACED_PEAKS = """
import json, sys, tracemalloc
from tuneadvise.advisor.lint import diff_store, run
from tuneadvise.advisor.lint.diff import diff_paths
from tuneadvise.advisor.lint.run import LintOptions

run.DEMANGLED_AT_ONCE = run.MAX_SHARED_ANALYSES = diff_store._BATCH = diff_store.DEMANGLED_AT_ONCE = 128
sum(1 for _ in diff_paths(sys.argv[1], sys.argv[1], LintOptions()).kernels())  # imports, first-use caches
found = []
for path in sys.argv[1:]:
    tracemalloc.start()
    rows = sum(1 for _ in diff_paths(path, path, LintOptions()).kernels())
    found.append([tracemalloc.get_traced_memory()[1], rows])
    tracemalloc.stop()
print(json.dumps(found))
"""


def test_the_store_holds_a_batch_not_a_build(tmp_path):
    """Python's peak stays flat as the logs grow eightfold: both sides' records and figures live in
    the store, and only a batch of kernels is in Python at a time. Both logs hold the same register
    counts, so by-value caches fill alike. (Measured: the store's peak grows 2%, the in-memory
    comparison's 3.5x over the same logs.)"""
    import json
    import subprocess
    import sys

    paths = []
    for count in (300, 2400):
        kernels = [(f"_Z{len(f'k{i}')}k{i}Pf", arch, 16 + i % 64) for i in range(count) for arch in ("sm_80", "sm_90")]
        paths.append(str(log(tmp_path / f"{count}.log", *kernels)))
    done = subprocess.run([sys.executable, "-c", _TRACED_PEAKS, *paths], capture_output=True, text=True, check=True)
    (small, small_rows), (large, large_rows) = json.loads(done.stdout)
    assert (small_rows, large_rows) == (600, 4800)
    assert large < 1.5 * small, (small, large)
