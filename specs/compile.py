"""The shipped spec files compiled once into the form every command loads: each family file as
the JSON of its validated document (`specs/data/compiled/<family>.json`), and an index of every
name users type with the family files its answer reads (`compiled/index.json`), so that
resolving `sm_90` reads one small JSON file and never parses TOML or builds a pydantic model.

The compiled files are generated from the TOML files and committed (a regular install ships
them as package data); tests/specs/test_compiled_specs.py fails when they are stale. After editing or
adding a spec file, regenerate them:

    python -m tuneadvise.specs.compile          # write specs/data/compiled/
    python -m tuneadvise.specs.compile --check  # exit 1, naming the stale files, if any
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .catalog import COMPILED_DIR, INDEX_FILE, Catalog, family_age, family_files
from .models import validate_family_document


def _json(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def compiled_files(data_dir: str) -> dict[str, str]:
    """File name under compiled/ -> its text, from the spec files of `data_dir` (validated by the
    pydantic models on the way: a file that does not validate is not compiled)."""
    documents = {Path(path).stem: validate_family_document(Path(path)) for path in family_files(data_dir)}
    ordered = sorted(documents.items(), key=lambda item: family_age(item[1]))
    files = {f"{stem}.json": _json(doc) for stem, doc in ordered}
    files[INDEX_FILE] = _json(_index(ordered))
    return files


def _index(ordered: list[tuple[str, dict]]) -> dict:
    """Every key the catalog resolves (compute capabilities and aliases, normalized) -> the family
    files, oldest first, that the full catalog reads to answer it: the family that defines the key,
    and for a product the family of its compute capability."""
    catalog, family_of_cc, family_of = Catalog(), {}, {}
    for stem, doc in ordered:
        catalog.add_family(doc)
        family_of_cc.update({entry["cc"]: stem for entry in doc.get("arch", [])})
        family_of[doc["family"]] = stem
    order = [stem for stem, _ in ordered]

    def needs(target: str) -> list[str]:
        kind, name = target.split(":", 1)
        if kind == "cc":
            stems = {family_of_cc[name]}
        elif kind == "product":
            product = catalog.products[name]
            stems = {family_of[_family_of_product(ordered, name)], family_of_cc[product.cc]}
        else:
            stems = {family_of[name], family_of_cc[catalog.family_default[name][0]]}
        return sorted(stems, key=order.index)

    keys = {cc: needs(f"cc:{cc}") for cc in catalog.archs}
    aliases = {key: needs(target) for key, target in catalog.aliases.items()}
    return {"families": order, "cc": keys, "aliases": aliases}


def _family_of_product(ordered, name: str) -> str:
    """The family whose file lists product `name` last (a later file's entry replaces an earlier one)."""
    return [doc["family"] for _, doc in ordered if any(p["name"] == name for p in doc.get("product", []))][-1]


def stale_files(data_dir: str) -> list[str]:
    """The compiled files that differ from what the spec files compile to (or are missing or extra)."""
    wanted = compiled_files(data_dir)
    folder = os.path.join(data_dir, COMPILED_DIR)
    present = {name for name in os.listdir(folder) if name.endswith(".json")} if os.path.isdir(folder) else set()
    stale = [name for name, text in wanted.items()
             if name not in present or Path(folder, name).read_text(encoding="utf-8") != text]
    return sorted(stale + sorted(present - set(wanted)))


def write_compiled(data_dir: str) -> list[str]:
    """Write the compiled files of `data_dir` (removing ones no spec file makes); the names written."""
    folder = Path(data_dir, COMPILED_DIR)
    folder.mkdir(exist_ok=True)
    wanted = compiled_files(data_dir)
    for old in folder.glob("*.json"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(wanted)


def main(argv: list[str] | None = None) -> int:
    from .files import DATA_DIR

    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        stale = stale_files(DATA_DIR)
        for name in stale:
            print(f"stale: {os.path.join(DATA_DIR, COMPILED_DIR, name)}")
        return 1 if stale else 0
    if args:
        print("usage: python -m tuneadvise.specs.compile [--check]", file=sys.stderr)
        return 2
    for name in write_compiled(DATA_DIR):
        print(os.path.join(DATA_DIR, COMPILED_DIR, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
