"""Machine formats of a lint document (advisor/lint/document.py): SARIF 2.1.0,
GitHub workflow commands, JUnit XML, CSV and a Markdown job summary. Each is a
pure function of the document, so all formats tell the same story."""

from __future__ import annotations

import csv
import hashlib
import io
import os
from xml.sax.saxutils import escape, quoteattr

from tuneadvise.advisor.rules import SEVERITY_RANK, registry

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
CSV_COLUMNS = ("kernel", "demangled", "arch", "registers", "shared_mem", "spill_bytes", "block_size", "occupancy",
               "active_blocks_per_sm", "limiters", "code", "severity", "baseline", "message", "file", "line")


def _relative(path: str | None) -> str | None:
    if not path:
        return None
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        relative = path
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


def findings_with_places(doc: dict):
    """(finding, kernel or None, file, line) for every finding in the document."""
    for kernel in doc["kernels"]:
        place = kernel["location"]
        for finding in kernel["findings"]:
            yield finding, kernel, place["file"], place["line"]
    for finding in doc["source_findings"]:
        yield finding, None, finding["details"].get("file"), finding["details"].get("line")


def _headline(finding: dict, kernel: dict | None) -> str:
    if kernel is None:
        return finding["message"]
    return f"{kernel['demangled']} [{kernel['arch']}]: {finding['message']}"


# -- SARIF ----------------------------------------------------------------------

def sarif(doc: dict) -> dict:
    rules = registry()
    used = sorted({f["code"] for f, *_ in findings_with_places(doc)})
    index = {code: i for i, code in enumerate(used)}
    results = []
    for finding, kernel, file, line in findings_with_places(doc):
        result = {
            "ruleId": finding["code"],
            "ruleIndex": index[finding["code"]],
            "level": SARIF_LEVEL[finding["severity"]],
            "message": {"text": _headline(finding, kernel)},
            "partialFingerprints": {"tuneadvise/v1": hashlib.sha256(
                f"{kernel['name'] if kernel else file}|{kernel['arch'] if kernel else ''}|{finding['code']}"
                .encode()).hexdigest()[:32]},
        }
        uri = _relative(file)
        if uri:
            location = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
            if line:
                location["physicalLocation"]["region"] = {"startLine": int(line)}
            if kernel is not None:
                location["logicalLocations"] = [{"name": kernel["name"], "fullyQualifiedName": kernel["demangled"],
                                                 "kind": "function"}]
            result["locations"] = [location]
        properties = {k: v for k, v in (("arch", finding.get("arch")), ("baseline", finding.get("baseline"))) if v}
        if properties:
            result["properties"] = properties
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tuneadvise",
                "version": doc["tool"]["version"] or "0",
                "informationUri": "https://github.com/tuneadvise/tuneadvise",
                "rules": [_sarif_rule(rules[code]) for code in used],
            }},
            "results": results,
            "properties": {"summary": doc["summary"]},
        }],
    }


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
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github(doc: dict) -> str:
    lines = []
    for finding, kernel, file, line in findings_with_places(doc):
        props = []
        uri = _relative(file)
        if uri:
            props.append(f"file={_gh_escape(uri, True)}")
            if line:
                props.append(f"line={int(line)}")
        props.append(f"title={_gh_escape(finding['code'] + ' ' + registry()[finding['code']].name, True)}")
        lines.append(f"::{GITHUB_COMMAND[finding['severity']]} {','.join(props)}::"
                     f"{_gh_escape(_headline(finding, kernel))}")
    for problem in doc["problems"]:
        props = [f"file={_gh_escape(_relative(problem['file']) or '', True)}"]
        if problem["line"]:
            props.append(f"line={problem['line']}")
        lines.append(f"::error {','.join(props)}::{_gh_escape('bad input: ' + problem['message'])}")
    return "".join(line + "\n" for line in lines)


# -- JUnit XML ------------------------------------------------------------------

def junit(doc: dict) -> str:
    """One test case per kernel and architecture; findings at or above the
    failure threshold (and not baselined) are failures, the rest go to system-out."""
    threshold = SEVERITY_RANK[doc["summary"]["fail_on"]]
    cases, failures = [], 0
    for kernel in doc["kernels"]:
        failing = [f for f in kernel["findings"]
                   if SEVERITY_RANK[f["severity"]] >= threshold and f.get("baseline", "new") != "baselined"]
        others = [f for f in kernel["findings"] if f not in failing]
        body = ""
        if failing:
            failures += 1
            text = "\n".join(f"{f['code']} {f['severity']}: {f['message']}" for f in failing)
            body += (f"<failure type={quoteattr(failing[0]['code'])} "
                     f"message={quoteattr(failing[0]['message'])}>{escape(text)}</failure>")
        if others:
            body += "<system-out>" + escape("\n".join(f"{f['code']} {f['severity']}: {f['message']}"
                                                       for f in others)) + "</system-out>"
        name = quoteattr(f"{kernel['demangled']} [{kernel['arch']}]")
        cases.append(f'  <testcase classname={quoteattr("tuneadvise." + kernel["arch"])} name={name}'
                     f' file={quoteattr(_relative(kernel["location"]["file"]) or "")}>{body}</testcase>')
    for problem in doc["problems"]:
        failures += 1
        where = f"{problem['file']}:{problem['line']}" if problem["line"] else problem["file"]
        cases.append(f'  <testcase classname="tuneadvise.input" name={quoteattr(where)}>'
                     f'<error type="bad-input" message={quoteattr(problem["message"])}/></testcase>')
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="tuneadvise lint" tests="{len(cases)}" failures="{failures}">\n'
            f'<testsuite name="tuneadvise lint" tests="{len(cases)}" failures="{failures}" errors="0">\n'
            + "\n".join(cases) + "\n</testsuite>\n</testsuites>\n")


# -- CSV ----------------------------------------------------------------------------

def csv_text(doc: dict) -> str:
    """One row per finding, and one row with an empty code for a kernel without findings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for kernel in doc["kernels"]:
        occ = kernel["occupancy"]
        base = [kernel["name"], kernel["demangled"], kernel["arch"], kernel["registers"], kernel["shared_mem"],
                kernel["spill_bytes"] if kernel["spill_bytes"] is not None else "",
                "x".join(map(str, kernel["launch"]["block_dims"])), occ["occupancy"], occ["active_blocks_per_sm"],
                "+".join(occ["limiters"])]
        place = [kernel["location"]["file"] or "", kernel["location"]["line"] or ""]
        for finding in kernel["findings"] or [None]:
            if finding is None:
                writer.writerow(base + ["", "", "", ""] + place)
            else:
                writer.writerow(base + [finding["code"], finding["severity"], finding.get("baseline", ""),
                                        finding["message"]] + place)
    return buffer.getvalue()


# -- Markdown job summary -----------------------------------------------------

def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(doc: dict) -> str:
    summary = doc["summary"]
    verdict = "passed" if summary["passed"] else "failed"
    counts = ", ".join(f"{n} {s}" for s, n in summary["by_severity"].items() if n) or "no findings"
    lines = [f"## tuneadvise lint: {verdict}", "",
             f"{summary['kernels']} kernel(s) x architecture, {counts}; failing at `{summary['fail_on']}`: "
             f"{summary['failing_findings']}.", ""]
    if doc["kernels"]:
        lines += ["| kernel | arch | regs | smem (B) | spills (B) | block | occupancy | limiter | findings |",
                  "| --- | --- | ---: | ---: | ---: | --- | ---: | --- | --- |"]
        for kernel in doc["kernels"]:
            occ = kernel["occupancy"]
            codes = " ".join(f"`{f['code']}`" for f in kernel["findings"]) or "-"
            lines.append(f"| {_cell(kernel['demangled'])} | {kernel['arch']} | {kernel['registers']} | "
                         f"{kernel['shared_mem']} | {'-' if kernel['spill_bytes'] is None else kernel['spill_bytes']} | "
                         f"{'x'.join(map(str, kernel['launch']['block_dims']))} | {occ['occupancy']:.1%} | "
                         f"{_cell('+'.join(occ['limiters']) or '-')} | {codes} |")
    details = [(f, k) for f, k, *_ in findings_with_places(doc)]
    if details:
        lines += ["", "<details><summary>Findings</summary>", ""]
        lines += [f"- **{f['code']}** ({f['severity']}{', ' + f['baseline'] if f.get('baseline') else ''}): "
                  f"{_cell(_headline(f, k))}" for f, k in details]
        lines += ["", "</details>"]
    if doc["problems"]:
        lines += ["", "### Bad input", ""] + [f"- `{p['file']}{':' + str(p['line']) if p['line'] else ''}`: "
                                               f"{_cell(p['message'])}" for p in doc["problems"]]
    if "baseline" in summary and summary["baseline"]["improved"]:
        lines += ["", "### Improved since the baseline", ""] + [f"- {_cell(s)}" for s in summary["baseline"]["improved"]]
    return "\n".join(lines) + "\n"


FORMATTERS = {"sarif": sarif, "github": github, "junit": junit, "csv": csv_text, "markdown": markdown}
