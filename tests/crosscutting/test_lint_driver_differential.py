"""Lint is held to the CUDA driver on real build output: for every kernel of
two code bases compiled on an H100 (tests/gpu/lint_kernels.cu and the
project's own probe kernels), the registers and static shared memory lint
reads from the ptxas log and the cubin, and the occupancy it computes for the
launch tests/fixtures/lint/driver_lint.toml configures (and for a sweep of
block sizes and dynamic shared memory), equal what the driver reported
(tests/gpu/record_lint_driver.py recorded it)."""

import json

import pytest

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.lint.config import load_config
from tuneadvise.advisor.lint.run import LintOptions, lint_paths

from ..helpers import TESTS

FIXTURES = TESTS / "fixtures" / "lint"
RECORDED = json.loads((FIXTURES / "lint_driver.json").read_text())
# The cubin the driver loaded, under the name it has here (lint_kernels_sm_90.cubin is lint_sm_90.cubin).
CUBIN = {"lint_kernels_sm_90.cubin": "lint_sm_90.cubin"}
LOG = {"lint_kernels.cu": "lint_kernels_sm_90.log", "probes/kernels": "probe_kernels_sm_90.log"}


def linted():
    options = LintOptions(config=load_config(FIXTURES / "driver_lint.toml"))
    kernels = {}
    for row in RECORDED["kernels"]:
        cubin = FIXTURES / CUBIN.get(row["cubin"], row["cubin"])
        report = lint_paths([cubin, FIXTURES / LOG[row["code_base"]]], options)
        assert not report.problems
        kernels[(row["cubin"], row["name"])] = {k.name: k for k in report.kernels}[row["name"]]
    return kernels


LINTED = linted()


def test_both_code_bases_are_covered():
    bases = {row["code_base"] for row in RECORDED["kernels"]}
    assert bases == {"lint_kernels.cu", "probes/kernels"} and len(RECORDED["kernels"]) >= 20


@pytest.mark.parametrize("row", RECORDED["kernels"], ids=lambda r: f"{r['cubin']}:{r['name']}")
def test_lint_reads_what_the_driver_reports(row):
    kernel = LINTED[(row["cubin"], row["name"])]
    attributes = row["attributes"]
    assert kernel.usage.registers == attributes["num_regs"]
    assert kernel.usage.shared_mem == attributes["shared_size_bytes"]
    assert kernel.usage.stack_frame == attributes["local_size_bytes"]
    assert {r.source for r in kernel.evidence} == {"cubin", "ptxas"}
    assert "TA905" not in {f.code for f in kernel.findings}  # log and binary agree


def configured_mismatches(kernels):
    """Kernels whose configured launch lint gives a different occupancy from the driver's.

    `configured` holds the launch the driver was asked about (the block and dynamic shared
    memory driver_lint.toml gives each kernel) and the driver's answer; lint must decide the
    same launch from the same config and compute the driver's answer for it."""
    mismatches = []
    for row in RECORDED["kernels"]:
        kernel = kernels[(row["cubin"], row["name"])]
        configured = row["configured"]
        launch = (kernel.result.kernel.block_size, kernel.result.kernel.dynamic_shared_mem)
        if launch != (configured["block"], configured["dynamic"]) or \
                kernel.result.active_blocks_per_sm != configured["driver_blocks"]:
            mismatches.append((row["name"], launch, kernel.result.active_blocks_per_sm, configured))
    return mismatches


def sweep_mismatches(kernels):
    """(kernel, block, dynamic, driver, engine) wherever today's engine differs from the driver."""
    mismatches, checked = [], 0
    for row in RECORDED["kernels"]:
        kernel = kernels[(row["cubin"], row["name"])]
        for block, dynamic, driver_blocks in row["sweep"]:
            variant = kernel.result.kernel._replace(block_size=block, dynamic_shared_mem=dynamic)
            result = occupancy(kernel.result.arch, variant)
            checked += 1
            if result.active_blocks_per_sm != driver_blocks:
                mismatches.append((row["name"], block, dynamic, driver_blocks, result.active_blocks_per_sm))
    return mismatches, checked


def test_configured_launch_occupancy_equals_the_driver():
    assert configured_mismatches(LINTED) == []


def test_sweep_occupancy_equals_the_driver():
    mismatches, checked = sweep_mismatches(LINTED)
    assert checked > 3000 and mismatches == []


def test_driver_comparisons_detect_an_engine_off_by_one(monkeypatch):
    """The comparisons above can fail: with the engine one block short, lint (run afresh) and
    the sweep disagree with the driver wherever the driver's answer is above 0."""
    from ..probes.test_probes import engine_one_block_fewer

    engine_one_block_fewer(monkeypatch)
    kernels = linted()
    assert len(configured_mismatches(kernels)) == sum(row["configured"]["driver_blocks"] > 0 for row in RECORDED["kernels"])
    mismatches, checked = sweep_mismatches(kernels)
    assert len(mismatches) == sum(blocks > 0 for row in RECORDED["kernels"] for *_, blocks in row["sweep"])
