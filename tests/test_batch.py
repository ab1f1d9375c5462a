"""Batch mode's fast paths give exactly what the general paths give, and no
line, however malformed, stops the batch or shows a traceback."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor import launch
from tuneadvise.advisor.batch import _decode
from tuneadvise.advisor.engine import occupancy as engine
from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.inputs import InputError
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

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


def outcome(function, values):
    try:
        return function(values)
    except InputError as exc:
        return ("InputError", str(exc))


KERNEL_KEYS = sorted(launch.KEYS)


def general_path(values):
    """LaunchConfig.from_mapping with its plain-integer fast path switched off."""
    fast = launch._plain
    launch._plain = lambda values: False
    try:
        return LaunchConfig.from_mapping(values)
    finally:
        launch._plain = fast


@settings(max_examples=1500, deadline=None)
@given(st.dictionaries(st.sampled_from(KERNEL_KEYS), JSON_VALUES))
def test_plain_fast_path_equals_the_parsers(values):
    assert outcome(LaunchConfig.from_mapping, values) == outcome(general_path, values)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(KERNEL_KEYS), st.integers(0, 1024)))
def test_plain_fast_path_on_plain_integers(values):
    # The fast path's own domain: mostly valid, sometimes out of range for one field.
    assert outcome(LaunchConfig.from_mapping, values) == outcome(general_path, values)


def loads_outcome(function, line):
    try:
        return ("value", function(line))
    except json.JSONDecodeError as exc:
        return ("error", exc.msg, exc.pos)


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.tuples(
            st.sampled_from(["", " ", "\t", "\ufeff"]),
            st.dictionaries(st.text(max_size=5), st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=4),
            st.sampled_from(["", "\n", "\r\n", " \n", "\x0c\n", "\u2028", "x", "}"]),
        ).map(lambda t: t[0] + json.dumps(t[1]) + t[2]),
    )
)
def test_the_line_decoder_agrees_with_json_loads(line):
    assert loads_outcome(_decode, line) == loads_outcome(json.loads, line)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["arch", *KERNEL_KEYS, "extra"]),
            st.one_of(JSON_VALUES, st.sampled_from(["volta", "sm_90", "h100-sxm", "sm_99"])),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_fuzzed_batch_objects_never_traceback(items):
    lines = "".join(json.dumps(item) + "\n" for item in items)
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--format", "jsonl"], input=lines)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    outputs = [json.loads(out) for out in result.output.splitlines()]
    assert len(outputs) == len(items)
    bad = [out for out in outputs if "error" in out]
    assert result.exit_code == (2 if bad else 1 if any(not out["launchable"] for out in outputs) else 0)


def test_a_null_required_value_is_reported_as_missing():
    lines = '{"arch": "volta", "registers": null, "block_size": 256}\n{"arch": "volta", "registers": 32, "block_size": 64}\n'
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--format", "jsonl"], input=lines)
    first, second = (json.loads(out) for out in result.output.splitlines())
    assert first["error"] == {"code": "bad-input", "message": "line 1: registers: missing"}
    assert second["active_warps_per_sm"] == 64 and result.exit_code == 2


DEEP = "[" * 100000


@pytest.mark.parametrize(
    "args, name",
    [
        (["occupancy", "--arch", "volta", "-r", "32", "-b", "128", "--spec-file", "{path}"], "deep.json"),
        (["lint", "{log}", "--config", "{path}"], "deep.json"),
        (["lint", "{log}", "--config", "{path}"], "deep.toml"),
        (["lint", "{log}", "--baseline", "{path}"], "deep.json"),
        (["roofline", "--arch", "v100", "--intensity", "3", "--probe", "{path}"], "deep.json"),
        (["roofline", "--arch", "v100", "--intensity", "3", "--kernels", "{path}"], "deep.json"),
    ],
)
def test_deeply_nested_files_are_bad_input_not_a_crash(tmp_path, args, name):
    path = tmp_path / name
    path.write_text(DEEP if name.endswith(".json") else "a = " + DEEP)
    log = tmp_path / "build.log"
    log.write_text(
        "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n"
        "ptxas info    : Used 32 registers, used 0 barriers, 372 bytes cmem[0]\n"
    )
    result = CliRunner().invoke(cli, [a.format(path=path, log=log) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2
    assert result.output.startswith("tuneadvise: error: ") and len(result.output.strip().splitlines()) == 1


def test_deeply_nested_batch_line_is_one_error_line():
    result = CliRunner().invoke(
        cli, ["occupancy", "--batch", "-", "--format", "jsonl"], input=DEEP + '\n{"arch": "sm_90", "registers": 32, "block_size": 256}\n'
    )
    first, second = (json.loads(out) for out in result.output.splitlines())
    assert first["error"]["code"] == "bad-json" and second["launchable"] and result.exit_code == 2


def test_the_engine_memo_never_changes_an_answer(monkeypatch):
    # Tiny tables force constant eviction; answers must equal those of an empty memo each time.
    catalog = shipped_catalog()
    kernels = [
        LaunchConfig(registers=r, block_size=b, static_shared_mem=s, dynamic_shared_mem=d, carveout=c, opt_in=o)
        for r in (0, 32, 64, 255)
        for b in (1, 96, 256, 1024)
        for s in (0, 40000)
        for d in (0, 70000)
        for c in (-1, 50)
        for o in (False, True)
    ]
    memos = (engine._SHAPES, engine._SHARED_MEM, engine._REGISTER_TABLES)
    fresh = {}
    for arch in catalog.archs.values():
        for kernel in kernels:
            for memo in memos:
                memo.clear()
            fresh[(arch.cc, kernel)] = occupancy(arch, kernel)
    for memo in memos:
        monkeypatch.setattr(memo, "limit", 3)
    for _ in range(2):
        for arch in catalog.archs.values():
            for kernel in kernels:
                assert occupancy(arch, kernel) == fresh[(arch.cc, kernel)]
