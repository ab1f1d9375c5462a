"""Fatbins in real objects and libraries (CUDA 13.0, tests/fixtures/lint):
uncompressed, Zstandard-compressed (-Xfatbin -compress-all and
--compress-mode=size) and inside a shared library all yield the same kernels
as the per-architecture cubins, and agree with cuobjdump's listings of them."""

import struct

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers.compiler_output import parse_cuobjdump
from tuneadvise.advisor.readers.cubin import read_cubin
from tuneadvise.advisor.readers.fatbin import FATBIN_MAGIC, FatbinError, lz4_block_decompress, scan_fatbins
from tuneadvise.advisor.readers.usage import read_usage

from ..helpers import TESTS

FIXTURES = TESTS / "fixtures" / "lint"
BINARIES = ("lint_multi.o", "lint_lz4.o", "lint_zstd.o", "liblint.so")


def figures(records):
    return {(r.name, r.arch, r.registers, r.shared_mem, r.stack_frame) for r in records}


@pytest.mark.parametrize("name", BINARIES)
def test_every_container_yields_the_cubins_kernels(name):
    result = read_usage(FIXTURES / name)
    assert not result.problems
    expected = set()
    for sm in (80, 90, 120):
        expected |= figures(read_usage(FIXTURES / f"lint_sm_{sm}.cubin").records)
    assert figures(result.records) == expected


@pytest.mark.parametrize("name", ("lint_lz4.o", "lint_zstd.o", "liblint.so"))
def test_agrees_with_cuobjdump_of_the_same_file(name):
    with open(FIXTURES / f"cuobjdump_{name}.txt") as handle:
        listed = figures(parse_cuobjdump(handle))
    assert listed == figures(read_usage(FIXTURES / name).records)


def test_compressed_entries_are_zstandard_and_ptx_is_recognised():
    entries = list(scan_fatbins(FIXTURES / "lint_lz4.o"))
    assert all(e.compressed for e in entries)
    assert [(e.arch, e.kind) for e in entries] == [("sm_80", 2), ("sm_90", 2), ("sm_90", 1), ("sm_120", 2)]
    ptx = next(e for e in entries if e.kind == 1)
    assert b".target sm_90" in ptx.payload
    for entry in entries:
        if entry.kind == 2:
            assert read_cubin(entry.payload)


def test_a_cut_file_yields_no_kernel_and_is_reported(tmp_path):
    # A file cut inside its fatbin holds no whole fatbin: the scan refuses it, and read_usage
    # reports the file, saying it was cut short, rather than linting part of it.
    data = (FIXTURES / "lint_multi.o").read_bytes()
    start = data.find(FATBIN_MAGIC)
    cut = tmp_path / "cut.o"
    cut.write_bytes(data[:start + 5000])
    with pytest.raises(FatbinError, match=f"fatbin at offset {start} runs past the end of the file"):
        list(scan_fatbins(cut))
    result = read_usage(cut)
    assert not result.records
    assert [p.message for p in result.problems] == [f"fatbin at offset {start} runs past the end of the file (cut "
                                                    f"short: its header declares {_declared(data, start):,} bytes, "
                                                    "5,000 are there)"]


def _declared(data: bytes, at: int) -> int:
    """A fatbin's length as its header states it (the 16-byte header, then its size)."""
    _magic, _version, header_size, size = struct.unpack_from("<IHHQ", data, at)
    return header_size + size


def test_a_library_whose_second_fatbin_is_cut_short_says_so(tmp_path):
    """The second fatbin, cut short, was skipped as stray bytes: the file was reported as holding
    only PTX (its first fatbin's small cubins hold no kernel), never as cut."""
    data = (FIXTURES / "liblint.so").read_bytes()
    first = data.find(FATBIN_MAGIC)
    second = data.find(FATBIN_MAGIC, first + _declared(data, first))
    cut = tmp_path / "libcut.so"
    cut.write_bytes(data[:second + 1000])
    whole = read_usage(FIXTURES / "liblint.so")
    result = read_usage(cut)
    assert len(result.records) < len(whole.records)
    assert [p.file for p in result.problems] == [str(cut)]
    assert [p.message.split(" (")[0] for p in result.problems] == \
        [f"fatbin at offset {second} runs past the end of the file"]


def test_entries_past_their_fatbin_are_refused(tmp_path):
    # A fatbin whose header declares less than its entries hold: the entry that runs
    # past it is refused, through the scan and as read_usage's problem.
    data = bytearray((FIXTURES / "lint_multi.o").read_bytes())
    start = data.find(FATBIN_MAGIC)
    struct.pack_into("<Q", data, start + 8, 5000)
    short = tmp_path / "short.o"
    short.write_bytes(bytes(data))
    with pytest.raises(FatbinError, match="runs past its fatbin"):
        list(scan_fatbins(short))
    result = read_usage(short)
    assert not result.records
    assert len(result.problems) == 1 and "runs past its fatbin" in result.problems[0].message


lz4 = pytest.importorskip("lz4.block")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 40))
def test_lz4_block_decoder_matches_the_reference_encoder(data, repeat):
    text = data * (repeat % 4 + 1) + bytes(repeat)  # repetitive input exercises long and overlapping matches
    assert lz4_block_decompress(lz4.compress(text, store_size=False), len(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 500))
@example(bytes.fromhex("1f6101001460626364656667"), 46)  # "a" * 40 + "bcdefg", as the reference compresses it
@example(bytes.fromhex("1f6101001460626364656667"), 45)  # one byte short of what it decodes to
def test_lz4_block_decoder_rejects_garbage_cleanly(blob, size):
    """Garbage is a FatbinError; what decodes is exactly `size` bytes, and the very bytes the
    reference LZ4 library decodes wherever that library accepts the block too."""
    try:
        decoded = lz4_block_decompress(blob, size)
    except FatbinError:
        return
    assert len(decoded) == size
    try:
        reference = lz4.decompress(blob, uncompressed_size=size)
    except lz4.LZ4BlockError:
        return
    assert bytes(decoded) == reference


# CUDA 13.5 Blackwell builds with -lineinfo or -G: each .nv.merc.* copy of a
# debug section names the original's very bytes (tests/fixtures/lint/README.md).
DEBUG_BUILDS = [(flag, sm) for flag in ("lineinfo", "G") for sm in (100, 120)]


@pytest.mark.parametrize("flag,sm", DEBUG_BUILDS)
def test_blackwell_debug_cubins_agree_with_ptxas(flag, sm):
    cubin = read_usage(FIXTURES / f"debug_{flag}_sm_{sm}.cubin")
    assert not cubin.problems
    logged = read_usage(FIXTURES / f"ptxas_debug_{flag}_sm_{sm}.log")
    assert figures(cubin.records) == figures(logged.records) and len(cubin.records) == 2


@pytest.mark.parametrize("flag", ("lineinfo", "G"))
def test_objects_holding_blackwell_debug_cubins_yield_them(flag):
    result = read_usage(FIXTURES / f"debug_{flag}.o")
    assert not result.problems
    expected = set()
    for sm in (100, 120):
        expected |= figures(read_usage(FIXTURES / f"debug_{flag}_sm_{sm}.cubin").records)
    assert figures(result.records) == expected
