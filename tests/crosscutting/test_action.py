"""The repository's GitHub Action (action.yml): its shell steps, run with bash as GitHub runs
them (`bash -e -o pipefail`), against recorded build output; its SARIF is valid."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import ROOT, TESTS

yaml = pytest.importorskip("yaml")
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = {step.get("name", step.get("uses")): step for step in ACTION["runs"]["steps"]}
SARIF_SCHEMA = json.loads((TESTS / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def run_step(name: str, inputs: dict, folder: Path, outputs: dict | None = None,
             bin_first: Path | None = None) -> tuple[int, dict]:
    """Run one `shell: bash` step with its env expressions filled from `inputs` (and earlier
    steps' `outputs`; `github.action_path` is this checkout); its exit code and what it wrote to
    GITHUB_OUTPUT. `bin_first`: a folder searched before anything else for commands."""
    step = STEPS[name]
    assert step["shell"] == "bash"
    values = {f"inputs.{key}": str(spec.get("default", "")) for key, spec in ACTION["inputs"].items()}
    values.update({f"inputs.{key}": value for key, value in inputs.items()})
    values.update({f"steps.lint.outputs.{key}": value for key, value in (outputs or {}).items()})
    values["github.action_path"] = str(ROOT)
    env = {key: EXPRESSION.sub(lambda m: values[m.group(1)], value) for key, value in step.get("env", {}).items()}
    assert "${{" not in step["run"], "inputs reach the script through env, never pasted into it"
    output_file = folder / "github_output"
    output_file.write_text("")
    path = os.pathsep.join([*([str(bin_first)] if bin_first else []), str(Path(sys.executable).parent),
                            os.environ["PATH"]])  # tuneadvise of this venv
    done = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]], cwd=folder,
                          env={**os.environ, **env, "PATH": path, "GITHUB_OUTPUT": str(output_file)},
                          capture_output=True, text=True, timeout=300)
    written = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
    return done.returncode, written


@pytest.fixture
def build(tmp_path):
    logs = TESTS / "fixtures" / "lint"
    (tmp_path / "build").mkdir()
    for name in ("ptxas_multi.log", "ptxas_multi_next.log"):
        (tmp_path / "build" / name).write_bytes((logs / name).read_bytes())
    return tmp_path


def _installed(tmp_path, inputs: dict) -> list[str]:
    """What the install step hands pip: `python` is a stub that records its arguments."""
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "python").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$PIP_ARGS"\n')
    (stub / "python").chmod(0o755)
    os.environ["PIP_ARGS"] = str(tmp_path / "args")
    try:
        code, _ = run_step("Install tuneadvise", inputs, tmp_path, bin_first=stub)
    finally:
        del os.environ["PIP_ARGS"]
    assert code == 0
    return (tmp_path / "args").read_text().splitlines()


def test_the_install_step_installs_the_actions_own_checkout_with_the_nvcc_extra(tmp_path):
    """The default `tuneadvise[nvcc]` is on no package index: the Action installs itself."""
    args = _installed(tmp_path, {})
    assert args[:3] == ["-m", "pip", "install"] and args[-1] == f"{ROOT}[nvcc]"
    assert (ROOT / "pyproject.toml").is_file()


def test_a_version_installs_that_release(tmp_path):
    assert _installed(tmp_path, {"version": "0.1.0"})[-1] == "tuneadvise[nvcc]==0.1.0"


def test_the_lint_step_writes_valid_sarif_and_its_exit_code(build):
    jsonschema = pytest.importorskip("jsonschema")
    code, outputs = run_step("Lint", {"paths": "build/ptxas_multi.log", "arch": "sm_80,sm_90"}, build)
    assert code == 0 and outputs["exit-code"] == "0"  # no error-level finding in this build
    sarif = json.loads((build / "tuneadvise.sarif").read_text())
    jsonschema.validate(sarif, SARIF_SCHEMA)
    kernels = [r for r in sarif["runs"][0]["results"] if "logicalLocations" in r.get("locations", [{}])[0]]
    assert {r["properties"]["arch"] for r in kernels} == {"sm_80", "sm_90"}

    code, outputs = run_step("Lint", {"paths": "build/ptxas_multi.log", "fail-on": "warning",
                                      "sarif-file": "warnings.sarif"}, build)
    assert code == 0 and outputs["exit-code"] == "1"  # the step records it; the last step fails the job
    jsonschema.validate(json.loads((build / "warnings.sarif").read_text()), SARIF_SCHEMA)
    assert run_step("Fail on findings", {}, build, outputs)[0] == 1


def test_a_regression_against_the_baseline_is_reported_in_the_sarif(build):
    subprocess.run([str(Path(sys.executable).parent / "tuneadvise"), "lint", "build/ptxas_multi.log", "--baseline",
                    "lint-baseline.json", "--update-baseline"], cwd=build, check=True, capture_output=True)
    code, outputs = run_step("Lint", {"paths": "build/ptxas_multi_next.log", "baseline": "lint-baseline.json"},
                             build)
    results = json.loads((build / "tuneadvise.sarif").read_text())["runs"][0]["results"]
    regressed = [r for r in results if r["ruleId"] == "TA908"]
    assert regressed and all(r["properties"]["baseline"] == "new" for r in regressed)
    assert "tiled_matmul" in regressed[0]["message"]["text"]


def test_the_upload_step_uploads_the_sarif_file_the_lint_step_wrote():
    upload = STEPS["Upload SARIF"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert upload["if"].startswith("always()")
    assert STEPS["Lint"]["env"]["TUNEADVISE_SARIF"] == "${{ inputs.sarif-file }}"


def test_inputs_are_not_shell_code(build):
    """A path input holding shell syntax is a (missing) file name, not a command."""
    code, outputs = run_step("Lint", {"paths": "build/ptxas_multi.log $(touch pwned) ;touch pwned2"}, build)
    assert not (build / "pwned").exists() and not (build / "pwned2").exists()
    assert outputs["exit-code"] == "2"  # the odd names are inputs that cannot be read


def test_the_documented_workflow_gives_the_action_inputs_it_has():
    text = (ROOT / "docs" / "lint.md").read_text()
    workflow = re.search(r"<!-- file: \.github/workflows/cuda-lint\.yml -->\n```yaml\n(.*?)\n```", text, re.S).group(1)
    steps = yaml.safe_load(workflow)["jobs"]["lint"]["steps"]
    (used,) = [step for step in steps if step.get("uses", "").startswith("tuneadvise/tuneadvise@")]
    assert set(used["with"]) <= set(ACTION["inputs"])
    assert {name for name, spec in ACTION["inputs"].items() if spec.get("required")} <= set(used["with"])
    documented = re.search(r"Its inputs: (.*?); its output", text, re.S).group(1)
    defaults = {"tuneadvise.sarif", "true"}  # the defaults named beside the inputs
    assert set(re.findall(r"`([\w.-]+)`", documented)) - defaults == set(ACTION["inputs"])


def test_a_multi_line_input_and_a_glob_lint_every_path(build):
    """`paths: |` linted only its first line, and `build/*.log` exited 2."""
    (build / "kernels").mkdir()
    logs = {"build/alpha.log": "alpha", "build/beta.log": "beta", "kernels/gamma.log": "gamma"}
    for path, kernel in logs.items():  # one kernel each, at 100 registers: a finding in every file
        (build / path).write_text(f"ptxas info    : Compiling entry function '{kernel}' for 'sm_90'\n"
                                  f"ptxas info    : Function properties for {kernel}\n"
                                  "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                                  "ptxas info    : Used 100 registers, used 0 barriers\n")
    (build / "build" / "ptxas_multi.log").unlink()
    (build / "build" / "ptxas_multi_next.log").unlink()
    paths = "build/*.log\n  kernels/gamma.log\n\n"
    code, outputs = run_step("Lint", {"paths": paths, "sarif-file": "all.sarif"}, build)
    assert outputs["exit-code"] in ("0", "1"), outputs
    results = json.loads((build / "all.sarif").read_text())["runs"][0]["results"]
    linted = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert linted == set(logs)


def test_a_glob_that_matches_nothing_is_named_not_dropped(build):
    code, outputs = run_step("Lint", {"paths": "build/ptxas_multi.log\nmissing/*.log"}, build)
    assert outputs["exit-code"] == "2"


@pytest.mark.parametrize("config", [False, True])
def test_every_sarif_result_has_a_location(build, config):
    """Code scanning drops a result without one: TA906's points at the config, or the input."""
    inputs = {"paths": "build/ptxas_multi.log"}
    if config:
        (build / "tuneadvise.toml").write_text('arch = ["sm_90"]\n')
        inputs["config"] = "tuneadvise.toml"
    run_step("Lint", inputs, build)
    results = json.loads((build / "tuneadvise.sarif").read_text())["runs"][0]["results"]
    assert results and all(r.get("locations") for r in results)
    (ta906,) = [r for r in results if r["ruleId"] == "TA906"]
    where = ta906["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert where == ("tuneadvise.toml" if config else "build/ptxas_multi.log")
