"""Compiler output recorded from real compilations (tests/fixtures/lint, CUDA
13.0 on sm_75 to sm_120): ptxas -v logs, cuobjdump listings and the cubins
themselves must agree kernel by kernel, and the parsers must survive any text."""


from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers.compiler_output import parse_cuobjdump, parse_ptxas
from tuneadvise.advisor.readers.cubin import CubinError, read_cubin

from ..helpers import TESTS

FIXTURES = TESTS / "fixtures" / "lint"
ARCHS = (75, 80, 86, 89, 90, 100, 120)
KERNELS = {"producer_consumer", "_Z8spillingPKfPfi", "_Z5saxpyIdLi2EEvT_PKS0_PS0_i", "_Z5saxpyIfLi4EEvT_PKS0_PS0_i",
           "_Z5heavyPKdPdi", "_Z12block_reducePKfPfi", "_Z12tiled_matmulPKfS0_Pfi"}


def ptxas(sm):
    with open(FIXTURES / f"ptxas_sm_{sm}.log") as handle:
        return {k.name: k for k in parse_ptxas(handle)}


@pytest.mark.parametrize("sm", ARCHS)
def test_three_sources_agree(sm):
    from_log = ptxas(sm)
    with open(FIXTURES / f"cuobjdump_sm_{sm}.txt") as handle:
        from_cuobjdump = {k.name: k for k in parse_cuobjdump(handle, arch=f"sm_{sm}")}
    from_cubin = {k.name: k for k in read_cubin((FIXTURES / f"lint_sm_{sm}.cubin").read_bytes())}
    assert set(from_log) == set(from_cuobjdump) == set(from_cubin) == KERNELS
    for name, log in from_log.items():
        assert log.arch == from_cubin[name].arch == f"sm_{sm}"
        assert log.registers == from_cuobjdump[name].registers == from_cubin[name].registers
        # Static shared memory without the reserved kilobyte, whichever tool reported it.
        assert log.shared_mem == from_cuobjdump[name].shared_mem == from_cubin[name].shared_mem
        assert log.stack_frame == from_cuobjdump[name].stack_frame == from_cubin[name].frame_bytes
        assert log.barriers == from_cubin[name].barriers


def test_ptxas_details():
    log = ptxas(90)
    assert log["_Z12tiled_matmulPKfS0_Pfi"].shared_mem == 8448
    assert log["producer_consumer"].barriers == 4
    spilling = log["_Z8spillingPKfPfi"]
    assert (spilling.registers, spilling.spill_stores, spilling.spill_loads) == (32, 496, 536)
    assert spilling.spill_bytes == 1032
    assert log["_Z5heavyPKdPdi"].registers == 128


def test_cuobjdump_counts_reserved_from_sm_90_only():
    """The raw SHARED figure includes the reserved kilobyte on sm_90+ only."""
    for sm, raw in ((80, "SHARED:8448"), (89, "SHARED:8448"), (90, "SHARED:9472"), (120, "SHARED:9472")):
        text = (FIXTURES / f"cuobjdump_sm_{sm}.txt").read_text()
        assert raw in text


def test_multi_arch_log_and_fatbin_listing():
    with open(FIXTURES / "ptxas_multi.log") as handle:
        records = list(parse_ptxas(handle))
    assert {r.arch for r in records} == {"sm_80", "sm_90", "sm_120"}
    assert len(records) == 3 * len(KERNELS)
    with open(FIXTURES / "cuobjdump_multi.txt") as handle:
        listing = list(parse_cuobjdump(handle))
    by_key = {(r.arch, r.name): r for r in listing}
    for record in records:
        other = by_key[(record.arch, record.name)]
        assert (record.registers, record.shared_mem) == (other.registers, other.shared_mem)


def test_barrier_cubin():
    (kernel,) = read_cubin((FIXTURES / "barriers_sm_90.cubin").read_bytes())
    assert (kernel.name, kernel.registers, kernel.barriers, kernel.shared_mem, kernel.frame_bytes) == (
        "pressure", 40, 5, 8448, 464)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=30))
def test_parsers_never_raise_on_text(lines):
    list(parse_ptxas(lines))
    list(parse_cuobjdump(lines))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_cubin_reader_rejects_garbage_cleanly(blob):
    """Garbage after an ELF header is one CubinError of one line (the message lint prints), never
    another exception nor a kernel with impossible figures."""
    try:
        kernels = read_cubin(b"\x7fELF\x02\x01\x01A\x08" + blob)
    except CubinError as exc:
        assert str(exc) and "\n" not in str(exc), exc
        return
    for kernel in kernels:
        assert isinstance(kernel.name, str) and kernel.registers >= 0


def test_truncated_real_cubin_is_a_clean_error():
    data = (FIXTURES / "lint_sm_90.cubin").read_bytes()
    for cut in (10, 64, len(data) // 2):
        with pytest.raises(CubinError):
            read_cubin(data[:cut])


# -- hostile text: linear time, one clear problem per bad line -------------------------

def _seconds(parse, lines):
    import time

    start = time.process_time()
    problems = []
    list(parse(lines, problems=problems))
    return time.process_time() - start, problems


@pytest.mark.parametrize("parse,line", [
    (parse_ptxas, lambda n: "    " + "9" * n + " bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"),
    (parse_ptxas, lambda n: "ptxas info    : Used 32 registers, used 1 barriers, " + "7" * n + " bytes smem\n"),
    (parse_cuobjdump, lambda n: "REG:1 SHARED:0 " + "A" * n + "\n"),
])
def test_parsing_is_linear_in_the_line_length(parse, line):
    # Lines just under the cap, then twice as many of them: the time about doubles (a pattern
    # that retried inside each run of digits or letters took 14 s and 44 s on one 40,000-character line).
    from tuneadvise.advisor.readers.compiler_output import MAX_LINE

    head = ["ptxas info    : Compiling entry function 'k' for 'sm_90'\n", "\tFunction k:\n"]
    text = line(MAX_LINE - 100)
    _seconds(parse, head + [text] * 20)
    small = min(_seconds(parse, head + [text] * 200)[0] for _ in range(3))
    large = min(_seconds(parse, head + [text] * 400)[0] for _ in range(3))
    assert large / small < 3, (small, large)
    elapsed, problems = _seconds(parse, head + [line(40_000)])
    assert elapsed < 0.5 and [message for _, message in problems] == [
        "line longer than 4096 characters: not compiler output"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789 AREGSHD:[]bytesackfrmpilordu,", max_size=3000))
def test_any_line_parses_quickly_or_is_reported(text):
    import time

    start = time.process_time()
    list(parse_ptxas(["ptxas info    : Compiling entry function 'k' for 'sm_90'\n", text + " bytes stack frame\n"]))
    list(parse_cuobjdump(["\tFunction k:\n", "REG:" + text + "\n"], arch="sm_90"))
    assert time.process_time() - start < 0.5


@pytest.mark.parametrize("sm", ARCHS)
def test_a_log_cut_anywhere_reads_only_whole_kernels_and_says_where_it_was_cut(sm):
    """A real log cut at every character (a build killed mid-way, a log truncated by a CI
    limit): each kernel read carries the figures the whole log gives it, and a kernel whose
    report was begun but not read whole is a problem; a cut 'used 4 barrie' is no barrier count."""
    whole = ptxas(sm)
    text = (FIXTURES / f"ptxas_sm_{sm}.log").read_text()
    for end in range(len(text) + 1):
        if text[:end].endswith(("registers", "barriers")):
            continue  # a cut between whole clauses reads as an older toolkit's shorter line
        problems: list = []
        read = {k.name: k for k in parse_ptxas(text[:end].splitlines(keepends=True), problems)}
        for name, kernel in read.items():
            assert replace(kernel, line=0) == replace(whole[name], line=0), (end, kernel)
        begun = {name for name in whole if f"Compiling entry function '{name}' for 'sm_{sm}'" in text[:end]}
        assert problems or begun <= set(read), (end, begun - set(read))
