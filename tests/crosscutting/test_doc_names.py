"""Every module, file, function and command the documentation names exists: docs/*.md and
README.md (their `code spans`), and the package's own docstrings and comments (dotted
module names). A rename that leaves a page or a docstring behind fails here."""

import importlib
import re

import click
import pytest

from tuneadvise.cli.main import cli

from ..helpers import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PACKAGE_DIRS = ("advisor", "cli", "specs", "probes", "api")
SPAN = re.compile(r"`([^`\n]+)`")
FENCED = re.compile(r"^```.*?^```", re.S | re.M)
REPO_PATH = re.compile(r"^(?:\.ci|advisor|cli|specs|probes|api|tests|benchmarks|docs)/[\w./*-]+$")
DOTTED = re.compile(r"^(?:tuneadvise\.)?(?:advisor|cli|specs|probes|api)(?:\.\w+)+$")
SNAKE_NAME = re.compile(r"^(\w*_\w*)(?:\(\))?$")  # a function or field name: kernel_from_mapping()
COMMAND = re.compile(r"^tuneadvise ([a-z][\w-]*)")
CODE_DOTTED = re.compile(r"(?<![\w.])(?:tuneadvise\.)?(?:advisor|specs|probes)\.[a-z_]+(?:\.[a-z_]+)*")


def _code_text() -> str:
    files = [p for d in (*PACKAGE_DIRS, "tests", "benchmarks", ".ci") for p in (ROOT / d).rglob("*")
             if p.is_file() and p.suffix in (".py", ".toml", ".json", ".cpp", ".sh", ".cu", ".yaml", "")
             and p.stat().st_size < 2_000_000 and p.name != "test_doc_names.py"]
    return "\n".join(p.read_text(errors="replace") for p in files)


def _spans():
    for page in PAGES:
        for span in sorted(set(SPAN.findall(FENCED.sub("", page.read_text())))):
            yield page.name, span.strip()


def resolves(dotted: str) -> bool:
    """`advisor.lint.run`, `specs.releases.under_release`, `tuneadvise.advisor.rules.registry`: an
    importable module of the package, or an attribute of one."""
    parts = (dotted if dotted.startswith("tuneadvise.") else "tuneadvise." + dotted).split(".")
    for cut in range(len(parts), 1, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                found = getattr(found, attribute)
        except AttributeError:
            return False
        return True
    return False


def path_exists(span: str) -> bool:
    """A repository path (globs allowed), or `advisor/report.occupancy_document`: a module's file
    and a name in it."""
    path = span.split("::")[0]
    if any(ROOT.glob(path)):
        return True
    module, _, name = path.rpartition(".")
    is_module = (ROOT / f"{module}.py").is_file() or (ROOT / module / "__init__.py").is_file()
    return bool(module) and is_module and resolves(module.replace("/", ".") + "." + name)


def command_exists(name: str) -> bool:
    return cli.get_command(click.Context(cli), name) is not None


def stale_names() -> list[str]:
    code, stale = _code_text(), []
    for page, span in _spans():
        if REPO_PATH.match(span):
            ok = path_exists(span)
        elif DOTTED.match(span):
            ok = resolves(span)
        elif COMMAND.match(span):
            ok = command_exists(COMMAND.match(span).group(1))
        elif SNAKE_NAME.match(span):
            ok = re.search(rf"\b{re.escape(SNAKE_NAME.match(span).group(1))}\b", code) is not None
        else:
            continue
        if not ok:
            stale.append(f"{page}: `{span}`")
    return stale


def test_every_name_the_pages_give_exists():
    assert stale_names() == []


def test_every_module_the_package_names_in_its_docstrings_exists():
    stale = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if line.lstrip().startswith(("from ", "import ", "@")):
                    continue
                stale += [f"{path.relative_to(ROOT)}:{number}: {name}" for name in CODE_DOTTED.findall(line)
                          if not resolves(name.rstrip("."))]
    assert stale == []


@pytest.mark.parametrize("span", ["`tuneadvise.advisor.no_such_module`", "`advisor/nowhere.py`",
                                  "`no_such_function_anywhere()`", "`tuneadvise frobnicate`"])
def test_a_stale_name_is_caught(span, monkeypatch, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"See {span}.\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["PAGES"]), "PAGES", [page])
    assert stale_names() == [f"page.md: {span}"]
