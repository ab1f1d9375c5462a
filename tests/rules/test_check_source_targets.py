"""check-source flags what breaks on any target a file is built for, as NVIDIA's compiler does;
columns, and the machine formats lint writes (SARIF with suggested fixes, GitHub, JSON)."""

import json
import os
import subprocess

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.rules.source_scan import scan_source
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import TESTS
from ..reference import nvcc as nvcc_reference
from ..reference.header import required

RECORDED = json.loads((TESTS / "fixtures" / "sources" / "legacy_intrinsics" / "nvcc.json").read_text())
SARIF_SCHEMA = json.loads((TESTS / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
LEGACY = "__global__ void k(float *out, float v) {\n    v += __shfl_down(v, 16);\n    out[0] = v;\n}\n"


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths relative to the working directory, as annotations want them


def check(tmp_path, text: str, *args: str):
    (tmp_path / "k.cu").write_text(text)
    return CliRunner().invoke(cli, ["check-source", "k.cu", *args], catch_exceptions=False)


def flagged(tmp_path, text: str, target: str) -> set:
    result = check(tmp_path, text, "--target", target, "--format", "json")
    return {f["code"] for f in json.loads(result.output)["findings"]}


def test_a_file_built_for_an_old_and_a_new_target_is_flagged_for_the_new_one(tmp_path):
    result = check(tmp_path, LEGACY, "--target", "sm_60", "--target", "sm_90")
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith("k.cu:2:10: __shfl_down does not compile for sm_90")
    assert result.output.splitlines()[-1] == "1 finding in 1 file for sm_60, sm_90"
    same = check(tmp_path, LEGACY, "--target", "sm_90,sm_60")
    assert same.output == result.output
    assert check(tmp_path, LEGACY, "--target", "sm_60").exit_code == 0  # Pascal alone: lock-step holds


@pytest.mark.parametrize("name", sorted(RECORDED["results"]))
def test_flagged_exactly_where_the_recorded_compiler_fails(tmp_path, name):
    for target, outcome in RECORDED["results"][name].items():
        breaks = "TA801" in flagged(tmp_path, RECORDED["sources"][name], target)
        assert breaks == (not outcome["compiles"]), (name, target, outcome)


def test_flagged_exactly_where_the_installed_compiler_fails_and_the_fix_builds(tmp_path):
    nvcc = required(nvcc_reference.toolchain, "NVIDIA's compiler (the [nvcc] extra)").nvcc
    for name in ("__shfl_xor", "__ballot"):
        text = RECORDED["sources"][name]
        (tmp_path / "k.cu").write_text(text)
        built = subprocess.run([nvcc, "-arch=sm_90", "-c", "k.cu", "-o", os.devnull], cwd=tmp_path,
                               capture_output=True).returncode == 0
        sarif = json.loads(check(tmp_path, text, "-t", "sm_90", "--format", "sarif").output)
        results = sarif["runs"][0]["results"]
        assert bool(results) == (not built), name
        change = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
        region, line = change["deletedRegion"], text.splitlines()[0]
        fixed = line[:region["startColumn"] - 1] + change["insertedContent"]["text"] + line[region["endColumn"] - 1:]
        (tmp_path / "k.cu").write_text(fixed + "\n")
        done = subprocess.run([nvcc, "-arch=sm_90", "-c", "k.cu", "-o", os.devnull], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, (fixed, done.stderr)


def test_sarif_is_valid_with_columns_and_a_suggested_fix(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    result = check(tmp_path, LEGACY + "int m = __mul24(1, 2);\n", "-t", "sm_60,sm_90", "--format", "sarif")
    sarif = json.loads(result.output)
    jsonschema.validate(sarif, SARIF_SCHEMA)
    shfl, mul24 = sarif["runs"][0]["results"]
    assert shfl["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 10,
                                                                  "endColumn": 22}
    replacement = shfl["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "__shfl_down_sync(0xffffffff, "
    assert "fixes" not in mul24 and mul24["ruleId"] == "TA803"


def test_github_annotations_and_json_come_from_the_same_document(tmp_path):
    github = check(tmp_path, LEGACY, "-t", "sm_90", "--format", "github").output
    assert github.startswith("::error file=k.cu,line=2,col=10,endColumn=21,title=TA801 legacy-warp-intrinsic::")
    doc = json.loads(check(tmp_path, LEGACY, "-t", "sm_90", "--format", "json").output)
    assert doc["targets"] == ["sm_90"] and doc["summary"]["passed"] is False
    (finding,) = doc["findings"]
    assert finding["details"]["column"] == 10 and finding["details"]["targets"] == ["sm_90"]
    assert finding["message"] in github


def test_lint_scans_sources_for_every_architecture_it_is_given(tmp_path):
    log = tmp_path / "build.log"
    log.write_text("ptxas info    : Compiling entry function '_Z1kPff' for 'sm_60'\n"
                   "ptxas info    : Used 16 registers\n"
                   "ptxas info    : Compiling entry function '_Z1kPff' for 'sm_90'\n"
                   "ptxas info    : Used 16 registers\n")
    (tmp_path / "k.cu").write_text(LEGACY)
    result = CliRunner().invoke(cli, ["lint", "build.log", "k.cu", "--arch", "sm_60", "--arch", "sm_90",
                                      "--format", "json"])
    codes = [f["code"] for f in json.loads(result.output)["source_findings"] if f["code"].startswith("TA8")]
    assert codes == ["TA801"]


@pytest.mark.parametrize(("given", "error"), [
    (",", "tuneadvise: error: --target: name the architectures the code is built for (sm_70, 9.0, hopper...)"),
    ("sm_90,hoper", "tuneadvise: error: --target: unknown architecture 'hoper'; did you mean hopper"),
])
def test_a_bad_target_is_one_line_naming_the_option(tmp_path, given, error):
    (tmp_path / "k.cu").write_text(LEGACY)
    result = CliRunner().invoke(cli, ["check-source", "k.cu", "--target", given])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(error) and len(result.stderr.splitlines()) == 1


_ARCHS = [shipped_catalog().resolve(name).arch for name in ("sm_20", "sm_35", "sm_60", "sm_70", "sm_90", "sm_120")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["__shfl_up(v, 1)", "__ballot(p)", "__mul24(a, b)", "volatile float *s;", " ", "\n",
                                 "__syncwarp();", "// x\n", "int v;"]), max_size=30).map("".join),
       st.lists(st.sampled_from(_ARCHS), min_size=1, max_size=4))
def test_several_targets_flag_the_union_of_each_target_alone(text, targets):
    """A finding for a set of targets is exactly a finding for one of them alone, naming those."""
    together = {(f.code, f.details["line"], f.details["column"]): f.details["targets"]
                for f in scan_source(text, "k.cu", targets)}
    alone: dict = {}
    for arch in sorted(set(targets), key=lambda a: (a.major, a.minor)):
        for f in scan_source(text, "k.cu", [arch]):
            alone.setdefault((f.code, f.details["line"], f.details["column"]), []).append(arch.sm)
    assert together == alone


# A full lane mask only where every lane of the warp provably reaches the call.
_KERNEL = "__global__ void k(float *p, int n) {{\n    float v = p[threadIdx.x];\n{body}\n    p[0] = v;\n}}\n"
MASKS = [
    ("    v += __shfl_down(v, 16);", "safe"),
    ("    if (threadIdx.x < 16) {\n        v += __shfl_down(v, 8);\n    }", "unsafe"),
    ("    if (threadIdx.x < 16)\n        v += __shfl_down(v, 8);", "unsafe"),
    ("    if (threadIdx.x < 16) v += __shfl_down(v, 8);", "unsafe"),
    ("    for (int o = 16; o > 0; o /= 2)\n        v += __shfl_down(v, o);", "unsafe"),
    ("    while (n-- > 0) { v += __shfl_xor(v, 1); }", "unsafe"),
    ("    if (threadIdx.x >= n) return;\n    v += __shfl_down(v, 16);", "unsafe"),
    ("    if (threadIdx.x < 16) {\n        v *= 2;\n    }\n    v += __shfl_down(v, 16);", "safe"),
    ("    if (n) { v = 1; } else v += __shfl_down(v, 16);", "unsafe"),
    ("    v = n > 0 ? __shfl(v, 0) : v;", "unsafe"),
    ("    v = __ballot(v > 0) ? v : 0;", "safe"),
    ("    bool b = n > 0 && __any(v > 0);", "unsafe"),
    ("    if (n) v = p[0] + float2{1, 2}.x + __shfl(v, 0);", "unsafe"),
    ("    float2 w = {1, 2};\n    v += __shfl(v, 0) + w.x;", "safe"),
    ("    switch (n) {\n    case 0: v += __shfl(v, 0);\n    }", "unsafe"),
]


@pytest.mark.parametrize("body,applicability", MASKS)
def test_the_full_mask_only_where_every_lane_reaches_the_call(tmp_path, body, applicability):
    doc = json.loads(check(tmp_path, _KERNEL.format(body=body), "-t", "sm_90", "--format", "json").output)
    (finding,) = doc["findings"]
    details = finding["details"]
    assert details["fix_applicability"] == applicability
    mask = "0xffffffff" if applicability == "safe" else "__activemask()"
    assert details["replacement"].endswith(f"_sync({mask}, ") and details["fix"].startswith("Replace with")


def test_a_device_function_is_not_provably_uniform(tmp_path):
    doc = json.loads(check(tmp_path, "__device__ float f(float v) { return __shfl(v, 0); }\n", "-t", "sm_90",
                           "--format", "json").output)
    assert doc["findings"][0]["details"]["replacement"] == "__shfl_sync(__activemask(), "


def test_sarif_marks_each_fix_safe_or_unsafe(tmp_path):
    text = _KERNEL.format(body=MASKS[0][0] + "\n" + MASKS[1][0])
    sarif = json.loads(check(tmp_path, text, "-t", "sm_90", "--format", "sarif").output)
    fixes = [result["fixes"][0] for result in sarif["runs"][0]["results"]]
    assert [fix["properties"]["applicability"] for fix in fixes] == ["safe", "unsafe"]
    assert "0xffffffff" in fixes[0]["description"]["text"] and "unsafe" in fixes[1]["description"]["text"]


def test_the_unsafe_fix_builds_too(tmp_path):
    nvcc = required(nvcc_reference.toolchain, "NVIDIA's compiler (the [nvcc] extra)").nvcc
    text = _KERNEL.format(body=MASKS[1][0] + "\n" + MASKS[0][0])
    sarif = json.loads(check(tmp_path, text, "-t", "sm_90", "--format", "sarif").output)
    lines = text.splitlines()
    for result in reversed(sarif["runs"][0]["results"]):
        change = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
        region = change["deletedRegion"]
        row = lines[region["startLine"] - 1]
        lines[region["startLine"] - 1] = (row[:region["startColumn"] - 1] + change["insertedContent"]["text"]
                                          + row[region["endColumn"] - 1:])
    (tmp_path / "k.cu").write_text("\n".join(lines) + "\n")
    done = subprocess.run([nvcc, "-arch=sm_90", "-c", "k.cu", "-o", os.devnull], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
