"""CUDA source text as lint and the source rules read it: each line's code with comments
and string and character literals (raw strings included) blanked, line and column
numbers kept, and the line's `//` comment beside it (where `// tuneadvise:
ignore[CODE]` suppressions live). Linear in the size of the file: one pass over
its tokens.

    >>> from tuneadvise.advisor.readers.cuda_source import strip_comments
    >>> strip_comments('x = "a"; // tuneadvise: ignore[TA801]')
    [('x =    ;                             ', ' tuneadvise: ignore[TA801]')]
"""

from __future__ import annotations

import re

# What starts a comment or a literal: the only places the code/text split can change.
_OPENERS = re.compile(r'//|/\*|R"([^()\\\s"]{0,16})\(|"|\'')
# A literal's run of plain characters; escapes are stepped over one by one in Python
# (_literal_end), so no pattern repeats a group: `(?:[^"\\\n]|\\.)*` held some 120 bytes of
# memory per character of an unterminated literal (600 MB for 5 MB of source).
_PLAIN = {'"': re.compile(r'[^"\\\n]*'), "'": re.compile(r"[^'\\\n]*")}
SUPPRESS = re.compile(r"tuneadvise:\s*ignore\[([A-Z0-9, ]+)\]")


def suppressed_codes(comment: str) -> set[str]:
    """The rule codes a comment's `tuneadvise: ignore[...]` markers name (every marker of it)."""
    return {code.strip() for match in SUPPRESS.finditer(comment) for code in match.group(1).split(",") if code.strip()}


def close_paren(text: str, open_at: int) -> int:
    """The index of the parenthesis closing the one at `open_at` (nested pairs skipped), or
    len(text) where it does not close."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _blank(text: str) -> str:
    """Spaces for every character but line breaks, so line and column numbers stay."""
    return re.sub(r"[^\n]", " ", text)


def _literal_end(text: str, at: int, quote: str) -> int:
    """Where a string or character literal whose body starts at `at` ends: after its closing
    quote, or at the line break or end of text that leaves it open (before a backslash there)."""
    plain = _PLAIN[quote]
    while True:
        at = plain.match(text, at).end()
        if at == len(text) or text[at] == "\n":
            return at
        if text[at] == quote:
            return at + 1
        if at + 1 == len(text) or text[at + 1] == "\n":  # a backslash that escapes nothing here
            return at
        at += 2


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
            end = _literal_end(text, start + 1, opener)
        code.append(_blank(text[start:end]))
        line += text.count("\n", start, end)
        position = end
    # Lines end at "\n" only (as the line count above), so a stray "\r" or form feed keeps numbers aligned.
    lines = "".join(code).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [(source, comments.get(number, "")) for number, source in enumerate(lines, 1)]
