"""lint with machine code: spill figures read from the cubins of a Triton cache, held to what
the CUDA driver said about them; the `sass` object in the JSON document (validated against
the schema), the lines named in TA501/TA301/TA907 and SARIF's related locations; --sass and
--no-sass.

tests/fixtures/python_caches/triton_spills was made by tests/gpu/record_triton_spills.py on
an H200 (Triton 3.6, driver 580 / CUDA 13.0): a matmul whose accumulator tile spills and a
copy kernel that does not, with cuFuncGetAttribute's LOCAL_SIZE_BYTES for each (driver.json).
The recording machine's folder names in the files were replaced by neutral ones of the same
length. The older Triton cache (tests/fixtures/python_caches/triton_cache, driver.json beside
it) has three spilling entries among sixteen."""

from __future__ import annotations

import gzip
import json
import os

import jsonschema
import pytest
from click.testing import CliRunner

from tuneadvise.advisor.lint.document import whole_lint_document
from tuneadvise.advisor.lint.formats import sarif_chunks
from tuneadvise.advisor.lint.machine_code import attach
from tuneadvise.advisor.lint.run import LintOptions, lint_records
from tuneadvise.advisor.lint.schema import LINT_OUTPUT_SCHEMA
from tuneadvise.advisor.readers.compiler_output import KernelUsage
from tuneadvise.advisor.readers.sass import read_live_registers, read_sass
from tuneadvise.advisor.toolchain.disassembler import DisassemblerMissing, find_disassembler
from tuneadvise.cli.main import cli

from ..helpers import TESTS
from ..reference.header import Unavailable, required

CACHES = TESTS / "fixtures" / "python_caches"
SPILLS = CACHES / "triton_spills"
SASS_FIXTURES = TESTS / "fixtures" / "sass"


@pytest.fixture(scope="module")
def disassembler():
    return required(_found_disassembler, "NVIDIA's disassembler (the [nvcc] extra)")


def _found_disassembler():
    try:
        return find_disassembler()
    except DisassemblerMissing as exc:
        raise Unavailable(str(exc)) from None


def _lint_json(*arguments):
    result = CliRunner().invoke(cli, ["lint", *arguments, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_triton_cache_spills_come_from_the_machine_code(disassembler):
    driver = json.loads((SPILLS / "driver.json").read_text())["driver"]
    doc = _lint_json(str(SPILLS / "cache"))
    jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
    by_entry = {os.path.relpath(k["location"]["file"], SPILLS / "cache"): k for k in doc["kernels"]}
    assert set(by_entry) == set(driver)
    for entry, figures in driver.items():
        kernel = by_entry[entry]
        assert kernel["spills_from"] == "sass" and kernel["spill_stores"] is not None
        assert kernel["stack_frame"] == figures["local_size_bytes"]  # the cubin's frame is the driver's
        assert (kernel["spill_stores"] > 0) == (figures["local_size_bytes"] > 0), entry
        assert kernel["spill_loads"] <= kernel["spill_stores"] * 2
        if kernel["spill_stores"]:
            assert "TA501" in {f["code"] for f in kernel["findings"]}
            assert kernel["sass"]["spill_sites"] and all(s["line"] for s in kernel["sass"]["spill_sites"])


def test_triton_cache_text_shows_bytes_not_a_dash(disassembler):
    result = CliRunner().invoke(cli, ["lint", str(SPILLS / "cache")])
    assert "- B spill stores" not in result.output
    assert "7772 B spill stores" in " ".join(result.output.split())


def test_older_triton_cache_spills_where_the_driver_has_local_memory(disassembler):
    rows = json.loads((CACHES / "driver.json").read_text())["triton"]
    doc = _lint_json(str(CACHES / "triton_cache"))
    by_entry = {os.path.relpath(k["location"]["file"], CACHES / "triton_cache"): k for k in doc["kernels"]}
    spilling = 0
    for row in rows:
        kernel = by_entry[row["entry"]]
        local = row["driver"]["attributes"]["local_size_bytes"]
        assert kernel["spills_from"] == "sass" and (kernel["spill_stores"] > 0) == (local > 0), row["entry"]
        spilling += local > 0
    assert spilling == 3


def test_no_sass_leaves_spills_unknown_and_sass_requires_nvdisasm(monkeypatch):
    doc = _lint_json(str(SPILLS / "cache"), "--no-sass")
    assert all(k["spill_stores"] is None and k["spills_from"] is None and k["sass"] is None for k in doc["kernels"])
    monkeypatch.setattr("tuneadvise.advisor.toolchain.disassembler.candidates", lambda *_: iter(()))
    result = CliRunner().invoke(cli, ["lint", str(SPILLS / "cache"), "--sass"])
    assert result.exit_code == 3 and "no CUDA disassembler found" in result.output
    assert len(result.output.strip().splitlines()) == 1


def _listing(kind: str) -> list[str]:
    with gzip.open(SASS_FIXTURES / f"nvdisasm_{kind}_lint_kernels_sm_90_r32.txt.gz", "rt") as handle:
        return handle.readlines()


def _spilling_kernel() -> KernelUsage:
    """lint_kernels.cu's spilling kernel as a cubin at -maxrregcount=32 gives it (the recorded listings)."""
    found = {k.name: k for k in read_sass(_listing("g"), read_live_registers(_listing("lrm")))}
    sass = found["_Z8spillingPKfPfi"]
    record = KernelUsage("_Z8spillingPKfPfi", "sm_90", registers=32, shared_mem=0, stack_frame=528, source="cubin",
                         file="lint_kernels.cubin", max_registers=32)
    return attach(record, sass)


def test_findings_name_the_lines_and_sarif_relates_them():
    record = _spilling_kernel()
    assert (record.spill_stores, record.spill_loads, record.spills_from) == (600, 592, "sass")
    report = lint_records([record], LintOptions())
    kernel = whole_lint_document(report, "error")["kernels"][0]
    findings = {f["code"]: f for f in kernel["findings"]}
    spill_lines = findings["TA501"]["details"]["spill_lines"]
    assert sum(p["stores"] for p in spill_lines) == 600 and sum(p["loads"] for p in spill_lines) == 592
    assert "spills at lint_kernels.cu:" in findings["TA501"]["message"]
    sites = {(s["file"], s["line"]) for s in kernel["sass"]["spill_sites"]}
    assert {(p["file"], p["line"]) for p in spill_lines} == sites
    sarif = json.loads("".join(sarif_chunks(document_stream(report))))
    related = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TA501"][0]["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [p["line"] for p in spill_lines]


def document_stream(report):
    from tuneadvise.advisor.lint.document import lint_document

    return lint_document(report, "error")


def _line_comments(name: str) -> set[int]:
    """The source lines nvdisasm's own line table gives the non-spill STL/LDL of kernel `name`."""
    lines, line, inside = set(), None, False
    for text in _listing("g"):
        if text.startswith(".text."):
            inside = text.startswith(f".text.{name}:")
        elif '//## File "' in text:
            line = int(text.rsplit("line ", 1)[1].split()[0].rstrip(","))
        elif inside and ("STL" in text or "LDL" in text) and "SpillRefill" not in text and "/*" in text:
            lines.add(line)
    return lines


def test_local_memory_finding_names_the_array_lines_and_sarif_relates_them():
    # heavy(): a double v[48] indexed at run time; 384 B stack frame and no spill (ptxas's report).
    found = {k.name: k for k in read_sass(_listing("g"), read_live_registers(_listing("lrm")))}
    record = attach(KernelUsage("_Z5heavyPKdPdi", "sm_90", registers=128, shared_mem=0, stack_frame=384,
                                spill_stores=0, spill_loads=0, source="ptxas", file="lint_kernels.log",
                                max_threads=128), found["_Z5heavyPKdPdi"])
    report = lint_records([record], LintOptions())
    finding = {f["code"]: f for f in whole_lint_document(report, "error")["kernels"][0]["findings"]}["TA502"]
    local_lines = finding["details"]["local_lines"]
    assert {p["line"] for p in local_lines} == _line_comments("_Z5heavyPKdPdi") != set()
    assert sum(p["stores"] for p in local_lines) == 768 and sum(p["loads"] for p in local_lines) == 384
    assert f"local memory accessed at lint_kernels.cu:{local_lines[0]['line']}" in finding["message"]
    sarif = json.loads("".join(sarif_chunks(document_stream(report))))
    related = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TA502"][0]["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [p["line"] for p in local_lines]
    assert {r["message"]["text"] for r in related} == {"local memory accessed here"}


def _opcode_count(name: str, opcodes: tuple[str, ...]) -> int:
    """Instructions of kernel `name` in the recorded listing whose opcode, whole or before its
    modifiers, is one of `opcodes`."""
    count, inside = 0, False
    for text in _listing("g"):
        if text.startswith(".text."):
            inside = text.startswith(f".text.{name}:")
        elif inside and "/*" in text and ";" in text:
            words = text.split("*/", 1)[1].split()
            opcode = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words or [""])[0]
            count += opcode in opcodes or opcode.split(".")[0] in opcodes
    return count


def test_verbose_text_shows_the_instruction_summary():
    from tuneadvise.cli.lint_render import render_lint

    found = {k.name: k for k in read_sass(_listing("g"), read_live_registers(_listing("lrm")))}
    record = attach(KernelUsage("_Z5heavyPKdPdi", "sm_90", registers=128, shared_mem=0, stack_frame=384,
                                spill_stores=0, spill_loads=0, source="ptxas", file="lint_kernels.log",
                                max_threads=128), found["_Z5heavyPKdPdi"])
    report = lint_records([record], LintOptions())
    quiet = "".join(render_lint(document_stream(report), terminal=False))
    verbose = " ".join("".join(render_lint(document_stream(report), terminal=False, verbose=True)).split())
    assert "instructions:" not in quiet
    fp64 = _opcode_count("_Z5heavyPKdPdi", ("DADD", "DMUL", "DFMA", "DMNMX"))
    assert fp64 > 0 and f", {fp64} FP64," in verbose
    wide, narrow = _opcode_count("_Z5heavyPKdPdi", ("STL.128",)), _opcode_count("_Z5heavyPKdPdi", ("STL.64",))
    stg = _opcode_count("_Z5heavyPKdPdi", ("STG.E.64",))
    assert wide and narrow and f"stores global {stg} x 8 B; local {narrow} x 8 B + {wide} x 16 B;" in verbose


def test_lint_verbose_option_reaches_the_text(disassembler):
    plain = CliRunner().invoke(cli, ["lint", str(SPILLS / "cache")])
    verbose = CliRunner().invoke(cli, ["lint", str(SPILLS / "cache"), "--verbose"])
    assert "instructions: math" in verbose.output and "instructions: math" not in plain.output
    assert verbose.exit_code == plain.exit_code


def test_no_cache_writes_nothing_under_the_users_cache_folder(disassembler, tmp_path, monkeypatch):
    """--no-cache still kept each cubin's nvdisasm listing under $XDG_CACHE_HOME/tuneadvise."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TUNEADVISE_CACHE_DIR", raising=False)
    cubin = str(TESTS / "fixtures" / "lint" / "lint_sm_90.cubin")
    doc = _lint_json(cubin, "--sass", "--no-cache")
    assert any(k["sass"] for k in doc["kernels"])  # the machine code was read
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*"))
    _lint_json(cubin, "--sass")  # without it, the listing is kept for the next run
    assert any(p.is_file() for p in (tmp_path / "cache").rglob("*"))
