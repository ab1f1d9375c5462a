"""libclang over host C++: the translation unit, where a cursor stands in the user's source, and
the compile-time value of a launch argument (advisor/readers/host_launches.py reads the launches).

The `libclang` package (the `[host]` extra) ships libclang and its Python bindings; the bindings
do not wrap `clang_Cursor_Evaluate` or `clang_getPresumedLocation`, which the library exports, so
they are declared here once. A value is compile-time when clang evaluates it as a constant
(literals, `constexpr`, macros, `const` locals with constant initializers, `sizeof` arithmetic,
template arguments of the kernel) or when it is a local variable of the launching function whose
initializer is one and which nothing in that function assigns, increments or takes the address of.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

HOST_EXTRA_HINT = "pip install 'tuneadvise[host]'"
# A compile-time dimension past this is not a launch dimension (the grid's x is at most 2^31 - 1).
MAX_DIMENSION = (1 << 31) - 1
_INT_KIND = 1  # CXEval_Int
ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})
_MODIFYING_UNARY = frozenset({"++", "--", "&"})


class HostParserMissing(RuntimeError):
    """libclang is not installed: the one sentence naming the extra."""

    def __init__(self):
        super().__init__(f"launches in host code not read: libclang is not installed ({HOST_EXTRA_HINT}); "
                         "kernels are checked at the config's launch, their __launch_bounds__ or the assumed block")


@lru_cache(maxsize=1)
def clang():
    """The bindings module, with the two functions they lack declared; HostParserMissing without it."""
    try:
        from clang import cindex
    except ImportError:
        raise HostParserMissing() from None
    try:
        lib = cindex.conf.lib
    except Exception:  # the bindings are there, their shared library is not loadable
        raise HostParserMissing() from None
    lib.clang_Cursor_Evaluate.argtypes = [cindex.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_getPresumedLocation.argtypes = [cindex.SourceLocation, ctypes.POINTER(cindex._CXString),
                                              ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
    return cindex


def presumed(location) -> tuple[str, int]:
    """(file, line) of a location as the translation unit's line markers name it: the user's
    source, not the front end's output."""
    cindex = clang()
    name, line, column = cindex._CXString(), ctypes.c_uint(), ctypes.c_uint()
    cindex.conf.lib.clang_getPresumedLocation(location, ctypes.byref(name), ctypes.byref(line), ctypes.byref(column))
    return cindex._CXString.from_result(name), line.value


def evaluate(cursor) -> int | None:
    """clang's constant value of an integral expression, or None."""
    lib = clang().conf.lib
    result = lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        return lib.clang_EvalResult_getAsLongLong(result) if lib.clang_EvalResult_getKind(result) == _INT_KIND else None
    finally:
        lib.clang_EvalResult_dispose(result)


def children(cursor) -> list:
    return list(cursor.get_children())


def operator(cursor) -> str:
    """The operator of a binary or unary operator cursor, read from its tokens."""
    kids = children(cursor)
    tokens = list(cursor.get_tokens())
    if not tokens:
        return ""
    if cursor.kind.name == "UNARY_OPERATOR":
        if kids and tokens[0].extent.start.offset < kids[0].extent.start.offset:
            return tokens[0].spelling
        return tokens[-1].spelling  # postfix
    if not kids:
        return ""
    end = kids[0].extent.end.offset
    return next((t.spelling for t in tokens if t.extent.start.offset >= end), "")


def strip(cursor):
    """The expression under implicit conversions, parentheses and casts."""
    while cursor.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR",
                               "CXX_FUNCTIONAL_CAST_EXPR", "CXX_REINTERPRET_CAST_EXPR", "CXX_CONST_CAST_EXPR"):
        kids = [k for k in children(cursor) if k.kind.is_expression()]
        if len(kids) != 1:
            break
        cursor = kids[-1]
    return cursor


class FunctionFacts:
    """What one function body does to its local variables: which are written after their
    declaration (assigned, incremented, their address taken), and the member assignments in
    source order (for cudaLaunchKernelEx's config and attributes). Built once per function."""

    def __init__(self, body):
        self.written: set = set()  # hashes of the VAR_DECLs written
        self.address_taken_by: dict = {}  # VAR_DECL hash -> the calls that take its address (occupancy API)
        self.members: list = []  # (offset, (var hash, path...), value cursor)
        # Depth first in source order, by an explicit stack: a body nested deeper than Python's
        # recursion limit (generated code) is walked whole. `ancestors[:depth]` are the node's.
        ancestors: list = []
        todo = [(body, 0)]
        while todo:
            cursor, depth = todo.pop()
            del ancestors[depth:]
            self._visit(cursor, ancestors)
            ancestors.append(cursor)
            todo += [(child, depth + 1) for child in reversed(children(cursor))]

    def _visit(self, cursor, stack) -> None:
        """Note what `cursor` writes; `stack`: the nodes around it, outermost first."""
        kind = cursor.kind.name
        if kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and operator(cursor) in ASSIGNMENTS:
            self._assigned(cursor, children(cursor), operator(cursor) == "=")
        elif kind == "CALL_EXPR" and cursor.spelling.startswith("operator") and cursor.spelling[8:] in ASSIGNMENTS:
            self._assigned(cursor, list(cursor.get_arguments()), cursor.spelling == "operator=")  # a class's
        elif kind == "UNARY_OPERATOR" and operator(cursor) in _MODIFYING_UNARY:
            target = access_path(children(cursor)[0]) if children(cursor) else None
            if target is not None:
                self.written.add(target[0])
                call = next((c for c in reversed(stack) if c.kind.name == "CALL_EXPR"), None)
                if call is not None:
                    self.address_taken_by.setdefault(target[0], []).append(call)

    def _assigned(self, cursor, operands, plain: bool) -> None:
        target = access_path(operands[0]) if operands else None
        if target is not None:
            self.written.add(target[0])
            if len(target) > 1 and plain:
                self.members.append((cursor.extent.start.offset, target, operands[-1]))

    def member_value(self, path: tuple, before: int):
        """The value last assigned to `path` (a variable's hash and member names or indexes) before
        offset `before`, or None."""
        found = None
        for offset, target, value in self.members:
            if target == path and offset < before:
                found = value
        return found


def access_path(cursor) -> tuple | None:
    """(variable's hash, member or index, ...) of `a.b[2].c`, or None where it is not a local's.
    Walked down a loop, not by recursion: a chain of any length is read."""
    path: list = []
    while True:
        cursor = strip(cursor)
        kind = cursor.kind.name
        if kind == "DECL_REF_EXPR":
            ref = cursor.referenced
            return (ref.hash, *reversed(path)) if ref is not None and ref.kind.name in ("VAR_DECL", "PARM_DECL") \
                else None
        kids = children(cursor)
        if kind == "MEMBER_REF_EXPR" and kids:
            path.append(cursor.spelling)
        elif kind == "ARRAY_SUBSCRIPT_EXPR" and len(kids) == 2 and (index := evaluate(kids[1])) is not None:
            path.append(index)
        else:
            return None
        cursor = kids[0]


def local_initializer(cursor, facts: FunctionFacts):
    """The initializer of the local variable `cursor` refers to, where nothing in the function
    writes the variable after its declaration; else None."""
    ref = cursor.referenced
    if ref is None or ref.kind.name != "VAR_DECL" or ref.hash in facts.written:
        return None
    kids = [k for k in children(ref) if k.kind.is_expression()]
    return kids[-1] if kids else None


def integer(cursor, facts: FunctionFacts, depth: int = 0) -> int | None:
    """The compile-time value of an integral launch argument, or None."""
    if cursor is None:
        return None
    value = evaluate(cursor)
    if value is not None:
        return value
    inner = strip(cursor)
    if depth >= 16:
        return None
    if inner.kind.name == "DECL_REF_EXPR":
        init = local_initializer(inner, facts)
        return integer(init, facts, depth + 1) if init is not None else None
    if inner.kind.name == "BINARY_OPERATOR":  # arithmetic over a local clang does not take as constant
        operands = [k for k in children(inner) if k.kind.is_expression()]
        if len(operands) == 2:
            left, right = (integer(o, facts, depth + 1) for o in operands)
            return _arithmetic(operator(inner), left, right)
    return None


def _arithmetic(op: str, left: int | None, right: int | None) -> int | None:
    """`left op right` as C++ computes it on integers (division truncates), or None."""
    if left is None or right is None:
        return None
    if op in ("/", "%") and right == 0 or op in ("<<", ">>") and not 0 <= right < 63:
        return None
    if op == "/":
        return abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)
    if op == "%":
        return left - right * _arithmetic("/", left, right)
    results = {"+": left + right, "-": left - right, "*": left * right, "&": left & right, "|": left | right,
               "^": left ^ right}
    if op in results:
        return results[op]
    return left << right if op == "<<" else left >> right if op == ">>" else None


def dim3(cursor, facts: FunctionFacts, depth: int = 0) -> tuple[int, int, int] | None:
    """The compile-time value of a dim3 launch argument (an integer, `dim3(x, y, z)`, `{x, y}`, or a
    local dim3 built from them), or None."""
    if depth > 8 or cursor is None:
        return None
    inner = strip(cursor)
    if "dim3" not in inner.type.spelling:
        value = integer(inner, facts, depth)
        return (value, 1, 1) if value is not None else None
    kind = inner.kind.name
    if kind == "DECL_REF_EXPR":
        init = local_initializer(inner, facts)
        return dim3(init, facts, depth + 1) if init is not None else None
    if kind in ("CALL_EXPR", "INIT_LIST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR", "UNEXPOSED_EXPR"):
        parts = [k for k in children(inner) if k.kind.is_expression()]
        if kind == "CALL_EXPR":
            parts = list(inner.get_arguments())
        if len(parts) == 1 and "dim3" in strip(parts[0]).type.spelling:
            return dim3(parts[0], facts, depth + 1)  # a copy
        values = [integer(p, facts, depth) for p in parts[:3]]
        if not parts or any(v is None for v in values):
            return None
        return tuple(values + [1] * (3 - len(values)))
    return None
