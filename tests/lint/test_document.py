"""The lint document is built once and streamed; every format is a
serializer of that stream. --format json must be json.dumps of the whole
document byte for byte, every other format must tell the same story, and
untrusted names (anything piped in) must come out valid in every format."""

import csv
import io
import json
import random
import xml.dom.minidom
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.lint import baseline as ratchet
from tuneadvise.advisor.lint.config import load_config
from tuneadvise.advisor.lint.document import lint_document, summary, whole_lint_document
from tuneadvise.advisor.lint.formats import SERIALIZERS, serialize
from tuneadvise.advisor.lint.run import LintOptions, lint_paths, lint_records
from tuneadvise.advisor.lint.schema import LINT_OUTPUT_SCHEMA
from tuneadvise.advisor.readers.compiler_output import KernelUsage
from tuneadvise.advisor.rules import SEVERITIES, SEVERITY_RANK, RuleSelection

from ..helpers import TESTS

FIXTURES = TESTS / "fixtures" / "lint"
KERNELS_CU = TESTS / "gpu" / "lint_kernels.cu"

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
    return json.dumps(whole_lint_document(report, fail_on, comparison, version), separators=(",", ":")) + "\n"


def written(report, fail_on, comparison, version):
    return serialize("json", lint_document(report, fail_on, comparison, version))


CASES = {
    "ptxas log, no config": lambda tmp: ([FIXTURES / "ptxas_sm_90.log"], None),
    "binaries, logs and sources with a config": lambda tmp: (
        [FIXTURES / "lint_multi.o", FIXTURES / "ptxas_multi.log", KERNELS_CU], CONFIG),
    "generated log with repeats and odd names": lambda tmp: ([generated_log(tmp / "build.log", 300, 5)], CONFIG),
    "every cubin": lambda tmp: (sorted(FIXTURES.glob("lint_sm_*.cubin")), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fail_on", ["error", "info"])
def test_streamed_json_is_the_document_byte_for_byte(tmp_path, case, fail_on):
    paths, config_text = CASES[case](tmp_path)
    options = LintOptions()
    if config_text:
        (tmp_path / "tuneadvise.toml").write_text(config_text)
        options = LintOptions(config=load_config(tmp_path / "tuneadvise.toml"))
    report = lint_paths(paths, options)
    assert report.kernels
    text = written(report, fail_on, None, "1.2.3")
    assert text == dumped(report, fail_on, None, "1.2.3")
    jsonschema.validate(json.loads(text), LINT_OUTPUT_SCHEMA)
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


def junit_failures(text: str) -> tuple[int, int, int]:
    """(the failures attribute, the test cases failing or in error, the findings inside failures)."""
    tree = xml.dom.minidom.parseString(text)
    [suite] = tree.getElementsByTagName("testsuite")
    cases = [c for c in tree.getElementsByTagName("testcase")
             if c.getElementsByTagName("failure") or c.getElementsByTagName("error")]
    findings = sum(len(failure.firstChild.data.splitlines()) for failure in tree.getElementsByTagName("failure"))
    return int(suite.getAttribute("failures")), len(cases), findings


@pytest.mark.parametrize("fail_on", SEVERITIES)
def test_junit_failures_are_the_findings_the_summary_counts_failing(tmp_path, fail_on):
    """JUnit reads which findings fail from the document: a kernel's and a source finding alike
    (TA906, said once per run, is one), new or worse against a baseline, never one it accepted."""
    (tmp_path / "tuneadvise.toml").write_text(CONFIG)
    config = load_config(tmp_path / "tuneadvise.toml")
    mixed = lint_paths([FIXTURES / "lint_multi.o", FIXTURES / "ptxas_multi.log", KERNELS_CU],
                       LintOptions(config=config))
    assert any(f.severity == "info" for f in mixed.source_findings)
    recorded = ratchet.build(lint_paths([generated_log(tmp_path / "build.log", 200, 9)], LintOptions(config=config)))
    after = lint_paths([generated_log(tmp_path / "after.log", 200, 10)], LintOptions(config=config))
    for report, comparison in ((mixed, None), (after, ratchet.compare(after, recorded))):
        doc = lint_document(report, fail_on, comparison)
        attribute, cases, findings = junit_failures(serialize("junit", doc))
        assert findings == doc.summary["failing_findings"] and attribute == cases
    assert {"new", "baselined"} <= set(comparison.status.values())


def test_kernels_sharing_an_analysis_keep_their_own_fields(tmp_path):
    # Two kernels with the same figures share a result; their entries still differ in name and line.
    log = tmp_path / "build.log"
    log.write_text("".join(f"ptxas info    : Compiling entry function '_Z1{c}v' for 'sm_90'\n"
                           "ptxas info    : Used 64 registers, used 1 barriers\n" for c in "ab"))
    report = lint_paths([log], LintOptions())
    assert report.kernels[0].result is report.kernels[1].result
    doc = json.loads(written(report, "error", None, ""))
    assert [k["name"] for k in doc["kernels"]] == ["_Z1av", "_Z1bv"]
    assert [k["sources"][0]["line"] for k in doc["kernels"]] == [2, 4]


def test_every_format_tells_the_documents_story(tmp_path):
    (tmp_path / "tuneadvise.toml").write_text(CONFIG)
    report = lint_paths([FIXTURES / "lint_multi.o", FIXTURES / "ptxas_multi.log", KERNELS_CU],
                        LintOptions(config=load_config(tmp_path / "tuneadvise.toml")))
    doc = lint_document(report, "warning")
    whole = doc.whole()
    findings = [(k["name"], k["arch"], f["code"]) for k in whole["kernels"] for f in k["findings"]]
    sarif = json.loads(serialize("sarif", doc))
    jsonschema.validate(sarif, SARIF_SCHEMA)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(findings) + len(whole["source_findings"])
    assert sarif["runs"][0]["properties"]["summary"] == whole["summary"]
    spilling = next(r for r in results if "spilling" in r["message"]["text"])
    assert {"spill_stores", "spill_loads", "stack_frame"} <= set(spilling["properties"])
    rows = list(csv.DictReader(io.StringIO(serialize("csv", doc))))
    assert len(rows) == len(findings) + sum(1 for k in whole["kernels"] if not k["findings"])
    junit = xml.dom.minidom.parseString(serialize("junit", doc))
    [suite] = junit.getElementsByTagName("testsuite")
    failed = [c for c in junit.getElementsByTagName("testcase") if c.getElementsByTagName("failure")]
    assert int(suite.getAttribute("failures")) == len(failed) == whole["summary"]["failing_kernels"]
    github = serialize("github", doc).splitlines()
    assert whole["summary"]["warnings"] == ["[[kernels]] entry 2 (name = 'k_1*') matches no kernel: check the glob "
                                            "against the mangled, demangled or bare names"]
    assert len(github) == len(findings) + len(whole["source_findings"]) + 1
    markdown = serialize("markdown", doc)
    assert markdown.count("\n- **TA") == len(findings) + len(whole["source_findings"])


SARIF_SCHEMA = json.loads((TESTS / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
_NAMES = st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(
    ["\udcff", "\udc80", "\x00", "\x1b", "|", "*", "_", "<", ">", "`", "=", "+", "-", "@", "\n", "\r", ",", ":",
     "%", "&", "]", "[", "\\", '"']), min_size=1, max_size=40)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
def test_untrusted_names_come_out_valid_in_every_format(names):
    records = [KernelUsage(name, "sm_90", registers=64, shared_mem=0, spill_stores=8, spill_loads=8,
                           source="ptxas", line=i + 1, file=name) for i, name in enumerate(names)]
    doc = lint_document(lint_records(records, LintOptions()), "info")
    kernels = len(names)
    for fmt in SERIALIZERS:
        text = serialize(fmt, doc)
        text.encode("utf-8")  # no lone surrogate: writable as UTF-8
        if fmt in ("json", "sarif"):
            json.loads(text)
        elif fmt == "junit":
            tree = xml.dom.minidom.parseString(text.encode("utf-8"))
            files = {f["details"].get("file") or "" for f in doc.tail["source_findings"]}  # a case per source file
            assert len(tree.getElementsByTagName("testcase")) == kernels + len(files)
        elif fmt == "csv":
            rows = list(csv.reader(io.StringIO(text)))
            assert all(len(row) == len(rows[0]) for row in rows) and len(rows) > kernels
            assert not any(cell[:1] in ("=", "+", "-", "@") for row in rows[1:] for cell in (row[0], row[1]))
        elif fmt == "markdown":
            table = [line for line in text.splitlines() if line.startswith("| ") and "sm_90" in line]
            assert len(table) == kernels
            for line in table:  # every | inside a name is escaped: the row keeps its 11 columns
                assert line.replace("\\\\", "").replace("\\|", "").count("|") == 12
        elif fmt == "github":
            lines = text.split("\n")[:-1]
            assert len(lines) == sum(1 for k in doc.kernels() for _ in k["findings"]) + len(doc.tail["source_findings"])
            assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
