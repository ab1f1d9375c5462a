"""Scan CUDA sources (.cu/.cuh) for code the tuning guides warn about:
legacy warp intrinsics and implicit warp-synchronous code on targets with
Independent Thread Scheduling (7.0+), and __mul24 on 2.0+.

Comments are ignored; `// tuneadvise: ignore[CODE]` on a line suppresses CODE there.
"""

from __future__ import annotations

import re

from tuneadvise.advisor.rules import Finding, RuleSelection, registry

_LEGACY = re.compile(r"\b(__shfl|__shfl_up|__shfl_down|__shfl_xor|__any|__all|__ballot)\s*\(")
_VOLATILE = re.compile(r"\bvolatile\b[^;=]*(\*|\b__shared__\b)")
_MUL24 = re.compile(r"\b(__u?mul24)\s*\(")
SUPPRESS = re.compile(r"tuneadvise:\s*ignore\[([A-Z0-9, ]+)\]")


def strip_comments(text: str) -> list[tuple[str, str]]:
    """(code, comment) per line, with /* */ blocks blanked (line numbers kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    lines = []
    for line in text.splitlines():
        code, _, comment = line.partition("//")
        lines.append((code, comment))
    return lines


def scan_source(text: str, path: str, target_major: int, selection: RuleSelection | None = None) -> list[Finding]:
    selection = selection or RuleSelection()
    rules = registry()
    lines = strip_comments(text)
    has_syncwarp = "__syncwarp" in text
    findings = []

    def add(code, number, message):
        rule = rules[code]
        suppressed = SUPPRESS.search(lines[number - 1][1])
        if selection.allows(code) and not (suppressed and code in suppressed.group(1).replace(" ", "").split(",")):
            findings.append(Finding(code, rule.severity, message, f"sm_{target_major}x",
                                    {"file": path, "line": number}, rule.source))

    for number, (code, _) in enumerate(lines, 1):
        if target_major >= 7:
            for match in _LEGACY.finditer(code):
                add("TA801", number, f"{path}:{number}: {match.group(1)} assumes lock-step warps; "
                                     f"use {match.group(1)}_sync with a lane mask")
            if _VOLATILE.search(code) and not has_syncwarp:
                add("TA802", number, f"{path}:{number}: volatile warp-synchronous access without __syncwarp() "
                                     "in this file; add __syncwarp() between steps or use __shfl_*_sync")
        if target_major >= 2:
            for match in _MUL24.finditer(code):
                add("TA803", number, f"{path}:{number}: {match.group(1)} is emulated from 2.0 on; use *")
    return findings
