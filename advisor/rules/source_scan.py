"""Scan CUDA sources (.cu/.cuh) for code the tuning guides warn about:
legacy warp intrinsics and implicit warp-synchronous code on targets with
Independent Thread Scheduling (7.0+), and __mul24 on 2.0+.

Comments and string and character literals are ignored (code quoted in a
message is not code); `// tuneadvise: ignore[CODE]` on a line suppresses CODE
there. Every step is linear in the size of the file: one pass over its tokens,
then patterns without nested repetition over each line.
"""

from __future__ import annotations

import re

from tuneadvise.advisor.rules import Finding, RuleSelection, registry

_LEGACY = re.compile(r"\b(__shfl|__shfl_up|__shfl_down|__shfl_xor|__any|__all|__ballot)\s*\(")
_VOLATILE = re.compile(r"\bvolatile\b")
_SHARED = re.compile(r"\b__shared__\b")
_STATEMENT_END = re.compile(r"[;=]")
# What starts a comment or a literal: the only places the code/text split can change.
_OPENERS = re.compile(r'//|/\*|R"([^()\\\s"]{0,16})\(|"|\'')
_STRING_BODY = re.compile(r'(?:[^"\\\n]|\\.)*"?')
_CHAR_BODY = re.compile(r"(?:[^'\\\n]|\\.)*'?")
_MUL24 = re.compile(r"\b(__u?mul24)\s*\(")
SUPPRESS = re.compile(r"tuneadvise:\s*ignore\[([A-Z0-9, ]+)\]")


def _blank(text: str) -> str:
    """Spaces for every character but line breaks, so line and column numbers stay."""
    return re.sub(r"[^\n]", " ", text)


def strip_comments(text: str) -> list[tuple[str, str]]:
    """(code, comment) per line: comments, string and character literals (raw strings included)
    blanked in the code, line numbers kept; a line's `//` comment kept beside it for suppressions."""
    code, comments = [], {}
    position, line = 0, 1
    while True:
        match = _OPENERS.search(text, position)
        if match is None:
            code.append(text[position:])
            break
        start, opener = match.start(), match.group(0)
        code.append(text[position:start])
        line += text.count("\n", position, start)
        if opener == "//":
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            comments[line] = text[start + 2:end]
        elif opener == "/*":
            end = text.find("*/", start + 2)
            end = len(text) if end < 0 else end + 2
        elif opener == "'" and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            end = start + 1  # a digit separator (1'000'000), not a character literal
            code.append("'")
            position = end
            continue
        elif opener.startswith("R"):
            close = ")" + match.group(1) + '"'
            end = text.find(close, match.end())
            end = len(text) if end < 0 else end + len(close)
        else:
            body = _STRING_BODY if opener == '"' else _CHAR_BODY
            end = body.match(text, start + 1).end()
        code.append(_blank(text[start:end]))
        line += text.count("\n", start, end)
        position = end
    # Lines end at "\n" only (as the line count above), so a stray "\r" or form feed keeps numbers aligned.
    lines = "".join(code).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [(source, comments.get(number, "")) for number, source in enumerate(lines, 1)]


def _volatile_pointer_or_shared(code: str) -> bool:
    """A `volatile` declaration of a pointer or of __shared__ memory on this line: per statement
    (split at ; and =), so a line of many `volatile`s is read once."""
    if "volatile" not in code:
        return False
    for statement in _STATEMENT_END.split(code):
        found = _VOLATILE.search(statement)
        if found and ("*" in statement[found.end():] or _SHARED.search(statement)):
            return True
    return False


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
            if not has_syncwarp and _volatile_pointer_or_shared(code):
                add("TA802", number, f"{path}:{number}: volatile warp-synchronous access without __syncwarp() "
                                     "in this file; add __syncwarp() between steps or use __shfl_*_sync")
        if target_major >= 2:
            for match in _MUL24.finditer(code):
                add("TA803", number, f"{path}:{number}: {match.group(1)} is emulated from 2.0 on; use *")
    return findings
