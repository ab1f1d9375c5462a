"""Hostile objects given to the library's compiled-kernel APIs: analyze_compiled and prune
raise InputError (a ValueError naming the field, one line) for anything they cannot use,
never a TypeError, AttributeError or a bare ValueError from deep inside."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tuneadvise
from tuneadvise.advisor.inputs import InputError
from tuneadvise.specs.names import UnknownArchError

ALLOWED = (InputError, UnknownArchError)


class _NoDict:
    __slots__ = ()


class _TritonOddMetadata:
    metadata = 5  # neither a dict, a namedtuple nor an object with attributes
    asm = {"cubin": b"\x7fELF"}


class _TritonSlotsMetadata:
    metadata = _NoDict()
    asm = {}


class _NumbaOverloadNotAKernel:
    overloads = {("float32",): 5}


class _NumbaMissingFields:
    regs_per_thread = 32  # the rest absent


ODD_OBJECTS = [None, 0, -1, 10 ** 400, math.nan, [], {}, object(), b"", b"\x7fELF", bytes(range(256)) * 4, "", "\0",
               "a\0b.cubin", "/nonexistent/k.cubin", _TritonOddMetadata(), _TritonSlotsMetadata(),
               _NumbaOverloadNotAKernel(), _NumbaMissingFields()]


@pytest.mark.parametrize("obj", ODD_OBJECTS, ids=lambda o: type(o).__name__ + repr(o)[:12])
def test_analyze_compiled_refuses_odd_objects_as_bad_input(obj):
    """'\\0' once raised 'embedded null byte', metadata=5 a TypeError from vars(), an overload that is
    not a kernel an AttributeError."""
    with pytest.raises(ALLOWED) as caught:
        tuneadvise.analyze_compiled(obj, arch="sm_90", block_size=128)
    assert "\n" not in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.one_of(st.none(), st.text(max_size=5)))
def test_analyze_compiled_on_random_bytes_is_an_answer_or_bad_input(data, kernel):
    try:
        tuneadvise.analyze_compiled(data, arch="sm_90", block_size=128, kernel=kernel)
    except ALLOWED as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize("configs, resources, min_occupancy, field", [
    (5, dict, None, "configs"),
    ([{"registers": 32, "block_size": 128}], 5, None, "resources"),
    ([{"registers": 32, "block_size": 128}], dict, "x", "min_occupancy"),
    ([{"registers": 32, "block_size": 128}], dict, math.nan, "min_occupancy"),
    ([{"registers": 32, "block_size": 128}], dict, 50, "min_occupancy"),
    ([{"registers": 32, "block_size": 128}], dict, True, "min_occupancy"),
])
def test_prune_names_the_bad_argument(configs, resources, min_occupancy, field):
    """A non-iterable configs or non-callable resources once raised a bare TypeError; a min_occupancy
    of 'x' a TypeError from a comparison, and NaN silently kept nothing."""
    with pytest.raises(InputError) as caught:
        tuneadvise.prune(configs, "sm_90", resources, min_occupancy=min_occupancy)
    assert caught.value.field == field


_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-2, 1 << 31), st.floats(allow_nan=True), st.text(max_size=4))
_CONFIG = st.one_of(st.dictionaries(st.sampled_from(["registers", "block_size", "num_warps", "shared_mem",
                                                     "dynamic_shared_mem", "opt_in", "cluster_size",
                                                     "max_threads_per_block", "other"]), _VALUE, max_size=6),
                    _VALUE, st.lists(_VALUE, max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(_CONFIG, max_size=4), st.one_of(st.none(), st.floats(), st.integers(-1, 2)))
def test_prune_takes_any_resources_or_names_the_field(configs, min_occupancy):
    try:
        kept = tuneadvise.prune(configs, "sm_90", lambda c: c, min_occupancy=min_occupancy)
    except InputError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(0 < p.occupancy <= 1 and p.active_blocks_per_sm >= 1 for p in kept)


def _cache(tmp_path, monkeypatch):
    from tuneadvise.advisor.toolchain import report_cache as cache_module
    from tuneadvise.advisor.toolchain.discovery import Toolchain

    monkeypatch.setattr(cache_module.Toolchain, "version", property(lambda self: "12.0"))
    return cache_module.PtxasCache(tmp_path, Toolchain("/no/nvcc", "/no/ptxas", "PATH"))


@pytest.mark.parametrize("plant", ["fifo", "dev_zero", "directory", "not_json", "wrong_types", "other_key"])
def test_a_damaged_report_cache_entry_is_a_miss_never_a_hang(tmp_path, monkeypatch, plant):
    """A FIFO at an entry's path once blocked lint for ever, a link to /dev/zero read without end."""
    import os

    cache = _cache(tmp_path, monkeypatch)
    key = "ab" + "0" * 62
    cache.put(key, "ptxas info    : Used 8 registers")
    assert cache.get(key) == "ptxas info    : Used 8 registers"
    path = cache._path(key)
    path.unlink()
    if plant == "fifo":
        os.mkfifo(path)
    elif plant == "dev_zero":
        os.symlink("/dev/zero", path)
    elif plant == "directory":
        path.mkdir()
    else:
        path.write_text({"not_json": "{", "wrong_types": '{"key": 5, "log": [1]}',
                         "other_key": '{"key": "x", "log": "", "sha256": ""}'}[plant])
    assert cache.get(key) is None
