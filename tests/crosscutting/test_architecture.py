"""The shape of the package, held by tests that fail when it erodes: who imports whom (no cycle
between modules or between subpackages), one home for each shared helper, per-architecture
facts only from the spec, the GPU only through probes/, functions short enough to read.

Read from the source files with `ast`, never by importing them, so a test names the file and
line at fault."""

from __future__ import annotations

import ast
import re
from functools import cache, lru_cache
from pathlib import Path

import pytest

from ..helpers import ROOT

# The repository's folders and the import names they install under (pyproject's package-dir).
PACKAGE_DIRS = {"api": "tuneadvise", "cli": "tuneadvise.cli", "advisor": "tuneadvise.advisor",
                "specs": "tuneadvise.specs", "probes": "tuneadvise.probes"}
SUBPACKAGES = ("advice", "engine", "lint", "readers", "rules", "toolchain")  # of advisor/


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    """Import name -> file, for every module of the package."""
    found = {}
    for folder, package in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(encoding="utf-8"))


def _type_checking_only(parents) -> bool:
    return any(isinstance(p, ast.If) and "TYPE_CHECKING" in ast.unparse(p.test) for p in parents)


def imports(name: str):
    """(node, imported module, names) of every import in module `name` at any depth, those under
    `if TYPE_CHECKING:` left out (they never run)."""
    is_package = modules()[name].name == "__init__.py"
    stack = [(tree(name), ())]
    while stack:
        node, parents = stack.pop()
        stack += [(child, (*parents, node)) for child in ast.iter_child_nodes(node)]
        if _type_checking_only(parents):
            continue
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                module = ".".join(base[:len(base) - node.level + 1] + ([module] if module else []))
            yield node, module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, []


@lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (a `from package import module` counts as the module)."""
    known = modules()
    graph = {}
    for name in known:
        edges = set()
        for _, module, names in imports(name):
            edges |= {m for m in (module, *(f"{module}.{n}" for n in names)) if m in known and m != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(root):
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def subpackage_of(module: str) -> str:
    """The unit a module belongs to: cli, specs, probes and each subpackage of advisor/ whole;
    advisor's own modules (launch, report, batch ...) each on their own."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "advisor" and parts[2] in SUBPACKAGES:
        return ".".join(parts[:3])
    return module if parts[1:2] == ["advisor"] or len(parts) == 1 else ".".join(parts[:2])


def test_the_graph_sees_the_relative_imports():
    graph = import_graph()
    assert "tuneadvise.advisor.inputs" in graph["tuneadvise.advisor.launch"]
    assert "tuneadvise.specs.resolve" in graph["tuneadvise.cli.common"]
    # an import inside a function counts: a cycle dodged that way is still a cycle
    assert "tuneadvise.specs.resolve" in graph["tuneadvise.advisor.frontier"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _compact_separators(ast.parse('json.dumps(x, separators=(",", ":"))').body[0].value)


def test_no_import_cycle_between_modules():
    assert cycles(import_graph()) == []


def test_no_import_cycle_between_subpackages():
    units: dict[str, set[str]] = {}
    for module, edges in import_graph().items():
        units.setdefault(subpackage_of(module), set()).update(subpackage_of(e) for e in edges)
    for unit, edges in units.items():
        edges.discard(unit)
    assert cycles(units) == []


def _definitions(name: str) -> list[str]:
    """Where a module-level function `name` is defined (a method or a local function is not a helper)."""
    return [f"{path.relative_to(ROOT)}:{node.lineno}" for module, path in modules().items()
            for node in tree(module).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name]


ONE_HOME = {
    "resolve": "specs/resolve.py", "read_bounded": "specs/files.py",
    # Quoting outside text in a message sits with the bad-input error, the lowest layer (specs/
    # quotes names and releases too); advisor/text.py re-exports it beside the other text helpers.
    **dict.fromkeys(("clip", "quoted", "one_line"), "specs/errors.py"),
    **dict.fromkeys(("percent", "plural", "utf8_text", "terminal_text", "xml_text",
                     "markdown_text", "markup_text", "json_line"), "advisor/text.py"),
}
# The names the same helpers had before they found their home: none may come back.
FORMER_NAMES = ("pct", "count", "clipped", "shown", "bounded", "emit_json", "to_line", "read_input",
                "read_bytes_bounded", "native_arch", "_resolve_arch",
                # what each command once did with an option's text, now the option's ParamType (cli/params.py)
                "option_errors", "arch_list", "block_dims")


@pytest.mark.parametrize("name, home", sorted(ONE_HOME.items()))
def test_each_shared_helper_has_one_definition(name, home):
    assert [where.split(":")[0] for where in _definitions(name)] == [home]


@pytest.mark.parametrize("name", FORMER_NAMES)
def test_no_second_copy_under_a_former_name(name):
    assert _definitions(name) == []


def test_each_public_function_name_has_one_meaning():
    """A module-level public function's name is defined once in the package: a name in two
    modules reads as one thing and means two. A command may carry the name of the library call
    it is the command line of (`occupancy`, `frontier`), and `main` is a runnable module's entry
    point wherever it is."""
    homes: dict[str, list[str]] = {}
    for module, path in modules().items():
        for node in tree(module).body:
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")
                    and node.name != "main" and not _is_click_command(node)):
                homes.setdefault(node.name, []).append(path.relative_to(ROOT).as_posix())
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


def _source_lines(skip=()):
    for path in modules().values():
        relative = path.relative_to(ROOT).as_posix()
        if not relative.startswith(skip):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                yield f"{relative}:{number}", relative, line


def _compact_separators(call: ast.Call) -> bool:
    return any(k.arg == "separators" and isinstance(k.value, ast.Tuple)
               and [ast.literal_eval(e) for e in k.value.elts if isinstance(e, ast.Constant)] == [",", ":"]
               for k in call.keywords)


def test_json_lines_rich_markup_and_catalog_lookups_go_through_their_home():
    offenders = [f"{path.relative_to(ROOT)}:{node.lineno}" for module, path in modules().items()
                 if path.relative_to(ROOT).as_posix() != "advisor/text.py"
                 for node in ast.walk(tree(module)) if isinstance(node, ast.Call) and _compact_separators(node)]
    offenders += [where for where, relative, line in _source_lines()
                  if ("rich.markup import" in line and relative != "advisor/text.py")
                  or (re.search(r"catalog\(\)\.resolve\(|\bcatalog\.resolve\(", line) and not relative.startswith("specs/"))]
    assert offenders == []


# A comparison against an architecture's compute capability: `arch.major >= 9`, `7 < cc.minor`.
CC_COMPARISON = re.compile(r"\.(major|minor)\s*(>=|<=|>|<|==|!=)|(>=|<=|>|<|==|!=)\s*[\w.]*\.(major|minor)\b")
# Where such facts may be computed from the compute capability: the spec itself, and the engine's
# limit functions that follow cuda_occupancy.h's own tests of it.
CC_ALLOWED = ("specs/", "advisor/engine/limits.py")


def test_per_architecture_facts_come_from_the_spec():
    offenders = [f"{where}: {line.strip()}" for where, _, line in _source_lines(CC_ALLOWED)
                 if CC_COMPARISON.search(line)]
    assert offenders == []


def test_only_probes_touch_cupy_or_the_driver_library():
    offenders = []
    for module, path in modules().items():
        if module.startswith("tuneadvise.probes"):
            continue
        offenders += [f"{path.relative_to(ROOT)}:{node.lineno}" for node, imported, _ in imports(module)
                      if imported.split(".")[0] in ("cupy", "cuda", "pycuda")]
        if "libcuda" in path.read_text(encoding="utf-8"):
            offenders.append(f"{path.relative_to(ROOT)}: names libcuda")
    assert offenders == []


def test_no_module_imports_another_modules_private_names():
    offenders = []
    for module in modules():
        for node, imported, names in imports(module):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and imported != module:
                offenders.append(f"{modules()[module].relative_to(ROOT)}:{node.lineno}: {imported} {private}")
    assert offenders == []


def _functions():
    for module, path in modules().items():
        for node in ast.walk(tree(module)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield path.relative_to(ROOT).as_posix(), node


def _is_click_command(node) -> bool:
    return any("command" in ast.unparse(d).split("(")[0] for d in node.decorator_list)


def test_no_function_over_60_lines():
    long = [f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path, node in _functions() if node.end_lineno - node.lineno + 1 > 60]
    assert long == []


def test_no_command_function_over_25_lines():
    """Counted from the `def` line: the options above it are the command's declaration, not its body."""
    long = [f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path, node in _functions() if _is_click_command(node) and node.end_lineno - node.lineno + 1 > 25]
    assert long == []


def _builds_finding_text(node) -> bool:
    """A call that makes a Finding or words one: Finding(...), finding_of(...), x._replace(message=...)."""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
    return name in ("Finding", "finding_of") or (name == "_replace" and any(k.arg == "message" for k in node.keywords))


def test_no_finding_text_outside_the_rules():
    """A rule owns every word of its findings (message, machine-code lines, built caps, the
    run-wide TA906, fix titles, related-location labels): nothing outside advisor/rules/ writes one."""
    offenders = [f"{path.relative_to(ROOT)}:{node.lineno}" for module, path in modules().items()
                 if not path.relative_to(ROOT).as_posix().startswith("advisor/rules/")
                 for node in ast.walk(tree(module)) if _builds_finding_text(node)]
    assert offenders == []


def test_lint_opens_each_input_once(tmp_path, monkeypatch):
    """gather -> analyse: every input file is opened (and sniffed) once, whatever it holds."""
    import builtins
    import gzip
    import os

    from tuneadvise.advisor.lint.records import LintOptions
    from tuneadvise.advisor.lint.run import lint_paths

    fixtures = ROOT / "tests" / "fixtures"
    export = tmp_path / "ncu_sweep.csv"
    export.write_bytes(gzip.decompress((fixtures / "ncu" / "ncu_sweep.csv.gz").read_bytes()))
    cache = fixtures / "python_caches" / "cupy_cache"
    inputs = [fixtures / "lint" / name for name in ("ptxas_multi.log", "cuobjdump_multi.txt", "lint_sm_90.cubin",
                                                    "lint_multi.o", "liblint.so")] + [export]
    opened: dict[str, int] = {}

    def counted(opener):
        def wrapper(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)):
                key = os.path.realpath(file)
                opened[key] = opened.get(key, 0) + 1
            return opener(file, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(builtins, "open", counted(builtins.open))
    monkeypatch.setattr(os, "open", counted(os.open))
    report = lint_paths([str(p) for p in inputs + [cache]], LintOptions(machine_code=False))
    assert report.kernels and not report.problems
    walked = sorted(cache.iterdir())
    assert {str(p): opened.get(os.path.realpath(p), 0) for p in inputs + walked} == \
        {str(p): 1 for p in inputs + walked}


def _calls(node) -> set[str]:
    """The names a function calls (`emit(...)`, `_render(...)`), at any depth of its body."""
    return {call.func.id for call in ast.walk(node) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)}


def _commands():
    """(module, command function) of every click command of cli/, the entry points of main.COMMANDS."""
    for module in modules():
        if module.startswith("tuneadvise.cli."):
            for node in tree(module).body:
                if isinstance(node, ast.FunctionDef) and _is_click_command(node):
                    yield module, node


# Commands with one form of output, which offer no --format: a rule's explanation (`rules
# --format json` holds the documents), a spec file's validity, a JSON Schema (JSON already).
ONE_FORM_COMMANDS = {"explain", "validate", "schema"}


def _reached(module, command) -> set[str]:
    """The names the command calls, directly or through the functions of its module it calls."""
    helpers = {node.name: node for node in tree(module).body if isinstance(node, ast.FunctionDef)}
    reached, seen, todo = set(), set(), [command]
    while todo:
        node = todo.pop()
        called = _calls(node)
        reached |= called
        todo += [helpers[name] for name in called if name in helpers and name not in seen]
        seen |= called
    return reached


def test_every_command_with_formats_answers_through_emit():
    """One way out for an answer: `emit` (cli/common.py) writes the text or the machine format
    from the same document, called by the command or by a function of its module that it calls.
    A command offering no --format (its parameters have no `fmt`) is one of ONE_FORM_COMMANDS
    and writes its one form itself: calling emit there would only pretend to choose."""
    wrong = []
    for module, command in _commands():
        offers_formats = "fmt" in {a.arg for a in command.args.args}
        where = f"{modules()[module].relative_to(ROOT)}:{command.lineno} {command.name}"
        if offers_formats != ("emit" in _reached(module, command)) or offers_formats == (command.name in
                                                                                         ONE_FORM_COMMANDS):
            wrong.append(where)
    assert len(list(_commands())) >= 14 and wrong == []


def _input_error_classes() -> set[str]:
    """InputError and every class of the package derived from it, by name."""
    bases = {node.name: {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
             for module in modules() for node in ast.walk(tree(module)) if isinstance(node, ast.ClassDef)}
    found = {"InputError"}
    while True:
        more = {name for name, of in bases.items() if of & found} - found
        if not more:
            return found
        found |= more


def test_cli_catches_bad_input_only_in_the_command_group():
    """The library's InputError (and its subclasses: a config's, a cubin's...) becomes a usage
    error in one place, cli/main.py; options are converted by ParamTypes (cli/params.py) that
    let it through."""
    errors = _input_error_classes()
    offenders = []
    for module, path in modules().items():
        relative = path.relative_to(ROOT).as_posix()
        if not module.startswith("tuneadvise.cli") or relative == "cli/main.py":
            continue
        for node in ast.walk(tree(module)):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                caught = {ast.unparse(n).rsplit(".", 1)[-1] for n in ast.walk(node.type)
                          if isinstance(n, (ast.Name, ast.Attribute))}
                if caught & errors:
                    offenders.append(f"{relative}:{node.lineno} catches {sorted(caught & errors)}")
    assert len(errors) > 10 and offenders == []


# What a lint or frontier run decides (which config, the baseline, pass or fail, the analysis)
# is decided in its query (advisor/queries/lint.py, frontier.py): the commands import none of it.
DECIDED_IN_QUERIES = ("tuneadvise.advisor.lint.run", "tuneadvise.advisor.lint.baseline",
                      "tuneadvise.advisor.lint.document", "tuneadvise.advisor.lint.diff",
                      "tuneadvise.advisor.lint.records", "tuneadvise.advisor.frontier")


def test_lint_and_frontier_commands_reach_the_library_through_their_queries():
    offenders = [f"{modules()[module].relative_to(ROOT)}:{node.lineno} imports {imported}"
                 for module in ("tuneadvise.cli.lint_cmd", "tuneadvise.cli.frontier_cmd")
                 for node, imported, _ in imports(module) if imported.startswith(DECIDED_IN_QUERIES)]
    assert offenders == []
