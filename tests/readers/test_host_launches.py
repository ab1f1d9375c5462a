"""Launches read from host code against what the source itself states: each launch line of
tests/fixtures/sources/launches/launch_forms.cu ends with the kernel, block, grid, dynamic shared
memory and cluster it launches (`// expect: ...`), or names the values set at run time
(`run: ...`). The host code is NVIDIA's front end's (`nvcc -cuda`), parsed by libclang."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tuneadvise.advisor.readers.host_expressions import HostParserMissing, clang
from tuneadvise.advisor.toolchain.host_code import HOST_FILE, host_command, read_host_file

from ..reference.header import Unavailable, required
from ..toolchain.test_compile_loop import required_toolchain

FORMS = Path(__file__).resolve().parents[1] / "fixtures" / "sources" / "launches" / "launch_forms.cu"
_EXPECT = re.compile(r"^\s*[^/\s].*// expect: (\S+)(.*)$")  # a launch line, not a comment


def libclang():
    try:
        return clang()
    except HostParserMissing as exc:
        raise Unavailable(str(exc)) from None


def expected(path: Path) -> dict[int, dict]:
    """line -> what the source says that line launches."""
    out = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = _EXPECT.search(line)
        if match is None:
            continue
        rest = match.group(2)
        values = {"kernel": match.group(1)}
        for key in ("block", "grid", "cluster"):
            found = re.search(rf"\b{key} (\d+),(\d+),(\d+)", rest)
            values[key] = tuple(map(int, found.groups())) if found else None
        smem = re.search(r"\bsmem (\d+)", rest)
        values["smem"] = int(smem.group(1)) if smem else 0
        run = re.search(r"run: ([a-z ,]+?)(?: from:|$)", rest)
        values["run_time"] = tuple(p.strip() for p in run.group(1).split(",")) if run else ()
        chosen = re.search(r"from: (\w+)", rest)
        values["block_from"] = chosen.group(1) if chosen else None
        out[number] = values
    return out


@pytest.fixture(scope="module")
def launches(tmp_path_factory):
    required(libclang, "libclang (the [host] extra)")
    chain = required_toolchain()
    scratch = tmp_path_factory.mktemp("host")
    done = subprocess.run(host_command(chain.nvcc, "sm_90", (), [], str(FORMS), str(scratch)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (scratch / HOST_FILE).is_file()
    found, problem = read_host_file(str(scratch), chain.root, None)
    assert problem is None
    return found


def test_every_launch_form_is_read_as_the_source_states_it(launches):
    truth = expected(FORMS)
    by_line = {launch.line: launch for launch in launches}
    assert set(by_line) == set(truth)  # every launch found, none invented (the stubs' calls are not launches)
    for line, want in truth.items():
        got = by_line[line]
        assert got.file == str(FORMS)
        assert (got.kernel, got.run_time, got.block_from) == (want["kernel"], want["run_time"], want["block_from"]), line
        if "block size" not in want["run_time"]:
            assert got.block == want["block"], line
        if "grid" not in want["run_time"]:
            assert got.grid == want["grid"], line
        assert got.dynamic_shared_mem == want["smem"], line
        assert got.cluster == want["cluster"], line


def test_columns_are_the_users_not_the_front_ends(launches):
    lines = FORMS.read_text().splitlines()
    for launch in launches:
        text = lines[launch.line - 1]
        assert 1 <= launch.column <= len(text)
        start = text[launch.column - 1:]
        assert start.startswith(("scale", "tile_sum", "cuda", "cu", "LAUNCH_SCALE")), (launch.line, start)


def test_extended_launch_names_its_attributes(launches):
    [extended] = [launch for launch in launches if launch.api == "cudaLaunchKernelEx"]
    assert extended.attributes == ("cudaLaunchAttributeClusterDimension",
                                   "cudaLaunchAttributeClusterSchedulingPolicyPreference",
                                   "cudaLaunchAttributePreferredSharedMemoryCarveout")
