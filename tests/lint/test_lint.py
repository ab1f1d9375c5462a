"""`tuneadvise lint`, `diff` and `schema` over real compiler output
(tests/fixtures/lint: CUDA 13.0 on sm_75 to sm_120), through CliRunner."""

import csv
import functools
import io
import json
import tempfile
import xml.dom.minidom
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.lint.schema import LINT_OUTPUT_SCHEMA
from tuneadvise.cli.main import cli

from ..helpers import ROOT, TESTS, assert_one_line_error

FIXTURES = TESTS / "fixtures" / "lint"
KERNELS_CU = TESTS / "gpu" / "lint_kernels.cu"
SARIF_SCHEMA = json.loads((TESTS / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())

CONFIG = """\
arch = ["sm_80", "sm_90"]
min-occupancy = 0.3

[[kernels]]
name = "tiled_matmul"
block_size = "16x16"
dynamic_shared_mem = "4K"

[[kernels]]
name = "saxpy<float*"
block_size = 512
grid_size = 1000

[[budgets]]
kernel = "spilling"
no_spills = true

[[budgets]]
kernel = "*"
max_registers = 64
"""


def run(*args, input=None, cwd=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lint_json(*args, input=None):
    result = run("lint", *args, "--format", "json", input=input)
    doc = json.loads(result.stdout)  # stdout is the JSON alone; messages go to stderr
    jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
    return result.exit_code, doc


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "tuneadvise.toml"
    path.write_text(CONFIG)
    return path


def by_key(doc):
    return {(k["name"], k["arch"]): k for k in doc["kernels"]}


@pytest.mark.parametrize("sm", (75, 80, 86, 89, 90, 100, 120))
def test_log_listing_and_cubin_agree_through_lint(sm):
    code, doc = lint_json(FIXTURES / f"ptxas_sm_{sm}.log", FIXTURES / f"cuobjdump_sm_{sm}.txt",
                          FIXTURES / f"lint_sm_{sm}.cubin", "--arch", f"sm_{sm}")
    assert doc["summary"]["kernels"] == 7 and not doc["problems"]
    for kernel in doc["kernels"]:
        assert sorted(s["tool"] for s in kernel["sources"]) == ["cubin", "cuobjdump", "ptxas"]
        assert "TA905" not in [f["code"] for f in kernel["findings"]], kernel["findings"]
        assert kernel["figures_from"] == "cubin" and kernel["arch"] == f"sm_{sm}"


def test_contract_fields_and_demangling():
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log")
    kernels = by_key(doc)
    saxpy = kernels[("_Z5saxpyIfLi4EEvT_PKS0_PS0_i", "sm_90")]
    assert saxpy["demangled"] == "void saxpy<float, 4>(float, float const*, float*, int)"
    matmul = kernels[("_Z12tiled_matmulPKfS0_Pfi", "sm_90")]
    assert matmul["shared_mem"] == 8448 and matmul["barriers"] == 1
    spilling = kernels[("_Z8spillingPKfPfi", "sm_90")]
    # ptxas: 416 bytes stack frame, 496 bytes spill stores, 536 bytes spill loads: each figure by its name
    assert (spilling["spill_stores"], spilling["spill_loads"], spilling["stack_frame"]) == (496, 536, 416)
    [spills] = [f for f in spilling["findings"] if f["code"] == "TA501"]
    assert spills["message"].startswith("496 B of spill stores") and spills["details"] == {"spill_stores": 496, "spill_loads": 536}
    occ = matmul["occupancy"]
    for key in ("schema_version", "arch", "compute_capability", "active_blocks_per_sm", "active_warps_per_sm",
                "max_warps_per_sm", "occupancy", "limiters", "launchable", "errors"):
        assert key in occ
    # nothing configured: said once for the run, counting every kernel
    [unconfigured] = [f for f in doc["source_findings"] if f["code"] == "TA906"]
    assert doc["summary"]["by_code"]["TA906"] == 1 and unconfigured["details"]["kernels"] == 7
    assert code == 0  # findings are warnings and infos only


def test_config_joins_launch_settings_budgets_and_archs(config):
    code, doc = lint_json(FIXTURES / "lint_multi.o", FIXTURES / "ptxas_multi.log", "--config", config)
    kernels = by_key(doc)
    assert {arch for _, arch in kernels} == {"sm_80", "sm_90"}  # sm_120 filtered by the config
    matmul = kernels[("_Z12tiled_matmulPKfS0_Pfi", "sm_90")]
    assert matmul["launch"]["block_dims"] == [16, 16] and matmul["launch"]["dynamic_shared_mem"] == 4096
    assert matmul["launch"]["configured_by"] == "tiled_matmul"
    assert matmul["occupancy"]["input"]["shared_mem"] == 8448
    heavy = kernels[("_Z5heavyPKdPdi", "sm_90")]
    codes = [f["code"] for f in heavy["findings"]]
    assert {"TA901", "TA903"} <= set(codes) and "TA906" not in codes  # TA906: once for the run
    assert [f["details"]["kernels"] for f in doc["source_findings"] if f["code"] == "TA906"] == [10]
    assert heavy["launch"]["block_dims"] == [128]  # its __launch_bounds__(128), read from the binary
    spilling = kernels[("_Z8spillingPKfPfi", "sm_80")]
    assert "TA902" in [f["code"] for f in spilling["findings"]]  # ptxas gave the spills, the .o the rest
    assert code == 1 and doc["summary"]["failing_findings"] == doc["summary"]["by_severity"]["error"]


def test_flags_override_config(config):
    code, doc = lint_json(FIXTURES / "ptxas_multi.log", "--config", config, "--arch", "sm_120",
                          "--ignore", "TA9", "--block-size", "64")
    assert {k["arch"] for k in doc["kernels"]} == {"sm_120"}
    assert not any(f["code"].startswith("TA9") for k in doc["kernels"] for f in k["findings"])
    block_reduce = by_key(doc)[("_Z12block_reducePKfPfi", "sm_120")]
    assert block_reduce["launch"]["block_dims"] == [64]


def test_project_config_is_found_in_pyproject(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.tuneadvise]\narch = ['sm_86']\n"
                                             "fail-on = 'warning'\n")
    monkeypatch.chdir(tmp_path)
    code, doc = lint_json(FIXTURES / "ptxas_multi.log")
    assert {k["arch"] for k in doc["kernels"]} == {"sm_86"} or not doc["kernels"]
    assert doc["summary"]["fail_on"] == "warning"


@pytest.mark.parametrize("suffix,text", [
    (".yaml", "arch: [sm_90]\nkernels:\n  - name: tiled_matmul\n    block_size: 16x16\n"),
    (".json", '{"arch": ["sm_90"], "kernels": [{"name": "tiled_matmul", "block_size": "16x16"}]}'),
])
def test_yaml_and_json_configs(tmp_path, suffix, text):
    path = tmp_path / f"lint{suffix}"
    path.write_text(text)
    code, doc = lint_json(FIXTURES / "ptxas_multi.log", path)
    assert by_key(doc)[("_Z12tiled_matmulPKfS0_Pfi", "sm_90")]["launch"]["block_dims"] == [16, 16]


@pytest.mark.parametrize("text,expected", [
    ("[[kernels]]\nname = 'k'\nblock_sise = 128\n", "lint.toml:3: kernels[0].block_sise: unknown key; did you mean 'block_size'?"),
    ("arch = ['sm_99']\n", "lint.toml:1: arch: unknown architecture 'sm_99'"),
    ("[[budgets]]\nkernel = 'k'\n\n[[budgets]]\nmax_registers = 300\n", "lint.toml:5: budgets[1].max_registers:"),
    ("[[kernels]]\nname = 'k'\nblock_size = '64x64'\n", "kernels[0].block_size: 64x64 is 4096 threads"),
    ("fail_on = 'fatal'\n", "lint.toml:1: fail_on: Input should be 'error', 'warning' or 'info'"),
    ("ignore = ['XX1']\n", "ignore: 'XX1' matches no rule code"),
    ("arch = [\n", "lint.toml: not valid TOML"),
])
def test_bad_config_names_file_line_field_and_rule(tmp_path, text, expected):
    path = tmp_path / "lint.toml"
    path.write_text(text)
    result = run("lint", FIXTURES / "ptxas_sm_90.log", "--config", path)
    assert_one_line_error(result)
    assert expected in result.output.replace(str(tmp_path) + "/", ""), result.output


def test_schema_command_publishes_the_config_model(tmp_path):
    schema = json.loads(run("schema").output)
    jsonschema.Draft202012Validator.check_schema(schema)
    import tomllib

    jsonschema.validate(tomllib.loads(CONFIG.replace("min-occupancy", "min_occupancy")), schema)
    assert "block_size" in schema["$defs"]["KernelEntry"]["properties"]
    output_schema = json.loads(run("schema", "lint").output)
    assert output_schema == json.loads(json.dumps(LINT_OUTPUT_SCHEMA))


def test_sarif_validates_and_carries_rule_metadata(config, tmp_path):
    out = tmp_path / "lint.sarif"
    result = run("lint", FIXTURES / "lint_multi.o", KERNELS_CU, "--config", config, "--format", "sarif", "-o", out)
    assert result.exit_code == 1
    sarif = json.loads(out.read_text())
    jsonschema.validate(sarif, SARIF_SCHEMA)
    run_ = sarif["runs"][0]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run_["results"]} == set(rules)
    assert rules["TA901"]["defaultConfiguration"]["level"] == "error"
    heavy = next(r for r in run_["results"] if r["ruleId"] == "TA901")
    location = heavy["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("tests/gpu/lint_kernels.cu")
    assert KERNELS_CU.read_text().splitlines()[location["region"]["startLine"] - 1].lstrip().startswith("__global__")


def test_github_junit_csv_markdown(config):
    args = (FIXTURES / "lint_multi.o", KERNELS_CU, "--config", config)
    github = run("lint", *args, "--format", "github").stdout.splitlines()
    assert github and all(line.startswith(("::error ", "::warning ", "::notice ")) for line in github)
    first = next(line for line in github if "TA901" in line)
    assert "file=" in first and ",line=" in first and "title=TA901 register-budget::" in first
    junit = xml.dom.minidom.parseString(run("lint", *args, "--format", "junit").stdout)
    cases = [c for c in junit.getElementsByTagName("testcase") if c.getAttribute("classname") != "tuneadvise.source"]
    failures = [c for c in cases if c.getElementsByTagName("failure")]
    code, doc = lint_json(*args)
    failing = [k for k in doc["kernels"] if any(f["severity"] == "error" for f in k["findings"])]
    assert len(cases) == 14 and len(failures) == len(failing) >= 2
    [source] = [c for c in junit.getElementsByTagName("testcase") if c.getAttribute("classname") == "tuneadvise.source"]
    assert [f["code"] for f in doc["source_findings"]] == ["TA906"]  # info: passes at --fail-on error
    assert not source.getElementsByTagName("failure") and "TA906 info: " in source.toxml()
    rows = list(csv.DictReader(io.StringIO(run("lint", *args, "--format", "csv").stdout)))
    assert {r["code"] for r in rows} >= {"TA901", "TA903"}  # no spills known: the .o has none, no log given
    assert all(r["arch"] in ("sm_80", "sm_90") for r in rows)
    markdown = run("lint", *args, "--format", "markdown").stdout
    assert markdown.startswith("## tuneadvise lint: failed") and "| heavy(double const\\*, double\\*, int) | sm_80 |" in markdown


def test_statistics(config):
    result = run("lint", FIXTURES / "lint_multi.o", "--config", config, "--statistics", "--format", "json")
    stats = json.loads(result.stdout)["statistics"]
    assert stats[0]["count"] >= stats[-1]["count"] and {"code", "count", "severity", "name"} <= set(stats[0])
    text = run("lint", FIXTURES / "lint_multi.o", "--config", config, "--statistics", "--format", "csv").output
    assert "TA901" in text


def test_source_suppression_on_the_kernel_definition(tmp_path):
    source = tmp_path / "k.cu"
    text = KERNELS_CU.read_text()
    source.write_text(text.replace("__global__ void __launch_bounds__(128)",
                                   "// tuneadvise: ignore[TA302, TA301]\n__global__ void __launch_bounds__(128)"))
    assert "tuneadvise: ignore[TA302" in source.read_text()
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log", source)
    heavy = by_key(doc)[("_Z5heavyPKdPdi", "sm_90")]
    assert not {"TA301", "TA302"} & {f["code"] for f in heavy["findings"]}
    assert heavy["location"]["file"] == str(source)
    code, plain = lint_json(FIXTURES / "ptxas_sm_90.log", KERNELS_CU)
    assert {"TA301", "TA302"} <= {f["code"] for f in by_key(plain)[("_Z5heavyPKdPdi", "sm_90")]["findings"]}


def test_baseline_ratchet(config, tmp_path):
    log = tmp_path / "build.log"
    log.write_text((FIXTURES / "ptxas_multi.log").read_text())
    baseline = tmp_path / "baseline.json"
    args = (log, "--config", config, "--baseline", baseline)
    assert run("lint", *args, "--update-baseline").exit_code == 0
    code, doc = lint_json(*args)
    assert code == 0 and doc["summary"]["baseline"]["new"] == 0 and doc["summary"]["failing_findings"] == 0
    # A kernel that gets worse: its accepted findings count again, and a new one fails.
    text = log.read_text().replace("Used 8 registers, used 4 barriers", "Used 96 registers, used 4 barriers")
    log.write_text(text)
    code, doc = lint_json(*args)
    statuses = {f["baseline"] for k in doc["kernels"] if k["name"] == "producer_consumer" for f in k["findings"]}
    assert code == 1 and "new" in statuses
    assert any("registers 8 -> 96" in " ".join(v) for v in doc["summary"]["baseline"]["regressed_kernels"].values())
    # And one that improves is reported.
    log.write_text((FIXTURES / "ptxas_multi.log").read_text().replace("Used 125 registers", "Used 60 registers"))
    code, doc = lint_json(*args)
    assert code == 0 and any("_Z5heavyPKdPdi@sm_80" in s for s in doc["summary"]["baseline"]["improved"])


def test_bad_baseline_is_bad_input(tmp_path):
    path = tmp_path / "b.json"
    path.write_text("[1, 2]")
    result = run("lint", FIXTURES / "ptxas_sm_90.log", "--baseline", path)
    assert result.exit_code == 2 and "not a tuneadvise baseline" in result.output


def test_diff_flags_regressions(tmp_path):
    new = tmp_path / "new.log"
    new.write_text((FIXTURES / "ptxas_sm_80.log").read_text().replace("Used 30 registers", "Used 72 registers"))
    result = run("diff", FIXTURES / "ptxas_sm_80.log", new, "--format", "json")
    doc = json.loads(result.output)
    assert result.exit_code == 1 and doc["summary"]["regressed"] == 1
    [row] = [r for r in doc["kernels"] if r["status"] == "regressed"]
    assert row["name"] == "_Z12tiled_matmulPKfS0_Pfi" and "registers 30 -> 72" in row["changes"]
    same = run("diff", FIXTURES / "ptxas_sm_80.log", FIXTURES / "cuobjdump_sm_80.txt", "--format", "json",
               "--arch", "sm_80")
    assert same.exit_code == 0 and json.loads(same.output)["summary"]["unchanged"] == 7
    text = run("diff", FIXTURES / "ptxas_sm_80.log", new, "--format", "markdown").output
    assert "| tiled\\_matmul(float const\\*, float const\\*, float\\*, int) | sm_80 | regressed |" in text


def test_stdin_and_malformed_lines(tmp_path):
    text = (FIXTURES / "ptxas_sm_90.log").read_text()
    broken = text.replace("Used 128 registers", "Used many registers", 1)
    code, doc = lint_json("-", input=broken)
    assert code == 2
    assert doc["problems"] == [{"file": "<stdin>", "line": 25, "message": "expected 'Used N registers'"}]
    assert doc["summary"]["kernels"] == 6  # the rest of the log is still linted


@pytest.mark.parametrize("content,message", [
    (b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\x00\xbe\x00" + b"\0" * 40, "not a readable cubin"),
    (b"\x7fELF\x02\x01\x01" + b"\0" * 100, "no CUDA fatbin or cubin"),
    (b"hello\nworld\n", "expected nvcc -Xptxas -v output"),
])
def test_unreadable_inputs_are_bad_input(tmp_path, content, message):
    path = tmp_path / "x.bin"
    path.write_bytes(content)
    code, doc = lint_json(path)
    assert code == 2 and message in doc["problems"][0]["message"]


def test_missing_inputs_and_atomic_output(tmp_path):
    assert run("lint").exit_code == 2
    result = run("lint", tmp_path / "absent.log", "--format", "json", "-o", tmp_path / "out.json")
    assert result.exit_code == 2 and "cannot read" in result.output
    unwritable = tmp_path / "no" / "dir" / "out.sarif"
    result = run("lint", FIXTURES / "ptxas_sm_90.log", "--format", "sarif", "-o", unwritable)
    assert result.exit_code == 2 and not unwritable.exists()
    assert not list(tmp_path.glob("**/*.tmp*"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from((FIXTURES / "ptxas_multi.log").read_text().splitlines(keepends=True)
                                + ["ptxas info    : Used x registers\n", "    1 bytes stack frame, z\n",
                                   "ptxas info    : Compiling entry function 'a' for\n", "\0\xff garbage\n"]),
                max_size=40),
       st.binary(max_size=200))
def test_fuzzed_text_and_binaries_never_crash(tmp_path, lines, blob):
    from tuneadvise.advisor.readers.usage import read_usage

    (tmp_path / "f.log").write_text("".join(lines))
    (tmp_path / "f.bin").write_bytes(blob)
    for name in ("f.log", "f.bin"):
        result = read_usage(tmp_path / name)
        assert all(p.message for p in result.problems)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["sm_50", "sm_80", "sm_90", "sm_120", "sm_99"]),
                          st.integers(0, 10**12), st.integers(0, 10**12), st.integers(0, 10**12),
                          st.integers(0, 10**6)), min_size=1, max_size=6))
def test_fuzzed_figures_through_the_whole_lint_never_crash(tmp_path, kernels):
    # Figures no architecture allows (a corrupt or hand-edited log) are bad input on their line;
    # the other kernels are still linted.
    log = tmp_path / "build.log"
    log.write_text("".join(f"ptxas info    : Compiling entry function '_Z1k{i}v' for '{arch}'\n"
                           f"    {spill} bytes stack frame, {spill} bytes spill stores, 0 bytes spill loads\n"
                           f"ptxas info    : Used {regs} registers, used {barriers} barriers, {smem} bytes smem\n"
                           for i, (arch, regs, barriers, smem, spill) in enumerate(kernels)))
    result = run("lint", log, "--format", "json")
    assert result.exit_code in (0, 1, 2)
    doc = json.loads(result.stdout)
    plausible = [k for k in kernels if k[0] != "sm_99" and k[1] <= 255 and k[2] <= 16 and k[3] <= 1 << 30]
    assert len(doc["kernels"]) == len(plausible)
    assert len(doc["problems"]) == sum(1 for k in kernels if k[0] != "sm_99") - len(plausible)
    assert all(p["line"] and p["file"] == str(log) for p in doc["problems"])
    assert result.exit_code == 2 if doc["problems"] else result.exit_code in (0, 1)


def test_no_config_has_the_config_models_defaults():
    from tuneadvise.advisor.lint.config import LintConfig
    from tuneadvise.advisor.lint.settings import NO_CONFIG

    defaults = LintConfig().model_dump()
    assert set(defaults) == set(NO_CONFIG._fields)
    for name, value in defaults.items():
        stand_in = getattr(NO_CONFIG, name)
        assert (list(stand_in) if isinstance(stand_in, tuple) else stand_in) == value, name
    assert NO_CONFIG.kernel_index(("k",), "sm_90") is None and NO_CONFIG.budget_index(("k",), "sm_90") is None


def test_a_lint_without_a_config_file_never_imports_pydantic(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "build.log"
    log.write_text((FIXTURES / "ptxas_sm_90.log").read_text())
    code = ("import sys; from tuneadvise.cli.main import main; sys.argv = ['tuneadvise', 'lint', 'build.log', "
            "'--format', 'json']\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('pydantic' in sys.modules, file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert json.loads(result.stdout)["kernels"]
    assert result.stderr.strip().splitlines()[-1] == "False"


SHARING_CONFIG = """\
min-occupancy = 0.5

[[kernels]]
name = "a*"
block_size = "32x4"
grid_size = 100
ignore = ["TA302"]

[[kernels]]
name = "b*"
block_size = 1024
cluster_dims = 2

[[budgets]]
kernel = "a*"
max_spill_bytes = 16

[[budgets]]
kernel = "*"
no_spills = true
max_registers = 96
"""


@functools.lru_cache(maxsize=1)
def sharing_config():
    from tuneadvise.advisor.lint.config import load_config

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tuneadvise.toml"
        path.write_text(SHARING_CONFIG)
        return load_config(path)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["sm_52", "sm_80", "sm_90"]),
                          st.sampled_from([32, 40, 96, 128]), st.sampled_from([0, 0, 12288]),
                          st.sampled_from([None, 0, 8, 64]), st.sampled_from([None, 0, 1])),
                min_size=1, max_size=12),
       st.sampled_from([None, "TA5", "TA9,TA3", "TA1,TA2,TA4,TA6,TA7"]))
def test_shared_analyses_equal_each_kernel_linted_alone(kernels, ignore):
    # Lint computes each distinct (architecture, LaunchConfig, config entries) once (run._Linter); a
    # kernel's findings must be what a lint of that kernel alone gives, and its config rules'
    # findings what check_occupancy gives for occupancy(arch, its LaunchConfig).
    from tuneadvise.advisor.engine.occupancy import occupancy
    from tuneadvise.advisor.lint.run import LintOptions, lint_records
    from tuneadvise.advisor.readers.compiler_output import KernelUsage
    from tuneadvise.advisor.readers.demangle import kernel_names
    from tuneadvise.advisor.rules import RuleSelection, check_occupancy
    from tuneadvise.specs.catalog import shipped_catalog

    config = sharing_config()
    options = LintOptions(config=config, selection=RuleSelection.parse(None, ignore))

    def records():
        return [KernelUsage(f"{prefix}{i}", arch, registers=regs, shared_mem=smem, barriers=barriers,
                            stack_frame=spill, spill_stores=spill, spill_loads=None if spill is None else 2 * spill,
                            source="ptxas", line=i + 1, file="build.log")
                for i, (prefix, arch, regs, smem, spill, barriers) in enumerate(kernels)]

    together = {(k.name, k.arch): k for k in lint_records(records(), options).kernels}
    assert len(together) == len(kernels)
    for record in records():
        [alone] = lint_records([record], options).kernels
        kernel = together[(record.name, record.arch)]
        assert kernel.findings == alone.findings and kernel.result == alone.result
        launch = kernel.launch
        assert (launch.registers, launch.static_shared_mem, launch.spill_stores, launch.spill_loads) == (
            record.registers, record.shared_mem, record.spill_stores, record.spill_loads)
        index = config.kernel_index(kernel_names(record.name), record.arch)
        entry = config.kernels[index] if index is not None else None
        resolved = shipped_catalog().resolve(record.arch)
        expected = [f for f in check_occupancy(resolved, occupancy(resolved.arch, launch), options.selection)
                    if not (entry and f.code.startswith(tuple(entry.ignore)))]
        assert [f for f in kernel.findings if not f.code.startswith("TA9")] == expected
        spill_budget = [f for f in kernel.findings if f.code == "TA902"]
        # "a*": max_spill_bytes = 16, the old name of max_spill_stores; "*": no_spills, stores and loads
        limits = {"spill_stores": 16} if record.name.startswith("a") else {"spill_stores": 0, "spill_loads": 0}
        over = [figure for figure, limit in limits.items()
                if getattr(record, figure) is not None and getattr(record, figure) > limit]
        assert [next(iter(f.details)) for f in spill_budget] == (over if options.selection.allows("TA902") else [])


# -- silent greens: inputs that must not pass quietly -----------------------------------

def test_a_listing_that_names_no_architecture_is_unusable_input():
    # A lone cubin's listing prints no "arch =": without exactly one --arch nothing can be linted.
    path = FIXTURES / "cuobjdump_sm_90.txt"
    result = run("lint", path, "--format", "json")
    assert result.exit_code == 2 and json.loads(result.stdout)["summary"]["kernels"] == 0
    [line] = [line for line in result.stderr.splitlines() if "bad input" in line]
    assert str(path) in line and "give exactly one --arch" in line
    assert run("lint", path, "--arch", "sm_90", "--format", "json").exit_code == 0


@pytest.mark.parametrize("text", ["ptxas info    : 0 bytes gmem\nptxas info    : Used 0 registers\n",
                                  "Fatbin elf code:\n================\narch = sm_90\n"])
def test_an_input_with_no_kernel_is_unusable_input(tmp_path, text):
    path = tmp_path / "empty.log"
    path.write_text(text)
    result = run("lint", path, "--format", "json")
    assert result.exit_code == 2 and f"{path}: no kernel in this" in result.stderr


def test_a_kernels_entry_that_matches_nothing_is_reported(tmp_path):
    config = tmp_path / "tuneadvise.toml"
    config.write_text('[[kernels]]\nname = "saxpy"\nblock_size = 128\n\n[[kernels]]\nname = "sxapy*"\nblock_size = 64\n')
    result = run("lint", FIXTURES / "ptxas_sm_90.log", "--config", config, "--format", "json")
    warning = "[[kernels]] entry 2 (name = 'sxapy*') matches no kernel"
    assert warning in result.stderr and json.loads(result.stdout)["summary"]["warnings"][0].startswith(warning)
    assert run("lint", FIXTURES / "ptxas_sm_90.log", "--config", config, "--format", "table").stdout.count(warning) == 1


@pytest.mark.parametrize("glob,matched", [
    ("saxpy<float*", {"_Z5saxpyIfLi4EEvT_PKS0_PS0_i"}),  # docs/lint.md's example
    ("saxpy<*", {"_Z5saxpyIfLi4EEvT_PKS0_PS0_i", "_Z5saxpyIdLi2EEvT_PKS0_PS0_i"}),  # the config schema's
    ("saxpy", {"_Z5saxpyIfLi4EEvT_PKS0_PS0_i", "_Z5saxpyIdLi2EEvT_PKS0_PS0_i"}),
    ("_Z5saxpyIf*", {"_Z5saxpyIfLi4EEvT_PKS0_PS0_i"}),
    ("void saxpy<double, 2>(*", {"_Z5saxpyIdLi2EEvT_PKS0_PS0_i"}),
    ("heavy(double const*, double*, int)", {"_Z5heavyPKdPdi"}),
    ("tiled_*", {"_Z12tiled_matmulPKfS0_Pfi"}),
])
def test_documented_globs_match_the_kernels_they_name(tmp_path, glob, matched):
    config = tmp_path / "tuneadvise.toml"
    config.write_text(f'[[kernels]]\nname = "{glob}"\nblock_size = 64\n')
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log", "--config", config)
    assert {k["name"] for k in doc["kernels"] if k["launch"]["configured_by"] == glob} == matched


def test_the_documented_config_example_matches_what_it_says():
    import re

    example = re.search(r"```toml\n(# tuneadvise.toml.*?)```", (ROOT / "docs" / "lint.md")
                        .read_text(), re.S).group(1)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tuneadvise.toml"
        path.write_text(example)
        result = run("lint", FIXTURES / "ptxas_multi.log", "--config", path, "--format", "json")
    doc = json.loads(result.stdout)
    assert not doc["summary"]["warnings"], doc["summary"]["warnings"]
    saxpy = by_key(doc)[("_Z5saxpyIfLi4EEvT_PKS0_PS0_i", "sm_90")]
    assert saxpy["launch"]["block_dims"] == [512] and saxpy["launch"]["grid_size"] == 1000


def _launches(*args):
    code, doc = lint_json(*args, "--arch", "sm_90")
    return {k["name"]: (k["launch"], k["occupancy"]["active_blocks_per_sm"],
                        sorted(f["code"] for f in k["findings"] if f["code"] != "TA905")) for k in doc["kernels"]}


def test_a_kernel_gets_the_same_launch_whatever_the_input_form():
    # heavy is __launch_bounds__(128): the cubin records it, the log does not, the source says it.
    from_cubin = _launches(FIXTURES / "lint_sm_90.cubin")
    from_log = _launches(FIXTURES / "ptxas_sm_90.log", KERNELS_CU)
    from_listing = _launches(FIXTURES / "cuobjdump_sm_90.txt", KERNELS_CU)
    assert from_cubin["_Z5heavyPKdPdi"][0]["block_dims"] == [128]
    assert from_cubin["_Z5heavyPKdPdi"][0]["max_threads_per_block"] == 128
    for name, (launch, blocks, _) in from_cubin.items():
        assert from_log[name][:2] == (launch, blocks), name
        assert from_listing[name][:2] == (launch, blocks), name
    # The bound is checked, as for the binary: a block over it cannot launch.
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log", KERNELS_CU, "--block-size", "256", "--arch", "sm_90")
    assert not by_key(doc)[("_Z5heavyPKdPdi", "sm_90")]["occupancy"]["launchable"]


def test_a_kernel_is_located_at_its_definition_after_declarations(tmp_path):
    source = tmp_path / "k.cu"
    source.write_text(
        "template <typename T, int U> __global__ void saxpy(T, const T*, T*, int);\n"
        "template <> __global__ void saxpy<float, 4>(float, const float*, float*, int);\n"
        "__global__ void heavy(const double* in, double* out, int n);\n"
        "\n"
        "// tuneadvise: ignore[TA302, TA301]\n"
        "__global__ void __launch_bounds__(128)\n"
        "heavy(const double* in, double* out, int n) {\n"
        "}\n")
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log", source)
    heavy = by_key(doc)[("_Z5heavyPKdPdi", "sm_90")]
    assert heavy["location"] == {"file": str(source), "line": 6}
    assert not {"TA301", "TA302"} & {f["code"] for f in heavy["findings"]}
    assert by_key(doc)[("_Z5saxpyIfLi4EEvT_PKS0_PS0_i", "sm_90")]["location"]["line"] == 1  # declared only


def test_a_config_found_in_a_parent_directory_is_named(tmp_path, monkeypatch):
    (tmp_path / "tuneadvise.toml").write_text("arch = ['sm_90']\n")
    (tmp_path / "build").mkdir()
    monkeypatch.chdir(tmp_path / "build")
    code, doc = lint_json(FIXTURES / "ptxas_multi.log")
    assert doc["summary"]["config"] == str(tmp_path / "tuneadvise.toml")
    text = run("lint", FIXTURES / "ptxas_multi.log", "--format", "table").stdout
    assert f"config: {tmp_path / 'tuneadvise.toml'}" in text


def _documented_configs():
    import re

    import tomllib

    docs = ROOT / "docs"
    for path in sorted(docs.glob("*.md")):
        for block in re.findall(r"```toml\n(.*?)```", path.read_text(), re.S):
            data = tomllib.loads(block)
            if path.name != "lint.md" and "kernels" not in data and "budgets" not in data:
                continue
            yield path.name, data


@pytest.mark.parametrize("name,data", list(_documented_configs()))
def test_documented_configs_validate_against_the_printed_schema(name, data):
    schema = json.loads(run("schema").stdout)
    jsonschema.validate(data, schema)
    jsonschema.validate({"fail-on": "warning", "min-occupancy": 0.5}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"fail-onn": "warning"}, schema)


def test_fail_on_warning_fails_only_on_real_problems():
    code, doc = lint_json(FIXTURES / "ptxas_multi.log", FIXTURES / "lint_multi.o", KERNELS_CU, "--fail-on", "warning")
    warned = {(k["name"], f["code"]) for k in doc["kernels"] for f in k["findings"] if f["severity"] != "info"}
    assert code == 1
    # No disagreement between the log and the binary, and spills only where ptxas reported them.
    assert not {c for _, c in warned} & {"TA905", "TA906"}
    assert {n for n, c in warned if c == "TA501"} == {"_Z8spillingPKfPfi"}


# -- hostile configs: one line naming the key, never a traceback -----------------------

def test_yaml_aliases_are_refused(tmp_path):
    path = tmp_path / "lint.yaml"
    path.write_text('a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
                    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nignore: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n')
    result = run("lint", FIXTURES / "ptxas_sm_90.log", "--config", path)
    assert_one_line_error(result)
    assert "aliases (*name) are not allowed" in result.output


def test_a_structure_in_a_config_is_never_printed_whole(tmp_path):
    path = tmp_path / "lint.json"
    path.write_text(json.dumps({"ignore": [[["TA" * 50] * 100] * 100], "arch": [[1] * 10000]}))
    result = run("lint", FIXTURES / "ptxas_sm_90.log", "--config", path)
    assert_one_line_error(result)
    assert len(result.output) < 400


def test_old_spill_budget_key_means_spill_stores(tmp_path):
    config = tmp_path / "tuneadvise.toml"
    config.write_text('[[budgets]]\nkernel = "spilling"\nmax_spill_bytes = 500\n')
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log", "--config", config)
    spilling = by_key(doc)[("_Z8spillingPKfPfi", "sm_90")]
    assert "TA902" not in {f["code"] for f in spilling["findings"]}  # 496 B of stores; the loads (536) not limited
    config.write_text('[[budgets]]\nkernel = "spilling"\nmax_spill_loads = 500\nmax_stack_frame = 400\n')
    code, doc = lint_json(FIXTURES / "ptxas_sm_90.log", "--config", config)
    messages = [f["message"] for f in by_key(doc)[("_Z8spillingPKfPfi", "sm_90")]["findings"] if f["code"] == "TA902"]
    assert messages == ["536 B of spill loads per thread, budget 500 B (budget 'spilling')",
                        "416 B of stack frame per thread, budget 400 B (budget 'spilling')"]


def test_source_index_reads_in_linear_time():
    import time

    from tuneadvise.advisor.readers.source_index import SourceIndex

    def seconds(n):
        text = "template<> __global__ void k<int>(int*);\n" * n + "__global__ void k(int* p) {\n}\n"
        start = time.process_time()
        index = SourceIndex()
        index.add_file("k.cu", text)
        assert index.definitions["k"].line == n + 1
        return time.process_time() - start

    seconds(500)
    small, large = min(seconds(4000) for _ in range(3)), min(seconds(8000) for _ in range(3))
    assert large / small < 3, (small, large)  # doubling the input about doubles the time


@pytest.mark.parametrize("unit", ["template<> __global__\n", "__global__ void k(\n", "__global__ __launch_bounds__(\n"])
def test_source_index_reads_each_line_for_one_declaration_at_most(monkeypatch, unit):
    """Declarations that never end (no body, no semicolon) stop at the next `__global__`: the text
    read for all of them together is about the file, not MAX_DECLARATION per kernel (a file of
    `template<> __global__` lines would otherwise read 2,000 characters per line: quadratic time)."""
    from tuneadvise.advisor.readers import source_index

    read = []
    original = source_index._declaration
    monkeypatch.setattr(source_index, "_declaration", lambda *a: read.append(original(*a)) or read[-1])
    text = unit * 5000
    source_index.SourceIndex().add_file("k.cu", text)
    assert len(read) >= 2500  # one declaration per line that has a `__global__`
    assert sum(map(len, read)) <= 2 * len(text)


def test_diff_and_the_baseline_name_a_register_change_that_loses_a_block(tmp_path):
    """TA908: 64 -> 72 registers at 256 threads on sm_90 is 4 -> 3 blocks per SM; 64 -> 62 is no loss."""
    def log(name, registers):
        path = tmp_path / name
        path.write_text(f"ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                        f"ptxas info    : Used {registers} registers, used 0 barriers\n")
        return str(path)

    old, worse, better = log("old.log", 64), log("worse.log", 72), log("better.log", 62)
    result = CliRunner().invoke(cli, ["diff", old, worse, "--format", "json"])
    [row] = json.loads(result.stdout)["kernels"]
    assert result.exit_code == 1 and any(c.startswith("TA908 registers per thread 64 -> 72: 4 -> 3 blocks") for c in row["changes"])
    result = CliRunner().invoke(cli, ["diff", old, better, "--format", "json"])
    assert not any(c.startswith("TA908") for c in json.loads(result.stdout)["kernels"][0]["changes"])
    baseline = str(tmp_path / "baseline.json")
    assert CliRunner().invoke(cli, ["lint", old, "--baseline", baseline, "--update-baseline"]).exit_code == 0
    result = CliRunner().invoke(cli, ["lint", worse, "--baseline", baseline, "--select", "TA908", "--format", "json"])
    assert [f["code"] for f in json.loads(result.stdout)["kernels"][0]["findings"]] == ["TA908"]
