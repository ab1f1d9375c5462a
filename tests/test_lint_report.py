"""lint --format json is written by document_json, which encodes each shared
part once; it must equal json.dumps of the document byte for byte, so the
document (docs/lint.md, the JSON Schema, every other format) stays the one
source of truth."""

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from tuneadvise.advisor.lint import baseline as ratchet
from tuneadvise.advisor.lint.config import load_config
from tuneadvise.advisor.lint.document import document, document_json, summary
from tuneadvise.advisor.lint.run import LintOptions, lint_paths
from tuneadvise.advisor.rules import SEVERITIES, SEVERITY_RANK, RuleSelection

FIXTURES = Path(__file__).parent / "fixtures" / "lint"
KERNELS_CU = Path(__file__).parent / "gpu" / "lint_kernels.cu"

CONFIG = """\
arch = ["sm_80", "sm_90", "sm_120"]
min-occupancy = 0.4

[[kernels]]
name = "tiled_matmul"
block_size = "16x16"
dynamic_shared_mem = "4K"
carveout = 50

[[kernels]]
name = "k_1*"
block_size = 1024
opt_in = true
dynamic_shared_mem = "70K"
grid_size = 300
ignore = ["TA906"]

[[budgets]]
kernel = "spilling"
no_spills = true

[[budgets]]
kernel = "*"
max_registers = 64
max_shared_mem = 8192
"""


def generated_log(path: Path, kernels: int, seed: int) -> Path:
    """A ptxas log whose kernels repeat figures often, as real code bases do,
    with names that need escaping in JSON."""
    rng = random.Random(seed)
    lines = []
    for arch in ("sm_80", "sm_90", "sm_120"):
        for i in range(kernels):
            name = rng.choice([f"_Z3k_{i}PKfPfi", f"_Z6kernelILi{i}EEvPf", f"weird\\\"name_{i}_é"])
            smem = rng.choice([0, 0, 1024, 8448, 49152])
            spill = rng.choice([0, 0, 0, 16])
            lines += [f"ptxas info    : Compiling entry function '{name}' for '{arch}'\n",
                      f"ptxas info    : Function properties for {name}\n",
                      f"    {spill} bytes stack frame, {spill} bytes spill stores, {spill} bytes spill loads\n",
                      f"ptxas info    : Used {rng.choice([16, 32, 40, 64, 128, 202, 255])} registers, "
                      f"used {rng.randint(0, 2)} barriers" + (f", {smem} bytes smem" if smem else "") + "\n"]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def dumped(report, fail_on, comparison, version):
    return json.dumps(document(report, fail_on, comparison, version), separators=(",", ":"))


def written(report, fail_on, comparison, version):
    return document_json(report, summary(report, fail_on, comparison), comparison, version)


CASES = {
    "ptxas log, no config": lambda tmp: ([FIXTURES / "ptxas_sm_90.log"], None),
    "binaries, logs and sources with a config": lambda tmp: (
        [FIXTURES / "lint_multi.o", FIXTURES / "ptxas_multi.log", KERNELS_CU], CONFIG),
    "generated log with repeats and odd names": lambda tmp: ([generated_log(tmp / "build.log", 300, 5)], CONFIG),
    "every cubin": lambda tmp: (sorted(FIXTURES.glob("lint_sm_*.cubin")), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fail_on", ["error", "info"])
def test_document_json_is_the_document_byte_for_byte(tmp_path, case, fail_on):
    paths, config_text = CASES[case](tmp_path)
    options = LintOptions()
    if config_text:
        (tmp_path / "tuneadvise.toml").write_text(config_text)
        options = LintOptions(config=load_config(tmp_path / "tuneadvise.toml"))
    report = lint_paths(paths, options)
    assert report.kernels
    assert written(report, fail_on, None, "1.2.3") == dumped(report, fail_on, None, "1.2.3")
    # summary counts each shared findings list once, weighted by its kernels: the same as one by one
    findings = [finding for _, finding in report.all_findings()]
    totals = summary(report, fail_on)
    assert totals["by_code"] == dict(sorted(Counter(f.code for f in findings).items()))
    assert totals["by_severity"] == {s: sum(f.severity == s for f in findings) for s in SEVERITIES}
    assert totals["failing_findings"] == sum(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] for f in findings)


def test_with_a_baseline_comparison_and_a_selection(tmp_path):
    (tmp_path / "tuneadvise.toml").write_text(CONFIG)
    config = load_config(tmp_path / "tuneadvise.toml")
    log = generated_log(tmp_path / "build.log", 200, 9)
    before = lint_paths([log], LintOptions(config=config))
    recorded = ratchet.build(before)
    after_log = generated_log(tmp_path / "after.log", 200, 10)  # other figures: new, worse and improved kernels
    for selection in (RuleSelection(), RuleSelection(("TA3", "TA9"), ("TA303",))):
        report = lint_paths([after_log], LintOptions(config=config, selection=selection))
        comparison = ratchet.compare(report, recorded)
        assert {"new", "baselined"} <= set(comparison.status.values())
        assert written(report, "warning", comparison, "") == dumped(report, "warning", comparison, "")


def test_shared_parts_are_encoded_once_but_kernels_keep_their_own_fields(tmp_path):
    # Two kernels with the same figures share a result; their entries still differ in name and line.
    log = tmp_path / "build.log"
    log.write_text("".join(f"ptxas info    : Compiling entry function '_Z1{c}v' for 'sm_90'\n"
                           "ptxas info    : Used 64 registers, used 1 barriers\n" for c in "ab"))
    report = lint_paths([log], LintOptions())
    assert report.kernels[0].result is report.kernels[1].result
    doc = json.loads(written(report, "error", None, ""))
    assert [k["name"] for k in doc["kernels"]] == ["_Z1av", "_Z1bv"]
    assert [k["sources"][0]["line"] for k in doc["kernels"]] == [2, 4]
