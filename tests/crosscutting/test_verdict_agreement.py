"""One change, one verdict: where lint's findings and `frontier` speak of the same register cap
of the same kernel, built by NVIDIA's compiler, they give it the same outcome. Needs the `[nvcc]`
toolchain (see tests/reference/nvcc.py for when it skips)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli

from ..helpers import ROOT
from ..reference import nvcc
from ..reference.header import required

pytestmark = pytest.mark.reference

REALISTIC = ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu"


@pytest.fixture(scope="module")
def documents():
    """lint's and frontier's JSON of the realistic source on sm_90 at 256 threads."""
    chain = required(nvcc.toolchain, "NVIDIA's compiler (the [nvcc] extra)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CUDA_HOME", str(Path(chain.nvcc).parent.parent))
        patch.setattr("tuneadvise.advisor.toolchain.discovery.wheel_bins", lambda: iter(()))
        runner = CliRunner()
        lint = runner.invoke(cli, ["lint", str(REALISTIC), "-a", "sm_90", "-b", "256", "--format", "json"])
        frontier = runner.invoke(cli, ["frontier", str(REALISTIC), "-a", "sm_90", "-b", "256", "--format", "json"])
    assert lint.exit_code in (0, 1), lint.output
    assert frontier.exit_code == 0, frontier.output
    return json.loads(lint.stdout), json.loads(frontier.stdout)


def findings(lint: dict, code: str) -> dict[str, dict]:
    return {k["name"]: f for k in lint["kernels"] for f in k["findings"] if f["code"] == code}


def test_lint_and_frontier_give_the_best_cap_the_same_verdict(documents):
    """frontier's best cap and lint's TA301 step to the same cap: one outcome."""
    lint, frontier = documents
    suggested = findings(lint, "TA301")
    compared = 0
    for kernel in frontier["kernels"]:
        if kernel.get("best") is None or kernel["name"] not in suggested:
            continue
        finding = suggested[kernel["name"]]
        if finding["details"]["next_steps"][0]["value"] != kernel["points"][kernel["best"]]["max_registers"]:
            continue
        assert finding["details"]["verdict"]["outcome"] == kernel["verdict"]["outcome"], kernel["name"]
        compared += 1
    assert compared >= 2


def test_ta302_and_ta301_give_the_same_step_the_same_verdict(documents):
    """TA302's next step is TA301's first: once the cap is built, both say what the build says
    (TA302 said 'unknown (no build ... decides it: time it)' beside TA301's built likely loss)."""
    lint, _ = documents
    below, limited = findings(lint, "TA302"), findings(lint, "TA301")
    compared = 0
    for name, finding in below.items():
        step = finding["details"].get("next_step")
        if not step or name not in limited or "verdict" not in limited[name]["details"]:
            continue
        assert step["value"] == limited[name]["details"]["next_steps"][0]["value"], name
        assert step["verdict"]["outcome"] == limited[name]["details"]["verdict"]["outcome"], name
        compared += 1
    assert compared >= 2
