"""The compiled spec files (specs/data/compiled/, what every command loads) are the TOML files'
validated documents, current, and every name resolves through them as through the full catalog
built from the TOML files themselves."""

import json
import shutil
from pathlib import Path

import pytest

from tuneadvise.specs import catalog, compile
from tuneadvise.specs.catalog import (
    COMPILED_DIR,
    DATA_DIR,
    Catalog,
    UnknownArchError,
    family_age,
    family_files,
    read_toml,
    resolve_shipped,
    shipped_catalog,
    shipped_documents,
)
from tuneadvise.specs.models import validate_family_document

REGENERATE = "regenerate them: python -m tuneadvise.specs.compile"


def _toml_catalog() -> Catalog:
    """The catalog as built before compiling: every TOML file parsed, oldest family first."""
    built = Catalog()
    for doc in sorted((read_toml(path) for path in family_files()), key=family_age):
        built.add_family(doc)
    return built


def test_the_compiled_files_are_current():
    assert compile.stale_files(DATA_DIR) == [], f"stale compiled spec files; {REGENERATE}"


def test_a_stale_compiled_file_is_found(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    hopper = data / COMPILED_DIR / "hopper.json"
    hopper.write_text(hopper.read_text().replace('"value": 65536', '"value": 65535', 1))
    (data / COMPILED_DIR / "gone.json").write_text("{}")
    assert compile.stale_files(str(data)) == ["gone.json", "hopper.json"]
    compile.write_compiled(str(data))
    assert compile.stale_files(str(data)) == []


@pytest.mark.parametrize("path", family_files(), ids=lambda p: Path(p).stem)
def test_each_compiled_document_is_the_validated_toml(path):
    compiled = json.loads((Path(DATA_DIR) / COMPILED_DIR / f"{Path(path).stem}.json").read_text())
    assert compiled == validate_family_document(Path(path)) == read_toml(path)


def test_the_compiled_catalog_equals_the_one_built_from_toml():
    built, shipped = _toml_catalog(), shipped_catalog()
    assert list(shipped.archs.items()) == list(built.archs.items())
    assert list(shipped.products.items()) == list(built.products.items())
    assert shipped.family_default == built.family_default
    assert shipped.family_covered_by_header == built.family_covered_by_header
    assert shipped.aliases == built.aliases
    assert [doc["family"] for doc in shipped_documents()] == [doc["family"] for doc in
                                                              sorted(map(read_toml, family_files()), key=family_age)]


def _spellings(built: Catalog) -> list[str]:
    """Every name and spelling the catalog knows, as users type them, and near misses."""
    names = set(built.aliases) | set(built.archs)
    for arch in built.archs.values():
        digits = f"{arch.major}{arch.minor}"
        names |= {f"sm_{digits}a", f"SM_{digits}f", f"compute_{digits}", digits, f"{arch.cc}a", f" {arch.sm} ",
                  f"arch={digits}", f"sm-{digits}"}
    for product in built.products.values():
        names |= {product.title, product.name.upper(), product.name.replace("-", " ")}
    names |= {f"sm_{major}{minor}" for major in range(1, 14) for minor in range(10)}
    names |= {"", "native", "amperee", "hoper", "h100sxm", "l40x", "10.1", "sm_101", "101", "thor", "a100 sxm4"}
    return sorted(names)


def _answer(resolve, name):
    try:
        return resolve(name)
    except UnknownArchError as exc:
        return ("error", str(exc), tuple(exc.suggestions))


def test_every_name_resolves_as_the_full_catalog_resolves_it():
    built = _toml_catalog()
    names = _spellings(built)
    assert len(names) > 500
    for name in names:
        assert _answer(resolve_shipped, name) == _answer(built.resolve, name), name


def test_a_name_reads_only_the_family_files_it_needs(monkeypatch):
    read = []
    monkeypatch.setattr(catalog, "_compiled", lambda name: read.append(name) or json.loads(
        (Path(DATA_DIR) / COMPILED_DIR / name).read_text()))
    catalog._index.cache_clear()
    catalog._family_document.cache_clear()
    catalog._catalog_of.cache_clear()
    catalog.shipped_catalog.cache_clear()
    try:
        assert resolve_shipped("sm_90").arch.cc == "9.0"
        assert read == ["index.json", "hopper.json"]
        assert resolve_shipped("h100-sxm").product.name == "h100-sxm"
        assert read == ["index.json", "hopper.json"]
        assert resolve_shipped("volta").arch.cc == "7.0"
        assert read[-1] == "volta.json" and len(read) == 3
    finally:
        for cached in (catalog._index, catalog._family_document, catalog._catalog_of, catalog.shipped_catalog):
            cached.cache_clear()


def test_loading_a_command_parses_no_toml_and_builds_no_model():
    import subprocess
    import sys

    code = ("import sys; from tuneadvise.specs.resolve import resolve; resolve('sm_90'); resolve('h100-sxm'); "
            "print(sorted(m for m in sys.modules if re.match(r'(tomllib|tomli|pydantic)', m)))")
    out = subprocess.run([sys.executable, "-c", "import re; " + code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
