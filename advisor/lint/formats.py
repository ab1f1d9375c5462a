"""Serializers of the lint document stream (advisor/lint/document.py): JSON,
SARIF 2.1.0, GitHub workflow commands, JUnit XML, CSV and a Markdown job
summary. Each takes a LintDocument and yields text chunks as it reads the
kernels, so all formats tell the same story and none holds a large report
whole.

Names and messages are untrusted text (a kernel name comes from whatever was
piped in): every serializer makes them valid for its format: text that is
not UTF-8 becomes U+FFFD, XML gets no character XML 1.0 forbids, Markdown
and GitHub commands escape their syntax, and a CSV cell never starts a formula.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Iterator
from xml.sax.saxutils import escape, quoteattr

from ..rules import registry
from ..text import COMPACT, hex_escaped, markdown_text, one_line, utf8_text, xml_text
from .paths import shown_path

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
CSV_COLUMNS = ("kernel", "demangled", "arch", "registers", "shared_mem", "spill_stores", "spill_loads",
               "stack_frame", "block_size", "occupancy", "active_blocks_per_sm", "limiters", "code", "severity",
               "baseline", "message", "file", "line")

def csv_cell(value):
    """A CSV cell no spreadsheet runs as a formula (OWASP's CSV injection advice: a leading ')."""
    if isinstance(value, str):
        # A lone CR would end the row for a reader: the writer quotes only the terminator's LF.
        value = utf8_text(value).replace("\r\n", "\n").replace("\r", "\n")
        value = one_line(value, keep="\n\t")  # ESC, BEL...: escaped, as the other formats write them
        if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
            return "'" + value
    return value


def _relative(path: str | None, cache: dict) -> str | None:
    """The path relative to the working directory (as annotations want it), computed once per path."""
    if not path:
        return None
    relative = cache.get(path)
    if relative is None:
        relative = cache[path] = utf8_text(shown_path(path).replace(os.sep, "/"))
    return relative


def findings_with_places(doc) -> Iterator[tuple[dict, dict | None, str | None, int | None]]:
    """(finding, kernel or None, file, line) for every finding in the document."""
    for kernel in doc.kernels():
        place = kernel["location"]
        for finding in kernel["findings"]:
            yield finding, kernel, place["file"], place["line"]
    for finding in doc.tail["source_findings"]:
        yield finding, None, finding["details"].get("file"), finding["details"].get("line")


def _headline(finding: dict, kernel: dict | None) -> str:
    if kernel is None:
        return finding["message"]
    return f"{kernel['demangled']} [{kernel['arch']}]: {finding['message']}"


# -- JSON -------------------------------------------------------------------------

def json_chunks(doc) -> Iterator[str]:
    """json_line(doc.whole()) and a newline, written a row at a time (ASCII: json's escapes): a lint
    document's kernels, or a diff's rows."""
    yield COMPACT.encode(doc.head)[:-1] + ',"kernels":['
    separator = ""
    for kernel in doc.kernels():
        yield separator + COMPACT.encode(kernel)
        separator = ","
    yield "]," + COMPACT.encode(doc.tail)[1:] + "\n"


def diff_markdown_chunks(doc) -> Iterator[str]:
    """`diff --format markdown`: a table of the changed kernels, then the counts."""
    yield "| kernel | arch | status | changes |\n| --- | --- | --- | --- |\n"
    for row in doc.listed():
        yield (f"| {markdown_text(row['demangled'])} | {row['arch']} | {row['status']} | "
               f"{markdown_text('; '.join(row['changes']) or '-')} |\n")
    yield doc.summary_text() + "\n"


DIFF_SERIALIZERS = {"json": json_chunks, "markdown": diff_markdown_chunks}


# -- SARIF ----------------------------------------------------------------------

def _indented(value, depth: int) -> str:
    """json.dumps(value, indent=1) as it reads `depth` levels deep in an indent=1 document."""
    return json.dumps(value, indent=1).replace("\n", "\n" + " " * depth)


def sarif_chunks(doc) -> Iterator[str]:
    """SARIF 2.1.0: indented, one result per line (results are most of a large log)."""
    rules = registry()
    used = list(doc.summary["by_code"])  # every code in the document, sorted
    index = {code: i for i, code in enumerate(used)}
    driver = {"name": "tuneadvise", "version": doc.head["tool"]["version"] or "0",
              "informationUri": "https://github.com/tuneadvise/tuneadvise",
              "rules": [_sarif_rule(rules[code]) for code in used]}
    yield (f'{{\n "$schema": "{SARIF_SCHEMA}",\n "version": "2.1.0",\n "runs": [\n  {{\n'
           f'   "tool": {_indented({"driver": driver}, 3)},\n   "results": [')
    separator, relative = "\n    ", {}
    for finding, kernel, file, line in findings_with_places(doc):
        yield separator + COMPACT.encode(_sarif_result(finding, kernel, file, line, index, relative))
        separator = ",\n    "
    yield f'\n   ],\n   "properties": {_indented({"summary": doc.summary}, 3)}\n  }}\n ]\n}}\n'


def _sarif_result(finding, kernel, file, line, index, relative) -> dict:
    identity = f"{kernel['name'] if kernel else file}|{kernel['arch'] if kernel else ''}|{finding['code']}"
    if kernel is not None and kernel.get("variant"):  # a cache's autotune variants are distinct results
        identity += f"|{kernel['variant']}"
    result = {
        "ruleId": finding["code"],
        "ruleIndex": index[finding["code"]],
        "level": SARIF_LEVEL[finding["severity"]],
        "message": {"text": utf8_text(_headline(finding, kernel))},
        "partialFingerprints": {"tuneadvise/v1": hashlib.sha256(
            identity.encode("utf-8", "surrogatepass")).hexdigest()[:32]},
    }
    uri = _relative(file, relative)
    if uri:
        location = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
        if line:
            location["physicalLocation"]["region"] = _region(finding, line)
        if kernel is not None:
            location["logicalLocations"] = [{"name": utf8_text(kernel["name"]),
                                             "fullyQualifiedName": utf8_text(kernel["demangled"]),
                                             "kind": "function"}]
        result["locations"] = [location]
    related = _related_locations(finding, relative)
    if related:
        result["relatedLocations"] = related
    properties = {k: v for k, v in (("arch", finding.get("arch")), ("baseline", finding.get("baseline"))) if v}
    if kernel is not None:  # the figures behind a kernel's finding, each spill figure by its own name
        properties.update((k, kernel[k]) for k in ("registers", "shared_mem", "spill_stores", "spill_loads",
                                                   "stack_frame") if kernel[k] is not None)
    if properties:
        result["properties"] = properties
    if uri and line and "replacement" in finding["details"]:
        result["fixes"] = [_sarif_fix(finding, uri, line)]
    return result


def _related_locations(finding, relative) -> list[dict]:
    """The source lines a finding's machine code names (its rule's `related`: TA501's spills, TA502's
    local-memory accesses, TA301/TA907's register peaks, TA605's FP64 arithmetic), so an editor jumps to them."""
    key, text = registry()[finding["code"]].related or (None, "")
    related = []
    for number, place in enumerate(finding["details"].get(key) or () if key else ()):
        uri = _relative(place["file"], relative) if place.get("file") else None
        if uri and place.get("line"):
            related.append({"id": number, "physicalLocation": {"artifactLocation": {"uri": uri},
                                                               "region": {"startLine": int(place["line"])}},
                            "message": {"text": text}})
    return related


def _region(finding: dict, line) -> dict:
    """A result's region: its line, and the columns a source finding names (endColumn is one past the end)."""
    region = {"startLine": int(line)}
    details = finding["details"]
    if "column" in details:
        region.update(startColumn=int(details["column"]), endColumn=int(details["end_column"]))
    return region


def _sarif_fix(finding: dict, uri: str, line) -> dict:
    """The suggested fix of a source finding: its `replacement` text in place of its columns."""
    details = finding["details"]
    replacement = utf8_text(details["replacement"])
    title = details.get("fix") or registry()[finding["code"]].fix_title.format(replacement=replacement)
    fix = {"description": {"text": utf8_text(title)},
           "artifactChanges": [{"artifactLocation": {"uri": uri},
                                "replacements": [{"deletedRegion": _region(finding, line),
                                                  "insertedContent": {"text": replacement}}]}]}
    if "fix_applicability" in details:  # safe or unsafe, as the rule marks it (ruff's fix applicability)
        fix["properties"] = {"applicability": details["fix_applicability"]}
    return fix


def _sarif_rule(rule) -> dict:
    return {
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.explanation},
        "help": {"text": f"{rule.explanation}\n\ntuneadvise explain {rule.code}",
                 "markdown": f"**{rule.summary}**\n\n{rule.explanation}\n\n`tuneadvise explain {rule.code}`"},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"tags": ["cuda", "performance", rule.kind]},
    }


# -- GitHub workflow commands -------------------------------------------------

def _gh_escape(text: str, property_value: bool = False) -> str:
    """A workflow command's value: its own escapes for %, CR and LF, and other control and
    line-breaking characters written as \\xNN, so one annotation stays one line."""
    text = utf8_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    text = hex_escaped(text)
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github_chunks(doc) -> Iterator[str]:
    titles = {code: _gh_escape(f"{code} {rule.name}", True) for code, rule in registry().items()}
    relative = {}
    for finding, kernel, file, line in findings_with_places(doc):
        props = []
        uri = _relative(file, relative)
        if uri:
            props.append(f"file={_gh_escape(uri, True)}")
            if line:
                props.append(f"line={int(line)}")
                if "column" in finding["details"]:
                    props.append(f"col={int(finding['details']['column'])}")
                    props.append(f"endColumn={int(finding['details']['end_column']) - 1}")  # inclusive here
        props.append(f"title={titles[finding['code']]}")
        yield (f"::{GITHUB_COMMAND[finding['severity']]} {','.join(props)}::"
               f"{_gh_escape(_headline(finding, kernel))}\n")
    for problem in doc.tail["problems"]:
        props = [f"file={_gh_escape(_relative(problem['file'], relative) or '', True)}"]
        if problem["line"]:
            props.append(f"line={problem['line']}")
        yield f"::error {','.join(props)}::{_gh_escape('bad input: ' + problem['message'])}\n"
    for warning in doc.summary["warnings"]:
        yield f"::warning ::{_gh_escape(warning)}\n"


# -- JUnit XML ------------------------------------------------------------------

def _attribute(text) -> str:
    return quoteattr(xml_text(str(text)))


def junit_chunks(doc) -> Iterator[str]:
    """One test case per kernel and architecture, and one per source file with findings not of a
    kernel; the findings that fail the run (the document says which: doc.failing) are failures,
    the rest go to system-out."""
    summary = doc.summary
    by_file: dict = {}
    for finding in doc.tail["source_findings"]:
        by_file.setdefault(finding["details"].get("file") or "", []).append(finding)
    failing_files = sum(1 for findings in by_file.values() if any(map(doc.failing, findings)))
    tests = summary["kernels"] + len(by_file) + summary["problems"]
    failures = summary["failing_kernels"] + failing_files + summary["problems"]
    yield ('<?xml version="1.0" encoding="UTF-8"?>\n'
           f'<testsuites name="tuneadvise lint" tests="{tests}" failures="{failures}">\n'
           f'<testsuite name="tuneadvise lint" tests="{tests}" failures="{failures}" errors="0">\n')
    relative = {}
    for kernel in doc.kernels():
        name = _attribute(f"{kernel['demangled']} [{kernel['arch']}]")
        yield (f'  <testcase classname={_attribute("tuneadvise." + kernel["arch"])} name={name}'
               f' file={_attribute(_relative(kernel["location"]["file"], relative) or "")}>'
               f'{_junit_findings(doc, kernel["findings"])}</testcase>\n')
    for file, findings in by_file.items():
        shown = _attribute(_relative(file, relative) or "")
        yield (f'  <testcase classname="tuneadvise.source" name={shown} file={shown}>'
               f'{_junit_findings(doc, findings)}</testcase>\n')
    for problem in doc.tail["problems"]:
        where = f"{problem['file']}:{problem['line']}" if problem["line"] else problem["file"]
        yield (f'  <testcase classname="tuneadvise.input" name={_attribute(where)}>'
               f'<error type="bad-input" message={_attribute(problem["message"])}/></testcase>\n')
    yield "</testsuite>\n</testsuites>\n"


def _junit_findings(doc, findings: list[dict]) -> str:
    """A test case's body: its failing findings as one failure, the others as system-out."""
    failing = [f for f in findings if doc.failing(f)]
    others = [f for f in findings if not doc.failing(f)]
    body = ""
    if failing:
        text = "\n".join(f"{f['code']} {f['severity']}: {f['message']}" for f in failing)
        body += (f"<failure type={_attribute(failing[0]['code'])} "
                 f"message={_attribute(failing[0]['message'])}>{escape(xml_text(text))}</failure>")
    if others:
        body += "<system-out>" + escape(xml_text("\n".join(f"{f['code']} {f['severity']}: {f['message']}"
                                                          for f in others))) + "</system-out>"
    return body


# -- CSV ----------------------------------------------------------------------------

def csv_chunks(doc) -> Iterator[str]:
    """One row per finding, and one row with an empty code for a kernel without findings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for kernel in doc.kernels():
        occ = kernel["occupancy"]
        base = [csv_cell(kernel["name"]), csv_cell(kernel["demangled"]), kernel["arch"], kernel["registers"],
                kernel["shared_mem"]] + ["" if kernel[k] is None else kernel[k]
                                         for k in ("spill_stores", "spill_loads", "stack_frame")] + [
            "x".join(map(str, kernel["launch"]["block_dims"])), occ["occupancy"], occ["active_blocks_per_sm"],
            "+".join(occ["limiters"])]
        place = [csv_cell(kernel["location"]["file"] or ""), kernel["location"]["line"] or ""]
        for finding in kernel["findings"] or [None]:
            if finding is None:
                writer.writerow(base + ["", "", "", ""] + place)
            else:
                writer.writerow(base + [finding["code"], finding["severity"], finding.get("baseline", ""),
                                        csv_cell(finding["message"])] + place)
        if buffer.tell() > 1 << 16:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


# -- Markdown job summary -----------------------------------------------------

def _figure(value) -> str:
    return "-" if value is None else str(value)


def _markdown_finding(f: dict, where: str) -> str:
    return (f"- **{f['code']}** ({f['severity']}{', ' + f['baseline'] if f.get('baseline') else ''}): "
            f"{markdown_text(where + f['message'])}\n")


def markdown_chunks(doc) -> Iterator[str]:
    summary = doc.summary
    verdict = "passed" if summary["passed"] else "failed"
    counts = ", ".join(f"{n} {s}" for s, n in summary["by_severity"].items() if n) or "no findings"
    yield (f"## tuneadvise lint: {verdict}\n\n"
           f"{summary['kernels']} kernel(s) x architecture, {counts}; failing at `{summary['fail_on']}`: "
           f"{summary['failing_findings']}.\n")
    if summary["config"]:
        yield f"\nConfig: {markdown_text(summary['config'])}\n"
    details = []  # each finding's line, listed after the table (text only: a large report's dicts are gone)
    if summary["kernels"]:
        yield ("\n| kernel | arch | regs | smem (B) | spill stores (B) | spill loads (B) | stack (B) | block | "
               "occupancy | limiter | findings |\n"
               "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |\n")
        for kernel in doc.kernels():
            occ = kernel["occupancy"]
            codes = " ".join(f"`{f['code']}`" for f in kernel["findings"]) or "-"
            details += [_markdown_finding(f, f"{kernel['demangled']} [{kernel['arch']}]: ") for f in kernel["findings"]]
            yield (f"| {markdown_text(kernel['demangled'])} | {kernel['arch']} | {kernel['registers']} | "
                   f"{kernel['shared_mem']} | {_figure(kernel['spill_stores'])} | {_figure(kernel['spill_loads'])} | "
                   f"{_figure(kernel['stack_frame'])} | {'x'.join(map(str, kernel['launch']['block_dims']))} | "
                   f"{occ['occupancy']:.1%} | {markdown_text('+'.join(occ['limiters']) or '-')} | {codes} |\n")
    details += [_markdown_finding(f, "") for f in doc.tail["source_findings"]]
    if details:
        yield "\n<details><summary>Findings</summary>\n\n"
        yield from details
        yield "\n</details>\n"
    if doc.tail["problems"]:
        yield "\n### Bad input\n\n" + "".join(
            f"- {markdown_text(p['file'] + (':' + str(p['line']) if p['line'] else ''))}: {markdown_text(p['message'])}\n"
            for p in doc.tail["problems"])
    if summary["warnings"]:
        yield "\n### Warnings\n\n" + "".join(f"- {markdown_text(w)}\n" for w in summary["warnings"])
    if "baseline" in summary and summary["baseline"]["improved"]:
        yield "\n### Improved since the baseline\n\n" + "".join(
            f"- {markdown_text(s)}\n" for s in summary["baseline"]["improved"])


SERIALIZERS = {"json": json_chunks, "sarif": sarif_chunks, "github": github_chunks, "junit": junit_chunks,
               "csv": csv_chunks, "markdown": markdown_chunks}


def serialize(fmt: str, doc) -> str:
    """The whole output of one format as a string (small reports, tests)."""
    return "".join(SERIALIZERS[fmt](doc))
