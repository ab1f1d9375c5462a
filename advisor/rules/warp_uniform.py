"""Where CUDA source is provably reached by every lane of a warp: the code of a
`__global__` function's own body, outside every conditional, loop and switch,
before any `return` or `goto`, in a statement without `?:`, `&&` or `||`.

TA801 reads it to choose a warp intrinsic's lane mask: a full mask only there.
Anything else (a device function, which may be called from divergent code, a
branch such as `if (threadIdx.x < 16)`, a loop, code after an early return)
is not provable from the text, so it is treated as divergent. The reading is
one pass over the blanked code (comments and literals already removed), linear
in its size.
"""

from __future__ import annotations

import re

# The tokens that change what is uniform: braces, parentheses, statement ends,
# control keywords, conditional operators, and the kernel marker.
_TOKEN = re.compile(r"\b(?:__global__|if|else|for|while|do|switch|case|default|return|goto)\b"
                    r"|&&|\|\||[{}();?=,\[:]|[A-Za-z_]\w*")
_CONDITIONAL = {"if", "else", "for", "while", "do", "switch", "case", "default", "?", "&&", "||"}
_EXITS = {"return", "goto"}
_INITIALIZER_AFTER = {"=", ",", "(", "[", "?", ":", "return"}  # a `{` after these opens a braced initializer


class _State:
    __slots__ = ("depth", "parens", "kernel_pending", "kernel_depth", "exited", "conditional", "previous",
                 "braces")

    def __init__(self) -> None:
        self.depth = self.parens = 0
        self.kernel_pending = False
        self.kernel_depth: int | None = None  # brace depth of the current kernel's body
        self.exited = False  # a return or goto earlier in the kernel's body
        self.conditional = False  # the current statement is (or is inside) a conditional
        self.previous = ";"
        self.braces: list[tuple[bool, bool]] = []  # per open brace: (an initializer, conditional before it)

    def uniform(self) -> bool:
        return (self.kernel_depth is not None and self.depth == self.kernel_depth and not self.exited
                and not self.conditional)

    def token(self, token: str) -> None:
        if token == "__global__":
            self.kernel_pending = True
        elif token in _CONDITIONAL:
            self.conditional = True
        elif token in _EXITS and self.kernel_depth is not None:
            self.exited = True
        elif token == "(":
            self.parens += 1
        elif token == ")":
            self.parens = max(0, self.parens - 1)
        elif token == ";" and self.parens == 0:
            self.conditional = self.kernel_pending = False
        elif token == "{":
            self._open()
        elif token == "}":
            self._close()
        self.previous = token

    def _open(self) -> None:
        # In a kernel, `{` after a name (`float2{1, 2}`, `T x{0}`) is an initializer too; a
        # block follows `)`, a statement's end, `else` or `do`.
        named = (self.previous[0].isalpha() or self.previous[0] == "_") and self.previous not in ("else", "do")
        initializer = self.previous in _INITIALIZER_AFTER or (named and self.kernel_depth is not None)
        self.braces.append((initializer, self.conditional))
        self.depth += 1
        if self.kernel_pending and self.parens == 0 and not initializer:
            self.kernel_pending, self.kernel_depth, self.exited = False, self.depth, False
        if not initializer:
            self.conditional = False if self.depth == self.kernel_depth else self.conditional
            self.parens = 0

    def _close(self) -> None:
        initializer, before = self.braces.pop() if self.braces else (False, False)
        if self.kernel_depth is not None and self.depth == self.kernel_depth:
            self.kernel_depth = None
        self.depth = max(0, self.depth - 1)
        # A block ends its statement; a braced initializer is part of one.
        self.conditional = before if initializer else False


def uniform_spans(lines: list[str]) -> list[tuple[tuple[int, int], ...]]:
    """For each line of blanked code, the (start, end) index ranges that are provably warp-uniform."""
    state = _State()
    spans = []
    for code in lines:
        found: list[tuple[int, int]] = []
        start = 0 if state.uniform() else None
        for match in _TOKEN.finditer(code):
            was = state.uniform()
            state.token(match.group(0))
            now = state.uniform()
            if was and not now:
                found.append((start, match.start()))
                start = None
            elif now and not was:
                start = match.end()
        if start is not None:
            found.append((start, len(code)))
        spans.append(tuple(found))
    return spans


def is_uniform(spans: tuple[tuple[int, int], ...], position: int) -> bool:
    """Whether the code at `position` (an index into its line) lies in one of the line's uniform spans."""
    return any(start <= position < end for start, end in spans)
