"""readers/sass.py on real nvdisasm listings and on hostile text.

tests/fixtures/sass holds, for tests/gpu/lint_kernels.cu compiled by nvcc 13.5 with
`-lineinfo -maxrregcount=32` for sm_90: ptxas's `-v` report and nvdisasm 13.5's two
listings of the cubin (`-c --print-line-info`, `-c --life-range-mode count`), gzipped.
The one edit: the build folder in the line comments, made relative."""

from __future__ import annotations

import gzip

from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers.sass import (
    MAX_LINE,
    MAX_SITES,
    access_width,
    read_live_registers,
    read_sass,
)

from ..helpers import TESTS
from ..reference.nvcc import read_report

FIXTURES = TESTS / "fixtures" / "sass"
STEM = "lint_kernels_sm_90_r32"


def _listing(kind: str) -> list[str]:
    with gzip.open(FIXTURES / f"nvdisasm_{kind}_{STEM}.txt.gz", "rt") as handle:
        return handle.readlines()


def _read():
    problems: list = []
    live = read_live_registers(_listing("lrm"), problems)
    found = {k.name: k for k in read_sass(_listing("g"), live, problems)}
    assert problems == []
    return found


def test_spill_bytes_equal_ptxas_and_local_arrays_stay_apart():
    report = read_report((FIXTURES / f"ptxas_{STEM}.log").read_text())
    found = _read()
    assert set(found) == set(report)
    for name, figures in report.items():
        sass = found[name]
        assert (sass.spill_stores, sass.spill_loads) == (figures["spill_stores"], figures["spill_loads"]), name
        if figures["stack_frame"] == 0:  # no local memory at all: no local instruction either
            assert sass.local_stores == sass.local_loads == 0 and not sass.spill_sites, name
    # The kernel with a local array and no spill: its local traffic is all non-spill.
    array = [n for n, f in report.items() if f["stack_frame"] > 0 and f["spill_stores"] == 0]
    assert array and all(found[n].local_stores > 0 and not found[n].spill_sites for n in array)


def test_sites_and_peaks_carry_the_listing_lines():
    found = _read()
    spilling = max(found.values(), key=lambda k: k.spill_stores)
    assert spilling.spill_stores > 0
    assert all(site.file == "tests/gpu/lint_kernels.cu" and site.line for site in spilling.spill_sites)
    assert sum(s.bytes for s in spilling.spill_sites if s.kind == "store") == spilling.spill_stores
    lines = {line for text in _listing("g") if (line := _line_of(text))}
    for kernel in found.values():
        assert kernel.peak_live_registers is not None and kernel.peak_lines
        assert {line for _, line in kernel.peak_lines} <= lines
        for site in kernel.spill_sites + kernel.local_accesses:
            if site.loop is not None:
                assert site.loop.start <= site.offset <= site.loop.end


def _line_of(text: str) -> int | None:
    if '//## File "' not in text:
        return None
    return int(text.rsplit("line ", 1)[1].split()[0])


def test_peak_is_the_largest_live_count_in_the_listing():
    live = read_live_registers(_listing("lrm"))
    counts = []
    for text in _listing("lrm"):
        if "/*" in text and "// |" in text:
            field = text.split("// |", 1)[1].split("|", 1)[0].strip()
            counts.append(int(field or 0))
    assert max(k.peak for k in live.values()) == max(counts)


def test_access_widths():
    assert [access_width(m) for m in ("", ".64", ".128", ".U8", ".S16", ".LU.64", ".E.128.CONSTANT")] == \
        [4, 8, 16, 1, 2, 8, 16]


def test_instruction_classes_count_what_is_printed():
    listing = [".text.k:\n",
               "        /*0000*/                   FFMA R1, R2, R3, R4 ;\n",
               "        /*0010*/                   DFMA R2, R4, R6, R8 ;\n",
               "        /*0020*/                   LDG.E.128 R4, desc[UR4][R2.64] ;\n",
               "        /*0030*/                   STL.64 [R1+0x8], R4 (*\"SpillRefill\"*);\n",
               "        /*0040*/                   LDL R4, [R1+0x10] ;\n",
               "        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n",
               "        /*0060*/                   SHFL.BFLY PT, R3, R2, 0x1, 0x1f ;\n"]
    kernel, = read_sass(listing)
    counts = kernel.instructions
    assert (counts["fp32"], counts["fp64"], counts["barriers"], counts["shuffles"]) == (1, 1, 1, 1)
    assert counts["loads"] == {"global": {"16": 1}, "local": {"4": 1}} and counts["stores"] == {"local": {"8": 1}}
    assert (kernel.spill_stores, kernel.spill_loads, kernel.local_loads) == (8, 0, 4)
    assert kernel.peak_live_registers is None  # no life-range listing given


def test_backward_branch_is_a_loop_around_the_spill():
    listing = [".text.k:\n", '\t//## File "k.cu", line 3\n', ".L_x_1:\n",
               "        /*0000*/                   STL [R1], R2 (*\"SpillRefill\"*);\n",
               '\t//## File "k.cu", line 5\n',
               "        /*0010*/              @P0 BRA `(.L_x_1) ;\n",
               "        /*0020*/                   LDL R2, [R1] (*\"SpillRefill\"*);\n"]
    kernel, = read_sass(listing)
    inside, after = kernel.spill_sites
    assert inside.loop is not None and (inside.loop.line, inside.loop.start, inside.loop.end) == (3, 0, 0x10)
    assert after.loop is None and after.line == 5


_REAL = _listing("g")[:400] + _listing("lrm")[:200]


@settings(max_examples=300)
@given(st.lists(st.one_of(st.sampled_from(_REAL), st.text(max_size=300),
                          st.builds(lambda n: "        /*0000*/   STL [R1], R2 " + "x" * n + ";\n",
                                    st.integers(0, MAX_LINE + 10)),
                          st.just(".text." + "a" * 5000 + ":\n"), st.just('\t//## File "' + '"' * 100 + '", line 9\n')),
                max_size=60))
def test_hostile_listings_never_raise_and_stay_bounded(lines):
    problems: list = []
    live = read_live_registers(lines, problems)
    for kernel in read_sass(lines, live, problems):
        assert len(kernel.spill_sites) <= MAX_SITES and len(kernel.local_accesses) <= MAX_SITES
        assert kernel.spill_stores >= 0 and kernel.local_loads >= 0
    assert all(isinstance(number, int) and isinstance(message, str) for number, message in problems)


def test_overlong_line_is_a_problem_not_a_search():
    problems: list = []
    list(read_sass([".text.k:\n", "/*0000*/ " + "A" * (MAX_LINE + 1) + "\n"], None, problems))
    assert problems and "longer than" in problems[0][1]


def test_a_kernel_starting_on_the_line_the_last_one_ended_on_keeps_it():
    """nvdisasm prints a line comment only where the line changes, across sections too: a
    template's second instantiation ended and began on one line, and its listing had no comment
    (nvdisasm's JSON line table puts its first instruction on that line)."""
    listing = [".text.a:\n", '\t//## File "k.cu", line 21\n',
               "        /*0000*/                   STL [R1], R2 (*\"SpillRefill\"*);\n",
               "//--------------------- .text.b --------------------------\n",
               "\t.section\t.text.b,\"ax\",@progbits\n", ".text.b:\n",
               "        /*0000*/                   STL [R1], R2 (*\"SpillRefill\"*);\n"]
    first, second = read_sass(listing)
    assert (second.spill_sites[0].file, second.spill_sites[0].line) == ("k.cu", 21)


def test_fp64_lines_are_those_of_the_listings_double_precision_instructions():
    """Each kernel's fp64_lines: the line comments in effect at its DADD/DMUL/DFMA/DMNMX, read
    from the listing text here, in code order without repeats."""
    expected: dict[str, list[int]] = {}
    kernel, line = None, None
    for text in _listing("g"):
        if text.startswith(".text."):
            kernel = text[len(".text."):].split(":")[0]
        elif '//## File "' in text:
            line = int(text.split(", line ")[1].split()[0])
        elif kernel and "/*" in text and any(f" {op}" in text for op in ("DADD", "DMUL", "DFMA", "DMNMX")):
            lines = expected.setdefault(kernel, [])
            if line not in lines:
                lines.append(line)
    found = _read()
    assert len(expected) >= 2  # the double saxpy and heavy()
    for name, sass in found.items():
        assert [number for _, number in sass.fp64_lines] == expected.get(name, []), name
        assert (sass.instructions["fp64"] > 0) == (name in expected), name
