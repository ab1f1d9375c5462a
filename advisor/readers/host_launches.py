"""The launches a CUDA source's host code makes, read from NVIDIA's own front end's output.

`nvcc -cuda` (advisor/toolchain/compile.py does it in lint's compile) writes the host side of a
.cu as plain C++, every macro expanded and every `k<<<g, b, smem, s>>>(args)` rewritten as
`(__cudaPushCallConfiguration(g, b, smem, s)) ? (void)0 : k(args)`, with line markers back to the
user's files. libclang (the `[host]` extra) parses that as C++ and this module finds, in the
functions of the user's own files, each launch:

- `k<<<...>>>` (as `__cudaPushCallConfiguration`), `cudaLaunchKernel`, `cudaLaunchCooperativeKernel`
  (kernel, grid, block, args, shared memory, stream);
- `cudaLaunchKernelEx(&config, kernel, ...)` and `cudaLaunchKernelExC`: the config's members and its
  attributes (cluster dimensions, carveout, cooperative...) as the function assigns them before the call;
- `cuLaunchKernel` and `cuLaunchCooperativeKernel`, the kernel named by the string given to
  `cuModuleGetFunction` for the same CUfunction.

Each launch names the kernel as it is compiled (the mangled name, a template's instantiation), the
compile-time block, grid, dynamic shared memory and cluster (advisor/readers/host_expressions.py
says what counts), which values are set at run time, and where (file:line:column of the user's
source). A block whose variable `cudaOccupancyMaxPotentialBlockSize` writes is said so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .host_expressions import (
    MAX_DIMENSION,
    FunctionFacts,
    access_path,
    children,
    clang,
    dim3,
    integer,
    presumed,
    strip,
)

OCCUPANCY_API = "cudaOccupancyMaxPotentialBlockSize"
# API -> (kernel, grid, block, dynamic shared memory) argument positions.
_RUNTIME_LAUNCHES = {"cudaLaunchKernel": (0, 1, 2, 4), "cudaLaunchCooperativeKernel": (0, 1, 2, 4)}
_DRIVER_LAUNCHES = ("cuLaunchKernel", "cuLaunchCooperativeKernel")
_EX_LAUNCHES = ("cudaLaunchKernelEx", "cudaLaunchKernelExC")
PUSH = "__cudaPushCallConfiguration"
# Launch attributes that change what the engine computes; the others are named on the site only.
CLUSTER_ATTRIBUTE = "cudaLaunchAttributeClusterDimension"
MAX_ATTRIBUTES = 64


@dataclass(frozen=True)
class HostLaunch:
    """One launch site in host code."""

    kernel: str | None  # as compiled (mangled for C++); None: not known from the source
    api: str  # "<<<>>>", "cudaLaunchKernel", "cudaLaunchKernelEx", ...
    file: str
    line: int
    column: int
    block: tuple[int, int, int] | None = None  # None: set at run time
    grid: tuple[int, int, int] | None = None
    dynamic_shared_mem: int | None = None
    cluster: tuple[int, int, int] | None = None  # from cudaLaunchAttributeClusterDimension
    run_time: tuple[str, ...] = ()  # the values set at run time: "block size", "grid", ...
    attributes: tuple[str, ...] = ()  # cudaLaunchKernelEx's attribute names, as written
    block_from: str | None = None  # "cudaOccupancyMaxPotentialBlockSize" where that call sets the block
    # The kernel template's qualified name where the instantiation depends on the launching template's
    # parameters: every compiled instantiation of it is launched here.
    kernel_template: str | None = None

    @property
    def site(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class _Site:
    """Where a call stands in the user's source; the column is found on the source's own line
    (the front end's output keeps lines, not columns)."""

    def __init__(self, lines_of):
        self.lines_of = lines_of  # file -> its lines, or None
        self.used: dict[tuple[str, int], int] = {}

    def of(self, call, name: str) -> tuple[str, int, int]:
        file, line = presumed(call.location)
        text = self.lines_of(file)
        column = 1
        if text is not None and 0 < line <= len(text):
            source_line = text[line - 1]
            start = self.used.get((file, line), 0)
            found = _word_at(source_line, name, start) if name else -1
            if found < 0:
                found = len(source_line) - len(source_line.lstrip())
            else:
                self.used[(file, line)] = found + len(name)
            column = found + 1
        return file, line, column


def _word_at(text: str, word: str, start: int) -> int:
    """Index of `word` as a whole identifier in `text` from `start`, or -1."""
    at = text.find(word, start)
    while at >= 0:
        before = text[at - 1] if at > 0 else " "
        after = text[at + len(word)] if at + len(word) < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
        at = text.find(word, at + 1)
    return -1


# Brackets clang follows before a fatal error: its default, 256, is below what generated code
# nests. Past this bound the parse stops and says so (`HostParseStopped`). Not higher: clang's
# parser recurses per bracket, and 4,000 nested calls overflow its stack, ending the process
# (2,000 do not).
BRACKET_DEPTH = 1024
FATAL = 4  # libclang's CXDiagnostic_Fatal


class HostParseStopped(Exception):
    """clang stopped before the end of the host code (a fatal error): one line naming the file."""


def parse_host_source(path: str, flags=()):
    """The translation unit of the front end's host file, parsed as C++ with the preprocessor flags
    nvcc's own preprocessing of it uses. The stub it includes at its end (`k.cudafe1.stub.c`,
    written by the device compile) and the fatbin a stub includes are not built here: empty files
    stand in for them (the kernels' host stubs are no launches), so clang reads to the end."""
    cindex = clang()
    folder = os.path.dirname(path)
    stubs = {os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".stub.c")}
    if path.endswith(".cudafe1.cpp"):
        stubs.add(path[:-len(".cpp")] + ".stub.c")
    stand_ins = [(stub[:-len(".cudafe1.stub.c")] + ".fatbin.c", "") for stub in sorted(stubs)]
    stand_ins += [(stub, "") for stub in sorted(stubs) if not os.path.exists(stub)]
    args = ["-x", "c++", "-std=c++17", *flags, "-w", "-ferror-limit=0", f"-fbracket-depth={BRACKET_DEPTH}"]
    return cindex.Index.create().parse(path, args=args, unsaved_files=stand_ins, options=0)


def _stopped(unit) -> str | None:
    """Where clang gave up on the translation unit (a fatal error: the rest is not parsed, and its
    launches would be silently missing), as one line naming the file; None where it read it all."""
    for diagnostic in unit.diagnostics:
        if diagnostic.severity >= FATAL:
            file, line = presumed(diagnostic.location)
            return f"host code not read past {file}:{line}: {diagnostic.spelling}"
    return None


def read_launches(path: str, flags, lines_of, user_file) -> list[HostLaunch]:
    """Every launch in the functions of the user's files in the front end's host file `path`.
    `lines_of(file)`: that file's lines (for columns), or None; `user_file(file)`: whether a file
    named by a line marker is the user's (not the toolkit's or the system's headers).
    HostParseStopped where clang could not parse it to the end."""
    unit = parse_host_source(path, flags)
    stopped = _stopped(unit)
    if stopped is not None:
        raise HostParseStopped(stopped)
    sites, launches = _Site(lines_of), []
    for top in unit.cursor.get_children():
        if user_file(presumed(top.location)[0]):
            for function in _functions(top):
                launches += _launches_in(function, sites)
    return launches


_FUNCTIONS = ("FUNCTION_DECL", "CXX_METHOD", "FUNCTION_TEMPLATE", "CONSTRUCTOR", "DESTRUCTOR", "LAMBDA_EXPR")
_SCOPES = ("NAMESPACE", "CLASS_DECL", "STRUCT_DECL", "CLASS_TEMPLATE", "LINKAGE_SPEC", "UNEXPOSED_DECL")


def _functions(top):
    """The function definitions under a top-level declaration (namespaces and classes opened),
    but the kernels' host stubs the front end writes; in source order, by an explicit stack."""
    todo = [top]
    while todo:
        cursor = todo.pop()
        kind = cursor.kind.name
        if kind in _FUNCTIONS:
            if cursor.is_definition() and "device_stub" not in cursor.spelling:
                yield cursor
        elif kind in _SCOPES:
            todo += reversed(children(cursor))


def _calls(cursor):
    """(call, the nearest `?:` around it) under `cursor`, in source order: depth first by an
    explicit stack, so an expression nested deeper than Python's recursion limit is walked whole."""
    todo = [(child, None) for child in reversed(children(cursor))]
    while todo:
        node, conditional = todo.pop()
        if node.kind.name == "CALL_EXPR":
            yield node, conditional
        around = node if node.kind.name == "CONDITIONAL_OPERATOR" else conditional
        todo += [(child, around) for child in reversed(children(node))]


def _launches_in(function, sites: _Site) -> list[HostLaunch]:
    facts, found = None, []
    for call, conditional in _calls(function):
        name = call.spelling
        if name not in (PUSH, *_RUNTIME_LAUNCHES, *_DRIVER_LAUNCHES, *_EX_LAUNCHES):
            continue
        facts = facts or FunctionFacts(function)
        if name == PUSH:
            found.append(_chevron(call, conditional, facts, sites))
        elif name in _RUNTIME_LAUNCHES:
            found.append(_runtime(call, name, facts, sites))
        elif name in _EX_LAUNCHES:
            found.append(_extended(call, name, facts, sites))
        else:
            found.append(_driver(call, name, facts, sites))
    return found


def _kernel(cursor) -> tuple[str | None, str | None]:
    """(the mangled name of the kernel an expression names: `k`, `(void*)k`, `&k<8>`, or None; the
    qualified name of its template where the instantiation depends on the launching template's
    parameters: `computeValue<Real>` in a template of Real)."""
    cursor = strip(cursor)
    if cursor.kind.name == "UNARY_OPERATOR":
        kids = children(cursor)
        cursor = strip(kids[0]) if kids else cursor
    overloaded = _overloaded(cursor)
    if overloaded is not None:  # a call that depends on the launching template's parameters
        return None, _qualified(overloaded)
    ref = cursor.referenced if cursor.kind.name in ("DECL_REF_EXPR", "CALL_EXPR") else None
    if ref is not None and ref.kind.name == "FUNCTION_TEMPLATE":
        return None, _qualified(ref)
    if ref is None or ref.kind.name != "FUNCTION_DECL":
        return None, None
    name = ref.mangled_name or ref.spelling
    # The front end declares a template kernel's host stub static (internal linkage, `_ZL`); the
    # compiled kernel is `_Z`.
    return ("_Z" + name[3:] if name.startswith("_ZL") else name), None


def _overloaded(cursor):
    """The template a dependent name (`scale<T>` in a template of T) refers to, or None."""
    if cursor.kind.name == "CALL_EXPR" and cursor.referenced is None:
        cursor = next((strip(k) for k in children(cursor) if k.kind.is_expression()), cursor)
    if cursor.kind.name == "DECL_REF_EXPR":
        cursor = next((k for k in children(cursor) if k.kind.name == "OVERLOADED_DECL_REF"), cursor)
    if cursor.kind.name != "OVERLOADED_DECL_REF":
        return None
    lib = clang().conf.lib
    if lib.clang_getNumOverloadedDecls(cursor) < 1:
        return None
    declaration = lib.clang_getOverloadedDecl(cursor, 0)
    return declaration if declaration is not None and declaration.kind.name == "FUNCTION_TEMPLATE" else None


def _callee_name(call) -> str:
    """The name a launch's kernel call is written with (for its column)."""
    overloaded = _overloaded(call)
    return overloaded.spelling if overloaded is not None else call.spelling


def _qualified(declaration) -> str:
    """`ns::kernel` of a declaration: its name under its namespaces and classes."""
    parts, scope = [declaration.spelling], declaration.semantic_parent
    while scope is not None and scope.kind.name in ("NAMESPACE", "CLASS_DECL", "STRUCT_DECL", "CLASS_TEMPLATE"):
        parts.append(scope.spelling)
        scope = scope.semantic_parent
    return "::".join(reversed(parts))


def _launch(kernel, api, where, facts, block, grid=None, smem=None, **more) -> HostLaunch:
    """A HostLaunch from its argument cursors (None: not given)."""
    run_time = []
    block_value = _dims(block, facts)
    if block_value is None:
        run_time.append("block size")
    grid_value = _dims(grid, facts) if grid is not None else None
    if grid is not None and grid_value is None:
        run_time.append("grid")
    smem_value = 0 if smem is None else integer(smem, facts)
    if smem_value is None or not 0 <= smem_value <= MAX_DIMENSION:
        smem_value = None
        run_time.append("dynamic shared memory")
    run_time += more.pop("run_time", [])
    return HostLaunch(kernel, api, *where, block=block_value, grid=grid_value, dynamic_shared_mem=smem_value,
                      run_time=tuple(run_time), block_from=_block_from(block, facts), **more)


def _dims(cursor, facts) -> tuple[int, int, int] | None:
    value = dim3(cursor, facts)
    if value is None or not all(1 <= v <= MAX_DIMENSION for v in value):
        return None
    return value


def _block_from(block, facts) -> str | None:
    """`cudaOccupancyMaxPotentialBlockSize` where that call writes the block's variable."""
    if block is None:
        return None
    inner = strip(block)
    if inner.kind.name == "CALL_EXPR" and "dim3" in inner.type.spelling:  # dim3(n): n's variable
        arguments = list(inner.get_arguments())
        inner = arguments[0] if arguments else inner
    path = access_path(inner)
    if path is None:
        return None
    calls = facts.address_taken_by.get(path[0], [])
    return OCCUPANCY_API if any(c.spelling.startswith(OCCUPANCY_API) for c in calls) else None


def _chevron(call, conditional, facts, sites) -> HostLaunch:
    """`(__cudaPushCallConfiguration(g, b, smem, s)) ? (void)0 : k(args)`: the kernel is the
    conditional's third operand."""
    arguments = list(call.get_arguments())
    if len(arguments) < 2:  # not the front end's rewrite of a launch
        return HostLaunch(None, "<<<>>>", *sites.of(call, ""), run_time=("block size",))
    kernel_call = strip(children(conditional)[-1]) if conditional is not None and children(conditional) else None
    if kernel_call is not None and kernel_call.kind.name != "CALL_EXPR":
        kernel_call = None
    kernel, template = _kernel(kernel_call) if kernel_call is not None else (None, None)
    where = sites.of(call, _callee_name(kernel_call) if kernel_call is not None else "")
    return _launch(kernel, "<<<>>>", where, facts, arguments[1], arguments[0],
                   arguments[2] if len(arguments) > 2 else None, kernel_template=template)


def _runtime(call, name, facts, sites) -> HostLaunch:
    arguments = list(call.get_arguments())
    kernel_at, grid_at, block_at, smem_at = _RUNTIME_LAUNCHES[name]
    if len(arguments) <= block_at:
        return HostLaunch(None, name, *sites.of(call, name), run_time=("block size",))
    smem = arguments[smem_at] if len(arguments) > smem_at else None
    kernel, template = _kernel(arguments[kernel_at])
    return _launch(kernel, name, sites.of(call, name), facts, arguments[block_at], arguments[grid_at], smem,
                   kernel_template=template)


def _driver(call, name, facts, sites) -> HostLaunch:
    """cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra)."""
    arguments = list(call.get_arguments())
    where = sites.of(call, name)
    if len(arguments) < 8:
        return HostLaunch(None, name, *where, run_time=("block size",))
    block = [integer(a, facts) for a in arguments[4:7]]
    grid = [integer(a, facts) for a in arguments[1:4]]
    smem = integer(arguments[7], facts)
    run_time = [label for label, value in (("block size", block), ("grid", grid))
                if any(v is None or not 1 <= v <= MAX_DIMENSION for v in value)]
    if smem is None:
        run_time.append("dynamic shared memory")
    return HostLaunch(_driver_kernel(arguments[0], facts), name, *where,
                      block=None if "block size" in run_time else tuple(block),
                      grid=None if "grid" in run_time else tuple(grid), dynamic_shared_mem=smem,
                      run_time=tuple(run_time))


def _driver_kernel(function, facts) -> str | None:
    """The name given to cuModuleGetFunction(&f, module, "name") for the CUfunction `f`."""
    path = access_path(function)
    if path is None:
        return None
    for call in facts.address_taken_by.get(path[0], []):
        if call.spelling == "cuModuleGetFunction":
            arguments = list(call.get_arguments())
            literal = strip(arguments[2]) if len(arguments) > 2 else None
            if literal is not None and literal.kind.name == "STRING_LITERAL":
                return literal.spelling.strip('"')
    return None


def _extended(call, name, facts, sites) -> HostLaunch:
    """cudaLaunchKernelEx(&config, kernel, args...): the members the function assigns `config`
    before the call, its attributes included."""
    arguments = list(call.get_arguments())
    where = sites.of(call, name)
    address = strip(arguments[0]) if arguments else None
    operand = children(address) if address is not None and address.kind.name == "UNARY_OPERATOR" else []
    config = access_path(strip(operand[0])) if operand else None
    kernel, template = _kernel(arguments[1]) if len(arguments) > 1 else (None, None)
    if config is None:
        return HostLaunch(kernel, name, *where, run_time=("block size", "grid", "dynamic shared memory"),
                          kernel_template=template)
    before = call.extent.start.offset

    def member(*path):
        return facts.member_value(config + path, before)

    cluster, attributes, run_time = _attributes(member("attrs"), member("numAttrs"), facts, before)
    return _launch(kernel, name, where, facts, member("blockDim"), member("gridDim"), member("dynamicSmemBytes"),
                   cluster=cluster, attributes=attributes, run_time=run_time, kernel_template=template)


def _attributes(attrs, count, facts, before):
    """(cluster dims, attribute names, run-time values) of a config's attribute array."""
    number = integer(count, facts) if count is not None else 0
    if not number:
        return None, (), []
    base = access_path(strip(attrs)) if attrs is not None else None
    if base is None or number is None or not 0 < number <= MAX_ATTRIBUTES:
        return None, (), ["launch attributes"]
    cluster, names, run_time = None, [], []
    for index in range(number):
        identifier = facts.member_value(base + (index, "id"), before)
        label = strip(identifier).spelling if identifier is not None else ""
        names.append(label or "set at run time")
        if label == CLUSTER_ATTRIBUTE:
            dims = [facts.member_value(base + (index, "val", "clusterDim", axis), before) for axis in "xyz"]
            values = [integer(d, facts) if d is not None else None for d in dims]
            if any(v is None or not 1 <= v <= MAX_DIMENSION for v in values):
                run_time.append("cluster dimensions")
            else:
                cluster = tuple(values)
    return cluster, tuple(names), run_time
