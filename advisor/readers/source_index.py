"""Where each kernel is defined in the CUDA sources, its launch bounds, and
what it suppresses.

Lint points annotations (SARIF, GitHub) at a kernel's `__global__` line when
the sources are given, honours ruff-style suppressions there, and reads the
kernel's `__launch_bounds__` and `__maxnreg__` (a ptxas log does not record
them; a binary records the launch bounds), so a kernel gets the same launch
whichever build output is linted:

    // tuneadvise: ignore[TA301, TA906]
    __global__ void __launch_bounds__(256) saxpy(float a, const float* x, float* y, int n)

A suppression applies to the kernel when it is on the definition line or in
the comment and `template<...>` lines directly above it. The definition is the
declaration with a body: explicit instantiations, specialisation declarations
and prototypes (`...;`) are used only for a kernel defined in no given source.
Kernels are matched by their unqualified name, so overloads and template
instances share one entry.

Reading is linear in the text: each `__global__` declaration is read up to its
body, its semicolon or the next `__global__`, at most MAX_DECLARATION
characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cuda_source import close_paren, strip_comments, suppressed_codes

_GLOBAL = re.compile(r"\b__global__\b")
_ATTRIBUTE = re.compile(r"\b(__launch_bounds__|__maxnreg__|__cluster_dims__|__attribute__|alignas|decltype)\s*\(")
_NAME_BEFORE_PAREN = re.compile(r"([A-Za-z_]\w*)\s*$")
_DECLARATION_END = re.compile(r"[{;]|\b__global__\b")
_LEADING_INT = re.compile(r"\s*(\d{1,7})\s*[,)]")
MAX_DECLARATION = 2000  # characters of a declaration read: far more than any real signature's head
MAX_PREAMBLE = 16  # comment and template lines above a kernel searched for suppressions


@dataclass(frozen=True, slots=True)
class Definition:
    file: str
    line: int
    suppressed: frozenset[str] = frozenset()
    max_threads: int | None = None  # __launch_bounds__(maxThreadsPerBlock, ...)
    max_registers: int | None = None  # __maxnreg__(N)
    has_body: bool = True
    min_blocks: int | None = None  # __launch_bounds__(..., minBlocksPerMultiprocessor)


class SourceIndex:
    def __init__(self):
        self.definitions: dict[str, Definition] = {}

    def add_file(self, path: str, text: str) -> None:
        self.add_lines(path, strip_comments(text))

    def add_lines(self, path: str, lines: list[tuple[str, str]]) -> None:
        """add_file over the file's lines as strip_comments gave them."""
        codes = [code for code, _ in lines]
        for number, code in enumerate(codes, 1):
            match = _GLOBAL.search(code)
            if not match:
                continue
            declaration = _declaration(codes, number - 1, match.start())
            name, has_body, attributes = _read(declaration)
            if name is None:
                continue
            known = self.definitions.get(name)
            if known is not None and (known.has_body or not has_body):
                continue  # the first definition wins; a declaration only until a definition comes
            self.definitions[name] = Definition(
                path, number, frozenset(_suppressions(lines, number)),
                _int_argument(attributes.get("__launch_bounds__")), _int_argument(attributes.get("__maxnreg__")),
                has_body, _second_int_argument(attributes.get("__launch_bounds__")))

    def lookup(self, qualified: str) -> Definition | None:
        return self.definitions.get(qualified.rsplit("::", 1)[-1])


def _declaration(codes: list[str], index: int, start: int) -> str:
    """The code from `__global__` to the end of the declaration (its body's brace, its semicolon, or
    the next `__global__`, which no declaration contains), joined across lines, at most
    MAX_DECLARATION characters. Stopping at the next `__global__` reads each line for one
    declaration at most, so a file of many unfinished declarations stays linear."""
    parts, room = [], MAX_DECLARATION
    for i in range(index, len(codes)):
        part = codes[i][start:start + room] if i == index else codes[i][:room]
        end = _DECLARATION_END.search(part, len("__global__") if i == index else 0)
        if end is not None:
            parts.append(part[:end.start()] if end.group() == "__global__" else part[:end.end()])
            break
        parts.append(part)
        room -= len(part) + 1
        if room <= 0:
            break
    return " ".join(parts)


def _read(declaration: str) -> tuple[str | None, bool, dict[str, str]]:
    """(the kernel's name, whether a body follows, {attribute: its argument text})."""
    attributes: dict[str, str] = {}
    pieces, position = [], 0
    for match in _ATTRIBUTE.finditer(declaration):  # one pass: an attribute's parentheses are skipped whole
        if match.start() < position:
            continue
        close = close_paren(declaration, match.end() - 1)
        attributes.setdefault(match.group(1), declaration[match.end():close + 1])
        pieces.append(declaration[position:match.start()])
        position = close + 1
    pieces.append(declaration[position:])
    text = " ".join(pieces)
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            head = _drop_template_arguments(text[:i])
            match = _NAME_BEFORE_PAREN.search(head)
            if match is None or match.group(1) in ("__global__", "void"):
                return None, False, attributes
            return match.group(1), text.rstrip().endswith("{"), attributes
        elif ch in "{;":
            break
    return None, False, attributes


def _drop_template_arguments(head: str) -> str:
    """`void saxpy<float, 4>` -> `void saxpy`: the name before a trailing template argument list."""
    head = head.rstrip()
    if not head.endswith(">"):
        return head
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        if head[i] == ">":
            depth += 1
        elif head[i] == "<":
            depth -= 1
            if depth == 0:
                return head[:i]
    return head


def _int_argument(arguments: str | None) -> int | None:
    """The first argument of `(N, ...)` when it is a plain number (not a macro or an expression)."""
    if not arguments:
        return None
    match = _LEADING_INT.match(arguments)
    return int(match.group(1)) if match else None


_SECOND_INT = re.compile(r"\s*\d{1,7}\s*,\s*(\d{1,7})\s*[,)]")


def _second_int_argument(arguments: str | None) -> int | None:
    """The second argument of `(N, M, ...)` when both are plain numbers."""
    match = _SECOND_INT.match(arguments) if arguments else None
    return int(match.group(1)) if match else None


def _suppressions(lines: list[tuple[str, str]], number: int) -> set[str]:
    codes: set[str] = set()
    for index in range(number - 1, max(-1, number - 1 - MAX_PREAMBLE), -1):
        code, comment = lines[index]
        if index < number - 1:
            stripped = code.strip()
            if (stripped and not stripped.startswith("template")) or not (stripped or comment.strip()):
                break  # other code, or a blank line, ends the kernel's preamble
        codes |= suppressed_codes(comment)
    return codes
