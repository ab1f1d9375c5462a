"""The package's import graph, read from the tree (relative imports) as any static tool
reads it: no cycle between subpackages (advisor's engine, lint, readers, rules, toolchain;
cli, specs, probes) and advisor's own modules (launch, inputs, frontier, ...). An import
inside a function counts (a cycle dodged that way is still a cycle); one under
`if TYPE_CHECKING:` does not."""

import ast
from pathlib import Path

from ..helpers import ROOT

PACKAGES = {"advisor": "tuneadvise.advisor", "cli": "tuneadvise.cli", "specs": "tuneadvise.specs",
            "probes": "tuneadvise.probes", "api": "tuneadvise"}


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, whether it is a package's __init__)."""
    modules = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = (path, path.name == "__init__.py")
    return modules


def _type_only(tree) -> set[int]:
    """The nodes under `if TYPE_CHECKING:`."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _imports(name: str, path: Path, is_package: bool, modules) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_only(tree)
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level or id(node) in skipped:
            continue
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
        candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        found.update(c for c in candidates if c in modules and c != name)
    return found


def _unit(name: str, modules) -> str:
    """What a cycle is counted between: an advisor subpackage, advisor's own module, or a top package."""
    parts = name.split(".")
    if parts[:2] == ["tuneadvise", "advisor"] and len(parts) >= 3:
        subpackage = ".".join(parts[:3])
        return subpackage if modules.get(subpackage, (None, False))[1] else name
    return ".".join(parts[:2])


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        unit = _unit(name, modules)
        targets = {_unit(t, modules) for t in _imports(name, path, is_package, modules)}
        graph.setdefault(unit, set()).update(targets - {unit})
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one unit (Tarjan's, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
    return found


def test_no_import_cycle_between_subpackages_or_advisor_modules():
    assert _cycles(_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_graph_sees_function_level_imports():
    """lint's compile step imports the toolchain inside a function, and frontier resolves its
    architectures through specs only inside frontier(); the graph still has both edges."""
    graph = _graph()
    assert "tuneadvise.advisor.toolchain" in graph["tuneadvise.advisor.lint"]
    assert "tuneadvise.specs" in graph["tuneadvise.advisor.frontier"]
