"""TA605 (FP64 arithmetic where the FP64 rate is low) on real machine code: the suite's
tests/gpu/lint_kernels.cu (a double saxpy and a double-precision `heavy` kernel beside
float ones) compiled with -lineinfo by NVIDIA's compiler for sm_86 and sm_90, the cubin
linted by tuneadvise. The outside truth is nvdisasm's own JSON listing, read without
tuneadvise: which kernels hold DADD/DMUL/DFMA/DMNMX, how many, and on which source lines.
The FP64:FP32 rates the rule reads are held to the products' datasheet figures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import ROOT
from ..reference import nvcc
from ..reference.header import required

pytestmark = pytest.mark.reference

SOURCE = ROOT / "tests" / "gpu" / "lint_kernels.cu"
FP64_OPCODES = {"DADD", "DMUL", "DFMA", "DMNMX"}


def _fp64_truth(disassembler: str, cubin: Path) -> dict[str, tuple[int, set[int]]]:
    """{kernel: (FP64 arithmetic instructions, their source lines)} from `nvdisasm -json -g`."""
    proc = subprocess.run([disassembler, "-json", "-g", str(cubin)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    truth = {}
    for function in json.loads(proc.stdout)[1]:
        count, lines, line = 0, set(), None
        for instruction in function["sass-instructions"]:
            line = instruction.get("source-line", line)
            if instruction["opcode"].split(".")[0] in FP64_OPCODES:
                count += 1
                lines.add(line)
        truth[function["function-name"]] = (count, lines)
    return truth


@pytest.fixture(scope="module")
def linted(tmp_path_factory):
    """arch -> (nvdisasm's truth, lint's JSON document) for the cubin built for it; arch_cubin its path."""
    chain = required(nvcc.toolchain, "NVIDIA's compiler (the [nvcc] extra)")
    disassembler = required(lambda: nvcc.nvdisasm(chain), "NVIDIA's disassembler (the [nvcc] extra)")
    out = {}
    for arch in ("sm_86", "sm_90", "sm_100", "sm_120"):
        _, cubin = nvcc.compile_cubin(chain, SOURCE, arch, "-lineinfo")
        path = tmp_path_factory.mktemp(arch) / "lint_kernels.cubin"
        path.write_bytes(cubin)
        result = CliRunner().invoke(cli, ["lint", str(path), "--sass", "--format", "json", "--fail-on", "error"])
        assert result.exit_code in (0, 1), result.output
        out[arch] = (_fp64_truth(disassembler, path), json.loads(result.stdout))
        out[f"{arch}_cubin"] = path
    return out


def _ta605(kernel: dict) -> dict | None:
    return next((f for f in kernel["findings"] if f["code"] == "TA605"), None)


def test_fp64_on_a_consumer_part_counts_and_names_nvdisasms_instructions(linted):
    truth, doc = linted["sm_86"]
    assert sum(count > 0 for count, _ in truth.values()) >= 2  # the double saxpy and heavy()
    for kernel in doc["kernels"]:
        count, lines = truth[kernel["name"]]
        finding = _ta605(kernel)
        assert (finding is not None) == (count > 0), kernel["name"]
        if finding:
            details = finding["details"]
            assert details["fp64_instructions"] == count == kernel["sass"]["instructions"]["fp64"]
            assert {p["line"] for p in details["fp64_lines"]} == lines
            assert (details["fp64_results_per_clock"], details["fp32_results_per_clock"]) == (2, 128)
            assert f"{count} FP64 arithmetic instructions at lint_kernels.cu:" in finding["message"]
            assert "1/64 of its FP32 rate" in finding["message"]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_no_fp64_finding_where_fp64_runs_at_half_rate(linted, arch):
    truth, doc = linted[arch]
    assert any(count for count, _ in truth.values())  # the same FP64 code, on a datacenter architecture
    assert not any(_ta605(kernel) for kernel in doc["kernels"])


def test_fp64_on_consumer_blackwell_is_flagged_as_on_ada(linted):
    truth, doc = linted["sm_120"]
    for kernel in doc["kernels"]:
        finding = _ta605(kernel)
        assert (finding is not None) == (truth[kernel["name"]][0] > 0), kernel["name"]
        if finding:
            assert "compute capability 12.0" in finding["message"] and "1/64 of its FP32 rate" in finding["message"]


def test_sarif_relates_the_fp64_lines(linted):
    truth, _ = linted["sm_86"]
    result = CliRunner().invoke(cli, ["lint", str(linted["sm_86_cubin"]), "--sass", "--format", "sarif"])
    results = json.loads(result.stdout)["runs"][0]["results"]
    heavy = [r for r in results if r["ruleId"] == "TA605" and "heavy" in json.dumps(r)]
    assert len(heavy) == 1, [r["message"]["text"] for r in results if r["ruleId"] == "TA605"]
    related = heavy[0]["relatedLocations"]
    assert {r["physicalLocation"]["region"]["startLine"] for r in related} == truth["_Z5heavyPKdPdi"][1]
    assert {r["message"]["text"] for r in related} == {"FP64 arithmetic here"}


def test_fp64_rates_agree_with_the_datasheets():
    """Each architecture's FP64:FP32 results per clock (the Programming Guide's table) against
    the products whose FP64 and FP32 peaks both come from a datasheet or a survey, not derived
    from a rate (the consumer parts' FP64 peaks are derived, so only the 1/2 rates meet one)."""
    catalog, checked = shipped_catalog(), []
    for product in catalog.products.values():
        arch = catalog.archs[product.cc]
        fp64, fp32 = product.values.get("fp64_tflops"), product.values.get("fp32_tflops")
        measured = not any(product.sources.get(k, "").startswith("derived") for k in ("fp64_tflops", "fp32_tflops"))
        if fp64 and fp32 and measured and arch.fp64_results_per_clock:
            checked.append(product.name)
            ratio = arch.fp64_results_per_clock / arch.fp32_results_per_clock
            assert fp64 / fp32 == pytest.approx(ratio, rel=0.05), product.name
    assert len(checked) >= 10, checked  # P100, V100, A100, H100, H200, GH200
    halves = {a.cc for a in catalog.sorted_archs()
              if a.fp64_results_per_clock and 2 * a.fp64_results_per_clock == a.fp32_results_per_clock}
    assert halves - {"7.2"} == {"6.0", "7.0", "8.0", "9.0", "10.0"}  # the datacenter ones TA605's message names
