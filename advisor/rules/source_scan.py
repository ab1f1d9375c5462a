"""Scan CUDA sources (.cu/.cuh) with the source rules (TA8xx, in
families/ta8_source.py): legacy warp intrinsics and implicit warp-synchronous
code on targets with Independent Thread Scheduling (7.0+), and __mul24 on 2.0+.

Comments and string and character literals are ignored (code quoted in a
message is not code); `// tuneadvise: ignore[CODE]` on a line suppresses CODE
there. Every step is linear in the size of the file: one pass over its tokens,
then patterns without nested repetition over each line.
"""

from __future__ import annotations

import re

from . import Finding, RuleSelection, SourceLine, source_rules

# What starts a comment or a literal: the only places the code/text split can change.
_OPENERS = re.compile(r'//|/\*|R"([^()\\\s"]{0,16})\(|"|\'')
_STRING_BODY = re.compile(r'(?:[^"\\\n]|\\.)*"?')
_CHAR_BODY = re.compile(r"(?:[^'\\\n]|\\.)*'?")
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


def scan_source(text: str, path: str, target_major: int, selection: RuleSelection | None = None) -> list[Finding]:
    """The selected source rules' findings (TA8xx, in families/ta8_source.py), line by line, with
    `path:line: ` before each message and file and line in its details."""
    return scan_lines(strip_comments(text), "__syncwarp" in text, path, target_major, selection)


def scan_lines(lines: list[tuple[str, str]], has_syncwarp: bool, path: str, target_major: int,
               selection: RuleSelection | None = None) -> list[Finding]:
    """scan_source over a file's lines as strip_comments gave them (a caller that also indexes
    the file tokenizes it once); `has_syncwarp`: the file's text names __syncwarp."""
    rules = source_rules(selection)
    if not rules:
        return []
    arch = f"sm_{target_major}x"
    findings = []
    for number, (code, comment) in enumerate(lines, 1):
        line = SourceLine(code=code, target_major=target_major, file_has_syncwarp=has_syncwarp)
        suppressed = SUPPRESS.search(comment) if comment else None
        ignored = suppressed.group(1).replace(" ", "").split(",") if suppressed else ()
        for rule in rules:
            if rule.code in ignored:
                continue
            for message, details in rule.check(line, rule.params):
                findings.append(Finding(rule.code, rule.severity, f"{path}:{number}: {message}", arch,
                                        {"file": path, "line": number, **details}, rule.source))
    return findings
