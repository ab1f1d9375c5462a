"""Batch mode: each line is the document `occupancy --format json` prints for the
same values, findings included; no line, however malformed, stops the batch or
shows a traceback."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor import launch
from tuneadvise.advisor.engine import occupancy as engine
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import JSON_VALUES

KERNEL_KEYS = sorted(launch.KEYS)


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


def test_the_engine_caches_answer_for_the_arch_asked_not_one_cached_before():
    """The limits are cached by the Arch's values: an Arch with the same name and compute
    capability but other values (a user's spec file, a --cuda release) gets its own answer.
    sm_90, 64 registers, 256 threads: 2,048 registers a warp, 8 warps a block. 65,536
    registers hold 32 such warps (4 blocks), 32,768 hold 16 (2); 64 warps per SM hold 8
    blocks, 32 hold 4."""
    shipped = shipped_catalog().archs["9.0"]
    assert engine.shape_limits(shipped, 64, 256)[:2] == (8, 4)
    halved = shipped._replace(registers_per_sm=32768, max_warps_per_sm=32)
    assert halved.sm == shipped.sm and halved != shipped
    assert engine.shape_limits(halved, 64, 256)[:2] == (4, 2)
    twin = halved._replace(names=tuple(halved.names))  # equal by value, another object: the same answer
    assert twin == halved and hash(twin) == hash(halved)
    assert engine.shape_limits(twin, 64, 256)[:2] == (4, 2)


# --------------------------------------------------------------------------
# A batch line is the single query's document
# --------------------------------------------------------------------------

def cli_args(values: dict) -> list[str]:
    """`occupancy` options for a batch line's values."""
    args = ["--arch", values["arch"]]
    for key, value in values.items():
        if key == "arch":
            continue
        option = "--" + key.replace("_", "-")
        if key == "opt_in":
            args += [option] if value else []
        else:
            args += [option, "x".join(map(str, value)) if isinstance(value, list) else str(value)]
    return args


LINE_VALUES = st.fixed_dictionaries(
    {"arch": st.sampled_from(["sm_70", "sm_80", "sm_90", "sm_120", "volta", "h100-sxm", "rtx-4090", "fermi"]),
     "registers": st.integers(0, 255),
     "block_size": st.one_of(st.integers(1, 1024), st.sampled_from([[16, 16], [32, 8, 2], [7, 9]]))},
    optional={
        "shared_mem": st.sampled_from([0, 1000, 12288, 50000]),
        "dynamic_shared_mem": st.sampled_from([0, 4096, 70000]),
        "carveout": st.sampled_from(["default", "max-l1", 50, 100]),
        "opt_in": st.booleans(),
        "barriers": st.integers(0, 16),
        "max_threads_per_block": st.integers(1, 1024),
        "grid_size": st.integers(1, 5000),
        "sm_count": st.integers(1, 200),
        "cluster_size": st.integers(1, 20),
        "compiled_for": st.sampled_from(["sm_70", "sm_75", "sm_90a"]),
        "spill_stores": st.integers(0, 512),
        "spill_loads": st.integers(0, 512),
        "stack_frame": st.integers(0, 512),
    },
)
SELECTIONS = st.sampled_from([(), ("--select", "TA3"), ("--ignore", "TA301,TA5"), ("--select", "TA6,TA7")])


@settings(max_examples=120, deadline=None)
@given(LINE_VALUES, SELECTIONS)
def test_a_batch_line_is_the_single_query_byte_for_byte(values, selection):
    single = CliRunner().invoke(cli, ["occupancy", *cli_args(values), *selection, "--format", "json"])
    batch = CliRunner().invoke(cli, ["occupancy", "--batch", "-", *selection], input=json.dumps(values) + "\n")
    assert single.exit_code in (0, 1), single.output
    assert batch.output == single.output
    assert batch.exit_code == single.exit_code


def test_batch_lines_carry_findings_and_every_key():
    values = {"arch": "h100-sxm", "registers": 64, "block_size": [16, 16], "shared_mem": "12K", "dynamic_shared_mem": 0,
              "carveout": 50, "opt_in": False, "barriers": 1, "virtual_resources": 4, "max_threads_per_block": 256,
              "grid_size": 200, "sm_count": 132, "cluster_size": 2, "compiled_for": "sm_90", "spill_stores": 64, "spill_loads": 64,
              "stack_frame": 128}
    assert set(values) == launch.KEYS | {"arch"}
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=json.dumps(values) + "\n")
    [line] = [json.loads(out) for out in result.output.splitlines()]
    codes = {f["code"] for f in line["findings"]}
    assert {"TA301", "TA501"} <= codes, codes
    ignored = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--ignore", "TA5"], input=json.dumps(values) + "\n")
    assert not any(f["code"].startswith("TA5") for f in json.loads(ignored.output)["findings"])


def test_a_refused_cluster_fails_the_batch_line():
    lines = "".join(json.dumps({"arch": arch, "registers": 32, "block_size": 256, "cluster_size": size}) + "\n"
                    for arch, size in (("sm_90", 8), ("sm_80", 2)))
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=lines)
    first, second = (json.loads(out) for out in result.output.splitlines())
    assert first["launchable"] and not second["launchable"] and second["errors"][0]["code"] == "cluster-size"
    assert result.exit_code == 1


def test_repeated_lines_give_the_same_line():
    line = json.dumps({"arch": "volta", "registers": 64, "block_size": 256}) + "\n"
    other = json.dumps({"arch": "sm_90", "registers": 64, "block_size": 256}) + "\n"
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=line + other + line + other)
    outs = result.output.splitlines()
    assert outs[0] == outs[2] and outs[1] == outs[3] and outs[0] != outs[1]


def test_the_default_arch_serves_lines_without_one():
    line = json.dumps({"registers": 64, "block_size": 256}) + "\n"
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-", "--arch", "volta"], input=line)
    single = CliRunner().invoke(cli, ["occupancy", "--arch", "volta", "-r", "64", "-b", "256", "--format", "json"])
    assert result.output == single.output


def test_an_undecodable_line_is_one_error_line_and_the_batch_goes_on(tmp_path):
    """A line that is not UTF-8 is that line's error: the lines before and after it are answered."""
    good = json.dumps({"arch": "sm_90", "registers": 32, "block_size": 256}).encode() + b"\n"
    data = b"\xef\xbb\xbf" + good + b'{"arch": "sm_90\xff"}\n' + b"\xc3\x28\n" + good
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)
    for args, stdin in ((["--batch", str(path)], None), (["--batch", "-"], data)):
        result = CliRunner().invoke(cli, ["occupancy", *args], input=stdin)
        lines = [json.loads(out) for out in result.output.splitlines()]
        assert len(lines) == 4 and result.exit_code == 2
        assert lines[0]["launchable"] and lines[3]["launchable"]  # a byte-order mark on line 1 is skipped
        assert lines[1]["error"]["message"] == "line 2: not UTF-8 text (byte 0xff at column 16)"
        assert lines[2]["error"]["message"] == "line 3: not UTF-8 text (byte 0xc3 at column 1)"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=6))
def test_any_bytes_give_one_line_per_nonblank_line(raw_lines):
    data = b"".join(line + b"\n" for line in raw_lines)
    result = CliRunner().invoke(cli, ["occupancy", "--batch", "-"], input=data)
    assert result.exit_code in (0, 1, 2), result.output
    out = [json.loads(line) for line in result.output.splitlines()]
    assert len(out) == sum(map(_gives_a_line, raw_lines, range(1, len(raw_lines) + 1)))


def _gives_a_line(line: bytes, number: int) -> bool:
    try:
        return bool(line.decode("utf-8-sig" if number == 1 else "utf-8").strip())
    except UnicodeDecodeError:
        return True  # an error line


def test_a_line_id_of_any_json_value_is_echoed_first_on_its_result_and_error_lines():
    import io

    from tuneadvise.advisor.batch import run_batch

    ids = [7, "k-1", {"a": [1, None, True]}, [2.5], None]
    lines = [json.dumps({"id": i, "arch": "sm_90", "registers": 32, "block_size": 128}) for i in ids]
    lines.append(json.dumps({"id": "bad", "arch": "sm_90", "registers": 999, "block_size": 128}))
    lines.append(json.dumps({"arch": "sm_90", "registers": 32, "block_size": 128}))
    out = io.StringIO()
    assert run_batch(lines, out) == 2
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [d.get("id", "none") for d in docs] == [*ids, "bad", "none"]
    assert all(next(iter(d)) == "id" for d in docs[:-1])
    assert docs[0]["occupancy"] == docs[-1]["occupancy"] and "registers" in docs[5]["error"]["message"]


def test_an_id_json_cannot_write_back_is_bad_input():
    import io

    from tuneadvise.advisor.batch import run_batch

    out = io.StringIO()
    assert run_batch(['{"id": NaN, "arch": "sm_90", "registers": 32, "block_size": 128}'], out) == 2
    doc = json.loads(out.getvalue())
    assert "id" not in doc and "id:" in doc["error"]["message"]
