"""Where each kernel is defined in the CUDA sources, and what it suppresses.

Lint points annotations (SARIF, GitHub) at a kernel's `__global__` line when
the sources are given, and honours ruff-style suppressions there:

    // tuneadvise: ignore[TA301, TA906]
    __global__ void __launch_bounds__(256) saxpy(float a, const float* x, float* y, int n)

A suppression applies to the kernel when it is on the definition line or in
the comment and `template<...>` lines directly above it. Kernels are matched by
their unqualified name, so overloads and template instances share one entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tuneadvise.advisor.rules.source_scan import SUPPRESS, strip_comments

_GLOBAL = re.compile(r"\b__global__\b")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NOT_NAMES = {"__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__attribute__", "alignas", "decltype"}


@dataclass
class Definition:
    file: str
    line: int
    suppressed: set[str] = field(default_factory=set)


@dataclass
class SourceIndex:
    definitions: dict[str, Definition] = field(default_factory=dict)

    def add_file(self, path: str, text: str) -> None:
        lines = strip_comments(text)
        for number, (code, _) in enumerate(lines, 1):
            match = _GLOBAL.search(code)
            if not match:
                continue
            name = _kernel_name(code[match.end():], lines[number:number + 3])
            if name is None or name in self.definitions:
                continue
            self.definitions[name] = Definition(path, number, _suppressions(lines, number))

    def lookup(self, qualified: str) -> Definition | None:
        return self.definitions.get(qualified.rsplit("::", 1)[-1])


def _kernel_name(rest: str, following: list[tuple[str, str]]) -> str | None:
    """The first identifier followed by '(' that is not an attribute, on the
    __global__ line or the next few (the return type may sit on its own line)."""
    for text in [rest] + [code for code, _ in following]:
        depth_skip = 0
        for match in _CALL.finditer(text):
            if match.start() < depth_skip:
                continue
            if match.group(1) in _NOT_NAMES:
                depth_skip = _close_paren(text, match.end() - 1)
                continue
            return match.group(1)
    return None


def _close_paren(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return len(text)


def _suppressions(lines: list[tuple[str, str]], number: int) -> set[str]:
    codes: set[str] = set()
    for index in range(number - 1, -1, -1):
        code, comment = lines[index]
        if index < number - 1:
            stripped = code.strip()
            if (stripped and not stripped.startswith("template")) or not (stripped or comment.strip()):
                break  # other code, or a blank line, ends the kernel's preamble
        for match in SUPPRESS.finditer(comment):
            codes.update(c.strip() for c in match.group(1).split(",") if c.strip())
    return codes
