"""Launches read from host code against what the source itself states: each launch line of
tests/fixtures/sources/launches/launch_forms.cu ends with the kernel, block, grid, dynamic shared
memory and cluster it launches (`// expect: ...`), or names the values set at run time
(`run: ...`). The host code is NVIDIA's front end's (`nvcc -cuda`), parsed by libclang."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tuneadvise.advisor.readers.host_expressions import HostParserMissing, clang
from tuneadvise.advisor.toolchain.compile import Build, compile_one
from tuneadvise.advisor.toolchain.host_code import host_half

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
def launches():
    required(libclang, "libclang (the [host] extra)")
    chain = required_toolchain()
    result = compile_one(chain, Build(str(FORMS), "sm_90", host=True))
    assert result.error is None and result.host_problem is None
    return result.launches


def test_the_host_half_is_nvccs_own_commands():
    listing = ['#$ _SPACE_= ', '#$ PATH=/x/bin:/usr/bin', '#$ gcc -E -x c++ -I"inc" "k.cu" -o "/s/k.cpp4.ii"',
               '#$ cudafe++ --c++17 --gen_c_file_name "/s/k.cudafe1.cpp" "/s/k.cpp4.ii"',
               '#$ "$CICC_PATH/cicc" --c++17 "/s/k.cpp1.ii" -o "/s/k.ptx"',
               '#$ gcc -E -x c++ -D__CUDA_FTZ=0 -I"inc" "-isystem" "/t/include/cccl" -m64 "/s/k.cudafe1.cpp" -o "/s/h.ii"']
    commands, flags = host_half(listing)
    assert commands == [listing[2][3:], listing[3][3:]]  # the host preprocessing and cudafe++, nothing of the device's
    assert flags == ["-D", "__CUDA_FTZ=0", "-I", "inc", "-isystem", "/t/include/cccl"]
    assert host_half(listing[:3]) is None


def test_every_launch_form_is_read_as_the_source_states_it(launches):
    truth = expected(FORMS)
    by_line = {launch.line: launch for launch in launches}
    assert set(by_line) == set(truth)  # every launch found, none invented (the stubs' calls are not launches)
    for line, want in truth.items():
        got = by_line[line]
        assert got.file == str(FORMS)
        kernel = (None, want["kernel"][9:]) if want["kernel"].startswith("template:") else (want["kernel"], None)
        assert (got.kernel, got.kernel_template) == kernel, line
        assert (got.run_time, got.block_from) == (want["run_time"], want["block_from"]), line
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
        assert start.startswith(("scale", "tile_sum", "cuda", "cu", "LAUNCH_SCALE")), (launch.line, start)  # scale_any too


def test_extended_launch_names_its_attributes(launches):
    [extended] = [launch for launch in launches if launch.api == "cudaLaunchKernelEx"]
    assert extended.attributes == ("cudaLaunchAttributeClusterDimension",
                                   "cudaLaunchAttributeClusterSchedulingPolicyPreference",
                                   "cudaLaunchAttributePreferredSharedMemoryCarveout")


_SIZES = {"char": 1, "short": 2, "int": 4, "float": 4, "double": 8, "long long": 8}


def _expression(rng, depth: int = 0) -> tuple[str, int | None]:
    """A launch argument and its value as C++ computes it (None: known only at run time)."""
    if rng.random() < 0.06:  # a run-time value: a parameter, or a local the function assigns again
        return rng.choice([("n", None), ("varies", None)])
    pick = rng.randrange(7 if depth < 3 else 3)
    if pick == 0:
        value = rng.randint(1, 64)
        return str(value), value
    if pick == 1:
        name = rng.choice(list(_SIZES))
        return f"sizeof({name})", _SIZES[name]
    if pick == 2:
        return rng.choice([("WIDTH", 32), ("kDepth", 4), ("kHalf", 16), ("local_const", 8), ("local_plain", 2)])
    left, right = _expression(rng, depth + 1), _expression(rng, depth + 1)
    op = rng.choice(["+", "*", "/", "<<"])
    if op == "/" and right[1] == 0 or op == "<<" and (right[1] or 0) > 4:
        op = "+"
    text = f"({left[0]} {op} {right[0]})"
    if left[1] is None or right[1] is None:
        return text, None
    value = {"+": left[1] + right[1], "*": left[1] * right[1], "/": left[1] // max(right[1], 1),
             "<<": left[1] << right[1]}[op]
    return text, value


def test_compile_time_arithmetic_over_a_seeded_sweep(tmp_path):
    """Eighty launch arguments built at random from literals, macros, constexpr, const and unchanged
    locals, sizeof and arithmetic: each value is what C++ computes, or named as set at run time."""
    import random

    required(libclang, "libclang (the [host] extra)")
    chain = required_toolchain()
    rng = random.Random(39)
    cases = [_expression(rng) for _ in range(80)]
    body = "".join(f"    sweep<<<1, {text}>>>(x);\n" for text, _ in cases)
    source = tmp_path / "sweep.cu"
    source.write_text("#define WIDTH 32\nconstexpr int kDepth = 4;\n__global__ void sweep(float *x) { x[0] = 1; }\n"
                      "void run(float *x, int n) {\n    const int kHalf = WIDTH / 2;\n    const int local_const = 8;\n"
                      "    int local_plain = 2;\n    int varies = 1;\n    if (n > 3) varies = 7;\n" + body + "}\n")
    result = compile_one(chain, Build(str(source), "sm_90", host=True))
    assert result.host_problem is None
    by_line = {launch.line: launch for launch in result.launches}
    for offset, (text, value) in enumerate(cases):
        launch = by_line[10 + offset]
        valid = value is not None and 1 <= value <= 1024
        if value is None:
            assert launch.block is None and "block size" in launch.run_time, text
        elif valid:
            assert launch.block == (value, 1, 1), text


def _nested(tmp_path, depth: int):
    """A source whose host function launches `first`, then nests `depth` calls (which the front end
    keeps as written, unlike parentheses), then launches `second` with block 128 inside `depth`
    nested blocks."""
    deep = "f(" * depth + "n" + ")" * depth
    source = tmp_path / "nested.cu"
    source.write_text("__global__ void first(float *x) { x[0] = 1; }\n__global__ void second(float *x) { x[0] = 2; }\n"
                      "int f(int v) { return v + 1; }\nvoid run(float *x, int n) {\n    first<<<1, 64>>>(x);\n"
                      f"    int deep = {deep};\n    {'{' * depth} second<<<deep, 128>>>(x); {'}' * depth}\n}}\n")
    return compile_one(required_toolchain(), Build(str(source), "sm_90", host=True))


@pytest.mark.parametrize("depth", [300, 1000])
def test_brackets_nested_past_clangs_default_and_pythons_recursion_lose_no_launch(tmp_path, depth):
    """clang's default bracket depth (256) stopped the parse there, silently dropping the launches
    after it; a walk by recursion stopped at Python's limit (1000 frames)."""
    required(libclang, "libclang (the [host] extra)")
    result = _nested(tmp_path, depth)
    assert result.host_problem is None
    assert [(launch.line, launch.block) for launch in result.launches] == [(5, (64, 1, 1)), (7, (128, 1, 1))]


def test_brackets_nested_past_the_parsers_bound_are_a_problem_naming_the_file(tmp_path):
    from tuneadvise.advisor.readers.host_launches import BRACKET_DEPTH

    required(libclang, "libclang (the [host] extra)")
    result = _nested(tmp_path, BRACKET_DEPTH + 1)
    assert result.launches is None
    assert re.fullmatch(r"host code not read past \S*nested\.cu:6: bracket nesting level exceeded maximum of \d+",
                        result.host_problem), result.host_problem
