"""Hostile binaries and names: fatbin decompression bombs, ELF
headers that claim more than the file holds, kernel names that are not text.
Each parser answers a one-line error (FatbinError, CubinError) or a result, in
time and memory proportional to the input: never a traceback, a hang or gigabytes.

The issue's reproductions are explicit cases; hypothesis adds arbitrary bytes
and structured mutations of the real fixtures (tests/fixtures/lint). The
number of examples comes from the profile (tests/conftest.py)."""

import os
import struct
import tempfile
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers import demangle as demangler
from tuneadvise.advisor.readers import fatbin as fb
from tuneadvise.advisor.readers.cubin import CubinError, read_cubin
from tuneadvise.advisor.readers.demangle import MAX_NAME, base_name, demangle, demangle_many
from tuneadvise.advisor.readers.fatbin import FatbinError, lz4_block_decompress, scan_fatbins
from tuneadvise.advisor.readers.usage import read_usage

from ..helpers import TESTS

zstandard = pytest.importorskip("zstandard")

FIXTURES = TESTS / "fixtures" / "lint"
CUBINS = sorted(FIXTURES.glob("*.cubin"))
FIXTURE_CUBINS = {path.name: path.read_bytes() for path in CUBINS}


# -- builders ---------------------------------------------------------------

def fatbin(*entries) -> bytes:
    """A fatbin of (kind, sm, flags, stored payload, declared decompressed size) entries."""
    body = b""
    for kind, sm, flags, stored, declared in entries:
        body += fb._ENTRY.pack(kind, 0x101, fb._ENTRY.size, len(stored), len(stored), 0, 0, 0, sm, 0, 0,
                               flags, 0, declared) + stored
    return fb.FATBIN_MAGIC + struct.pack("<HHQ", 1, 16, len(body)) + body


def zstd_zeros(size: int, content_size: bool = True) -> bytes:
    """A Zstandard frame of `size` zero bytes, streamed (never `size` bytes in memory);
    with content_size the frame header records the size itself."""
    import io

    sink = io.BytesIO()
    writer = zstandard.ZstdCompressor(level=3).stream_writer(sink, size=size if content_size else -1,
                                                             closefd=False)
    chunk = bytes(1 << 20)
    for _ in range(size >> 20):
        writer.write(chunk)
    writer.write(bytes(size & ((1 << 20) - 1)))
    writer.close()
    return sink.getvalue()


def lz4_run(run: int) -> bytes:
    """An LZ4 block of one literal, one match repeating it `run` times (offset 1), then
    the 12 literals the format ends with: run + 13 bytes from about run / 255."""
    extra = run - 19  # match length = 4 + 15 + the extension bytes
    return bytes([0x1F, 0x41, 0x01, 0x00]) + b"\xff" * (extra // 255) + bytes([extra % 255, 0xC0]) + b"B" * 12


def elf(shentsize=64, shnum=1, shoff=64, shstrndx=0, size=4096, sections=()) -> bytes:
    """A 64-bit little-endian EM_CUDA ELF of `size` bytes with these header fields and
    section headers (name, type, offset, size) written at shoff."""
    data = bytearray(size)
    data[:20] = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\x00\xbe\x00"
    struct.pack_into("<Q", data, 40, shoff)
    struct.pack_into("<HHH", data, 58, shentsize, shnum, shstrndx)
    for i, (name, stype, offset, length) in enumerate(sections):
        struct.pack_into("<IIQQQQIIQQ", data, shoff + 64 * i, name, stype, 0, 0, offset, length, 0, 0, 0, 0)
    return bytes(data)


def timed(function, *args):
    """The outcome, the CPU time this process spent (other processes on a busy machine add none)
    and the peak of Python's allocations."""
    start = time.process_time()
    tracemalloc.start()
    try:
        try:
            outcome = function(*args)
        except (FatbinError, CubinError) as exc:
            outcome = exc
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return outcome, time.process_time() - start, peak


def one_line(exc) -> str:
    text = str(exc)
    assert text and "\n" not in text and len(text) < 400, text
    return text


def scan_bytes(data: bytes) -> list:
    """The fatbin entries of a file holding `data`, as the public reader scans an open file."""
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        return list(scan_fatbins(handle))


def decode_all(path_or_data):
    return [entry.payload for entry in (scan_fatbins(path_or_data) if isinstance(path_or_data, Path)
                                        else scan_bytes(path_or_data))]


# -- fatbin: decompression and size bombs -------------------------------------

@pytest.fixture(scope="module")
def zstd_gib():
    return zstd_zeros(1 << 30)  # about 32 KB


def test_a_zstd_frame_is_decoded_to_the_declared_size_not_its_own(zstd_gib):
    # A 32 KB entry whose header claims 100 bytes must be decoded to those 100 bytes, not to
    # the frame's own content size (1 GiB): the header is what the driver trusts.
    assert len(zstd_gib) < 64 << 10
    outcome, seconds, peak = timed(decode_all, fatbin((2, 90, fb.FLAG_ZSTD, zstd_gib, 100)))
    assert isinstance(outcome, FatbinError) and "more than the 100 bytes" in one_line(outcome)
    assert seconds < 1 and peak < 1 << 20


def test_eight_bombs_in_one_file_stay_within_the_total(tmp_path):
    # Eight entries that honestly declare 200 MiB each: 1.6 GB decoded before; the
    # per-file total (1 GiB) stops the sixth.
    bomb = zstd_zeros(200 << 20)
    path = tmp_path / "bombs.fatbin"
    path.write_bytes(fatbin(*[(2, 90, fb.FLAG_ZSTD, bomb, 200 << 20)] * 8))
    decoded = 0
    with pytest.raises(FatbinError, match="1024 MiB in all"):
        for entry in scan_fatbins(path):
            decoded += len(entry.payload)
    assert decoded == 5 * (200 << 20)
    problems = read_usage(path).problems  # five zero-filled "cubins", then the limit
    assert "limit" in one_line(problems[-1]) and all(one_line(p) for p in problems)
    assert "not an ELF file" in problems[0].message


def test_a_97_byte_file_declaring_exabytes_is_an_error_not_memory_error():
    stream = zstandard.ZstdCompressor(write_content_size=False).compress(b"x")
    data = fatbin((2, 90, fb.FLAG_ZSTD, stream, 2**64 - 1))
    assert len(data) < 120
    outcome, seconds, _ = timed(decode_all, data)
    assert isinstance(outcome, FatbinError) and "256 MiB limit per entry" in one_line(outcome)
    assert seconds < 0.5


@pytest.mark.parametrize("declared", [0, 1, 4095, 4097])
def test_a_zstd_frame_shorter_or_longer_than_declared_is_an_error(declared):
    stream = zstandard.ZstdCompressor(write_content_size=False).compress(b"A" * 4096)
    with pytest.raises(FatbinError, match="declares"):
        decode_all(fatbin((2, 90, fb.FLAG_ZSTD, stream, declared)))
    assert decode_all(fatbin((2, 90, fb.FLAG_ZSTD, stream, 4096))) == [b"A" * 4096]


def test_an_lz4_run_is_decoded_in_linear_time():
    # A 400 KB LZ4 run expands a hundredfold: decoding it one byte at a time takes seconds.
    block = lz4_run(100 << 20)
    assert len(block) < 420_000
    outcome, seconds, _ = timed(lz4_block_decompress, block, 13 + (100 << 20))
    assert not isinstance(outcome, Exception) and len(outcome) == 13 + (100 << 20)
    assert outcome[:3] == b"AAA" and outcome[-13:] == b"A" + b"B" * 12
    assert seconds < 2
    # Declared smaller than the run: stopped as soon as the run passes the declared size.
    outcome, seconds, peak = timed(lz4_block_decompress, block, 1000)
    assert isinstance(outcome, FatbinError) and seconds < 0.5 and peak < 1 << 20


def test_entries_over_the_per_entry_limit_are_refused_before_decoding():
    block = lz4_run(1000)
    with pytest.raises(FatbinError, match="over the 256 MiB limit"):
        decode_all(fatbin((2, 90, fb.FLAG_LZ4, block, fb.MAX_ENTRY_BYTES + 1)))
    with pytest.raises(FatbinError, match="over the 256 MiB limit"):
        lz4_block_decompress(block, fb.MAX_ENTRY_BYTES + 1)


def test_payloads_are_decoded_only_when_read(zstd_gib):
    # A PTX entry nobody reads costs nothing, even a bomb: read_usage skips PTX.
    cubin = FIXTURE_CUBINS["lint_sm_90.cubin"]
    data = fatbin((1, 90, fb.FLAG_ZSTD, zstd_gib, 100), (2, 90, 0, cubin, len(cubin)))
    entries = scan_bytes(data)
    assert [e.kind for e in entries] == [1, 2] and entries[1].payload == cubin
    with pytest.raises(FatbinError):
        entries[0].payload  # noqa: B018


def test_the_total_limit_counts_what_is_decoded():
    entries = list(scan_fatbins(FIXTURES / "lint_zstd.o", limit=0))
    assert any(e.compressed for e in entries)
    with pytest.raises(FatbinError, match="in all"):
        for entry in entries:
            entry.payload  # noqa: B018


_FATBIN_FIXTURES = [(FIXTURES / name).read_bytes() for name in ("lint_multi.o", "lint_zstd.o", "lint_lz4.o")]


def _fatbin_region(data: bytes) -> tuple[int, int]:
    start = data.find(fb.FATBIN_MAGIC)
    return start, start + 16 + struct.unpack_from("<Q", data, start + 8)[0]


@given(st.sampled_from(range(len(_FATBIN_FIXTURES))), st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)),
                                                                 min_size=1, max_size=8))
def test_mutated_fatbins_decode_or_fail_cleanly(which, edits):
    data = bytearray(_FATBIN_FIXTURES[which])
    start, end = _fatbin_region(data)
    for where, value in edits:  # bytes inside the fatbin: headers, sizes, flags, payloads
        data[start + where % (end - start)] = value
    try:
        for entry in scan_bytes(bytes(data)):
            entry.payload  # noqa: B018
            if entry.kind == 2:
                try:
                    read_cubin(entry.payload)
                except CubinError as exc:
                    one_line(exc)
    except FatbinError as exc:
        one_line(exc)


@given(st.binary(max_size=400), st.integers(0, 2**64 - 1), st.sampled_from([0, fb.FLAG_LZ4, fb.FLAG_ZSTD]),
       st.booleans())
def test_arbitrary_entries_decode_or_fail_cleanly(payload, declared, flags, zstd_magic):
    if zstd_magic:
        payload = fb.ZSTD_MAGIC + payload
    try:
        for entry in scan_bytes(fatbin((2, 90, flags, payload, declared))):
            assert len(entry.payload) == (declared if entry.compressed else len(payload))
    except FatbinError as exc:
        one_line(exc)


@given(st.binary(max_size=600))
@example(fb.FATBIN_MAGIC + b"\x01\x00\x10\x00" + b"\xff" * 8)
def test_arbitrary_bytes_after_the_magic_fail_cleanly(blob):
    try:
        decode_all(fb.FATBIN_MAGIC + blob)
    except FatbinError as exc:
        one_line(exc)


# -- cubin: ELF headers checked against the file ------------------------------

@pytest.mark.parametrize("size", [4096, 40960])
def test_65535_zero_size_section_headers_are_refused_at_once(size):
    # A header that claims 65,535 empty sections must not be walked section by section.
    data = elf(shentsize=0, shnum=65535, size=size)
    outcome, seconds, _ = timed(read_cubin, data)
    assert isinstance(outcome, CubinError) and "e_shentsize is 0" in one_line(outcome)
    assert seconds < 0.1


@pytest.mark.parametrize("fields,field", [
    ({"shnum": 65535}, "e_shoff"),
    ({"shoff": 2**64 - 64}, "e_shoff"),
    ({"shoff": 0}, "e_shoff"),
    ({"shnum": 0}, "e_shnum"),
    ({"shentsize": 40}, "e_shentsize"),
    ({"shstrndx": 5}, "e_shstrndx"),
    ({"sections": [(0, 3, 4000, 200)]}, "sh_offset"),
    ({"sections": [(0, 3, 2**64 - 1, 2)]}, "sh_offset"),
    ({"shnum": 2, "sections": [(0, 3, 1024, 100), (0, 1, 1000, 100)]}, "overlap"),
    ({"sections": [(5000, 3, 1024, 100)]}, "name offset 5000"),
    ({"sections": [(0, 3, 1024, 100)], "fill": b"x"}, "terminating NUL"),
    ({"sections": [(0, 8, 2**60, 2**60)]}, "not a string table"),
    ({"truncate": 63}, "truncated ELF header"),
])
def test_each_inconsistent_field_is_named(fields, field):
    fill, truncate = fields.pop("fill", None), fields.pop("truncate", None)
    data = bytearray(elf(**fields))
    if fill:
        data[1024:1124] = fill * 100
    if truncate:
        del data[truncate:]
    with pytest.raises(CubinError, match=field) as caught:
        read_cubin(bytes(data))
    assert one_line(caught.value).startswith("not a readable cubin")


def test_overlapping_info_sections_cannot_multiply_the_work():
    # 1,000 section headers over one 60 KB .nv.info.k section: a thousand times the
    # records of the file before; now refused as overlapping.
    shnum = 1000
    shoff = 64 * 1024
    names = b"\0.nv.info.k\0"
    sections = [(0, 3, 200, len(names))] + [(1, 0x70000000, 1024, 60000)] * (shnum - 1)
    data = bytearray(elf(shnum=shnum, shoff=shoff, size=shoff + 64 * shnum, sections=sections))
    data[200:200 + len(names)] = names
    data[1024:61024] = b"\x02\x99\x00\x00" * 15000  # valid records (BVAL) to walk
    outcome, seconds, _ = timed(read_cubin, bytes(data))
    assert isinstance(outcome, CubinError) and "overlap" in one_line(outcome) and seconds < 0.5


def _section_table(data: bytes) -> tuple[int, int]:
    return struct.unpack_from("<Q", data, 40)[0], struct.unpack_from("<H", data, 60)[0]


_FIELDS = st.sampled_from([(40, "<Q"), (58, "<H"), (60, "<H"), (62, "<H"), (48, "<I")])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(FIXTURE_CUBINS)),
       st.lists(st.one_of(
           st.tuples(st.just("header"), _FIELDS, st.integers(0, 2**64 - 1)),
           st.tuples(st.just("section"), st.integers(0, 10**6), st.sampled_from([0, 4, 24, 32, 40, 44]),
                     st.integers(0, 2**64 - 1)),
           st.tuples(st.just("byte"), st.integers(0, 10**7), st.integers(0, 255))), min_size=1, max_size=6))
def test_mutated_cubins_read_or_fail_cleanly(name, edits):
    data = bytearray(FIXTURE_CUBINS[name])
    shoff, shnum = _section_table(data)
    for edit in edits:
        if edit[0] == "header":
            (offset, fmt), value = edit[1], edit[2]
            struct.pack_into(fmt, data, offset, value % (1 << (8 * struct.calcsize(fmt))))
        elif edit[0] == "section":  # a field of one section header: name, type, offset, size, link, info
            _, index, field, value = edit
            width = 4 if field in (0, 4, 40, 44) else 8
            struct.pack_into("<I" if width == 4 else "<Q", data, shoff + 64 * (index % shnum) + field,
                             value % (1 << (8 * width)))
        else:
            data[edit[1] % len(data)] = edit[2]
    start = time.process_time()
    try:
        for kernel in read_cubin(bytes(data)):
            assert isinstance(kernel.name, str) and kernel.registers >= 0
    except CubinError as exc:
        one_line(exc)
    assert time.process_time() - start < 1


@given(st.binary(max_size=2000), st.booleans())
def test_arbitrary_bytes_as_a_cubin_fail_cleanly(blob, with_header):
    data = (elf(size=64)[:64] + blob) if with_header else blob
    try:
        read_cubin(data)
    except CubinError as exc:
        one_line(exc)


def test_the_real_cubins_still_read():
    for name, data in FIXTURE_CUBINS.items():
        assert read_cubin(data), name


# -- demangler: any string, never an exception ----------------------------------

@pytest.mark.parametrize("name", [
    "_Z3f\udcffv",  # an undecodable byte from a pipe (surrogateescape)
    "_Z3\ud800v",  # a lone surrogate
    "_Z5saxpy\0junk",  # a NUL would cut the name short on its way to C
    "_Z" + "1a" * MAX_NAME,  # longer than any real name
    b"_Z5saxpyIfEvT_\xff\xfe".decode("utf-8", "surrogateescape"),
])
def test_names_that_are_not_text_stay_as_written(name):
    assert demangle(name) == name
    assert isinstance(base_name(demangle(name)), str)


def test_valid_names_still_demangle():
    assert demangle("_Z5saxpyIfLi4EEvT_PKS0_PS0_i") in ("void saxpy<float, 4>(float, float const*, float*, int)",
                                                       "_Z5saxpyIfLi4EEvT_PKS0_PS0_i")  # no C++ runtime: as written


@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")),
                 st.text(alphabet="_ZNSIEKPRLTvifcd0123456789abc", max_size=60).map(lambda s: "_Z" + s)))
def test_any_string_demangles_without_raising(name):
    result = demangle(name)
    assert isinstance(result, str)
    assert isinstance(base_name(result), str)


def nested_name(depth: int, function: str = "f") -> str:
    """A template argument list naming the previous one twice, `depth` times: the demangled
    text doubles per level (depth 24: 265 bytes that __cxa_demangle took 4.4 s and 436 MB for;
    depth 28: 313 bytes, 93 s and 7 GB)."""
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def b36(n):
        return digits[n] if n < 36 else b36(n // 36) + digits[n % 36]
    return f"_Z{len(function)}{function}1BI1AS0_E" + "".join(f"1BIS{b36(2 * i - 1)}_S{b36(2 * i - 1)}_E" for i in range(1, depth + 1))


# Demangles in a fresh interpreter: its children are the demangler's worker alone, where the test
# session's own children (compilers among them) would count toward RUSAGE_CHILDREN's peak.
_DEMANGLE_AND_MEASURE = """import json, resource, sys, time
from tuneadvise.advisor.readers.demangle import demangle_many
start = time.monotonic()
result = demangle_many(json.loads(sys.argv[1]))
print(json.dumps([result, time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))
"""


@pytest.mark.skipif(demangler._runtime() is None, reason="no C++ runtime to demangle with")
def test_names_built_to_expand_stay_as_written_in_bounded_time_and_memory():
    import json
    import subprocess
    import sys

    hostile = [nested_name(24), nested_name(28), nested_name(20)]
    real = "_Z5saxpyIfLi4EEvT_PKS0_PS0_i"
    names = json.dumps([real, *hostile, "_Z6kernelPfi"])
    measured = subprocess.run([sys.executable, "-c", _DEMANGLE_AND_MEASURE, names], capture_output=True, text=True,
                              check=True)
    result, elapsed, worker_peak_kib = json.loads(measured.stdout)
    assert [result[n] for n in hostile] == hostile
    assert result[real] == "void saxpy<float, 4>(float, float const*, float*, int)"
    assert result["_Z6kernelPfi"] == "kernel(float*, int)"  # no back-reference: demangled in this process
    assert elapsed < demangler.BATCH_SECONDS + 3  # a hang detector, not a timing: unbounded was minutes
    assert worker_peak_kib < 500 * 1024


@pytest.mark.skipif(demangler._runtime() is None, reason="no C++ runtime to demangle with")
def test_many_names_built_to_expand_share_one_time_budget():
    names = [nested_name(24, f"f{i}") for i in range(10)]  # 10 distinct names of 0.5 s or more each
    start = time.monotonic()
    assert demangle_many(names) == {n: n for n in names}
    assert time.monotonic() - start < demangler.BATCH_SECONDS + 3


@pytest.mark.skipif(demangler._runtime() is None, reason="no C++ runtime to demangle with")
def test_a_threaded_process_demangles_in_a_fresh_interpreter():
    import threading

    done = threading.Event()
    waiter = threading.Thread(target=done.wait, daemon=True)
    waiter.start()
    try:
        names = ["_Z5saxpyIdLi2EEvT_PKS0_PS0_i", nested_name(26), "_Z3fooIiEvT_"]
        result = demangle_many(names)
    finally:
        done.set()
    assert result == {names[0]: "void saxpy<double, 2>(double, double const*, double*, int)",
                      names[1]: names[1], names[2]: "void foo<int>(int)"}


@pytest.mark.skipif(demangler._runtime() is None, reason="no C++ runtime to demangle with")
@given(st.lists(st.text(alphabet="_ZNSIEKPRLTvifcd0123456789abc", max_size=40).map(lambda s: "_Z" + s),
                max_size=20))
def test_the_worker_answers_what_the_runtime_does(names):
    """Short names cannot expand far: the bounded worker's answers are __cxa_demangle's own, in order."""
    expected = {n: demangler._demangle_here(n.encode()) or n for n in names}
    assert demangle_many(names) == expected


@pytest.mark.skipif(demangler._runtime() is None, reason="no C++ runtime to demangle with")
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts native threads through /proc (Linux)")
def test_a_thread_python_does_not_count_still_keeps_the_demangler_from_forking(monkeypatch):
    """A CUDA driver or PyTorch starts native threads that threading.active_count() misses; forking
    beside them can deadlock the worker (Python 3.12 warned of it on the GPU machine)."""
    import _thread
    import threading

    done = threading.Event()
    _thread.start_new_thread(done.wait, ())  # a thread outside the threading module's count
    forks = []
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or pytest.fail("forked beside another thread"))
    try:
        assert not demangler._single_threaded()
        assert demangle_many(["_Z3fooIiEvT_"]) == {"_Z3fooIiEvT_": "void foo<int>(int)"}
    finally:
        done.set()
    assert forks == []


# -- cubin: which aliasing is read and which stays refused -----------------------

_DEBUG_CUBIN = "debug_G_sm_120.cubin"  # .nv.merc.* sections alias debug sections


def _with_section(data: bytes, index: int, offset: int, size: int) -> bytes:
    edited = bytearray(data)
    shoff, _ = _section_table(edited)
    struct.pack_into("<QQ", edited, shoff + 64 * index + 24, offset, size)
    return bytes(edited)


def _alias_pair(data: bytes) -> tuple[int, int, int, int]:
    """(first, second, offset, size) of two sections naming the same bytes."""
    shoff, shnum = _section_table(data)
    seen = {}
    for i in range(shnum):
        stype, = struct.unpack_from("<I", data, shoff + 64 * i + 4)
        offset, size = struct.unpack_from("<QQ", data, shoff + 64 * i + 24)
        if size and stype != 8:
            if (offset, size) in seen:
                return seen[offset, size], i, offset, size
            seen[offset, size] = i
    raise AssertionError("no aliased sections")


def test_a_section_may_alias_exactly_one_other():
    data = FIXTURE_CUBINS[_DEBUG_CUBIN]
    first, second, offset, size = _alias_pair(data)
    assert first != second and read_cubin(data)


@pytest.mark.parametrize("edit,message", [
    (lambda offset, size: (offset + 1, size), "overlap"),  # partial: one byte later
    (lambda offset, size: (offset, size - 1), "overlap"),  # partial: one byte shorter
    (lambda offset, size: (0, 64), "the ELF header"),
])
def test_an_alias_that_is_not_exact_is_refused(edit, message):
    data = FIXTURE_CUBINS[_DEBUG_CUBIN]
    _, second, offset, size = _alias_pair(data)
    with pytest.raises(CubinError, match=message) as caught:
        read_cubin(_with_section(data, second, *edit(offset, size)))
    one_line(caught.value)


def test_a_range_named_by_three_sections_is_refused():
    data = FIXTURE_CUBINS[_DEBUG_CUBIN]
    first, second, offset, size = _alias_pair(data)
    third = next(i for i in range(1, 40) if i not in (first, second) and i != 1)  # not .shstrtab
    with pytest.raises(CubinError, match="at most two sections may alias") as caught:
        read_cubin(_with_section(data, third, offset, size))
    one_line(caught.value)


@pytest.mark.parametrize("table", ["section header table", "program header table"])
def test_a_section_over_the_header_tables_is_refused(table):
    data = FIXTURE_CUBINS[_DEBUG_CUBIN]
    shoff, _ = _section_table(data)
    (phoff,) = struct.unpack_from("<Q", data, 32)
    start = shoff if table == "section header table" else phoff
    _, second, _, _ = _alias_pair(data)
    with pytest.raises(CubinError, match=table) as caught:
        read_cubin(_with_section(data, second, start, 64))
    one_line(caught.value)


def test_a_program_header_table_past_the_end_is_not_read():
    # CuPy's kernel cache stores cubins a byte short of their program header table; nothing here reads it.
    data = FIXTURE_CUBINS[_DEBUG_CUBIN]
    (phoff,) = struct.unpack_from("<Q", data, 32)
    assert read_cubin(data[:-1]) == read_cubin(data) and phoff + 5 * 56 == len(data)
