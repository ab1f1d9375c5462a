"""Load the spec files into a Catalog: the architectures and products of every
family file in specs/data (discovered, not listed), with their names.

This is the hot path of every command, so it parses no TOML and builds no
pydantic model: it reads the compiled form of the shipped files
(`specs/data/compiled/`, made and checked by `tuneadvise.specs.compile`: each
family's validated document as JSON, and an index of every name with the family
files its answer reads), so that resolving one name reads one family file. The
shipped files are validated by `tuneadvise.specs.models` when compiled and in
the test suite (and by `tuneadvise specs validate`), while files supplied by
users always go through those models before they reach the catalog (see
`models.load_user_spec`). The records are in `specs.records`, name resolution
in `specs.names`; their public names are re-exported here, where the rest of
the project imports them from.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

from .files import DATA_DIR, read_bounded, read_toml
from .names import (
    UnknownArchError,
    arch_aliases,
    normalize,
    parse_cc,
    product_aliases,
    suggest,
)
from .records import (
    ARCH_BEHAVIOUR_FIELDS,
    ARCH_INT_FIELDS,
    ARCH_OPTIONAL_FLAG_FIELDS,
    ARCH_OPTIONAL_INT_FIELDS,
    PRODUCT_NUMBER_FIELDS,
    Arch,
    FrozenMap,
    Product,
    Resolved,
    SourceDisagreement,
    build_arch,
    build_product,
)

__all__ = [
    "ARCH_BEHAVIOUR_FIELDS", "ARCH_INT_FIELDS", "ARCH_OPTIONAL_FLAG_FIELDS", "ARCH_OPTIONAL_INT_FIELDS", "DATA_DIR",
    "PRODUCT_NUMBER_FIELDS",
    "Arch", "Catalog", "SourceDisagreement", "FrozenMap", "Product", "Resolved", "UnknownArchError",
    "build_arch", "build_product", "catalog_with", "describe_source", "family_age", "family_files",
    "read_toml", "resolve_shipped", "shipped_catalog", "shipped_documents", "sources",
]

SOURCES_FILE = "sources.toml"
COMPILED_DIR = "compiled"  # under the data folder: the shipped spec files as JSON (specs/compile.py)
INDEX_FILE = "index.json"  # in COMPILED_DIR: name -> the family files its answer reads


def family_files(data_dir: str | None = None) -> list[str]:
    """Every family's spec file: each *.toml in the data folder but sources.toml and releases.toml.
    Discovered, not listed, so a new family is one new file."""
    data_dir = data_dir or DATA_DIR
    return sorted(os.path.join(data_dir, name) for name in os.listdir(data_dir)
                  if name.endswith(".toml") and name not in (SOURCES_FILE, "releases.toml"))


def family_age(doc: dict) -> tuple[int, int]:
    """A family's lowest compute capability: families are added oldest first (Fermi first)."""
    return min(tuple(int(x) for x in a["cc"].split(".")) for a in doc["arch"])


class Catalog:
    """All architectures and products, with name resolution."""

    def __init__(self):
        self.archs: dict[str, Arch] = {}
        self.products: dict[str, Product] = {}
        self.family_default: dict[str, tuple[str, str]] = {}
        self.family_covered_by_header: dict[str, bool] = {}
        self._aliases: dict[str, str] = {}  # lower-case name -> "cc:X.Y", "product:NAME" or "family:NAME"

    # -- building -----------------------------------------------------------
    @property
    def aliases(self) -> dict[str, str]:
        """Lower-case name -> "cc:X.Y", "product:NAME" or "family:NAME" (specs/compile.py indexes it)."""
        return dict(self._aliases)

    def add_family(self, doc: dict, origin: str = "shipped") -> list[Arch]:
        family = doc["family"]
        defaults = doc.get("defaults", {})
        added = []
        for entry in doc.get("arch", []):
            base = self.archs.get(entry["cc"]) if origin != "shipped" else None
            arch = build_arch(family, defaults, entry, origin, base)
            self.archs[arch.cc] = arch
            for name in arch_aliases(arch):
                self._aliases[name] = f"cc:{arch.cc}"
            added.append(arch)
        for entry in doc.get("product", []):
            product = build_product(entry)
            self.products[product.name] = product
            for name in product_aliases(product):
                self._aliases[name] = f"product:{product.name}"
        if "default_cc" in doc:
            self.family_default[family] = (doc["default_cc"], doc.get("default_note", ""))
            self._aliases.setdefault(family, f"family:{family}")
        self.family_covered_by_header[family] = bool(doc.get("cuda_occupancy_h", False))
        return added

    # -- queries ------------------------------------------------------------
    def sorted_archs(self) -> list[Arch]:
        return sorted(self.archs.values(), key=lambda a: (a.major, a.minor))

    def resolve(self, text: str) -> Resolved:
        raw = str(text).strip()
        key = normalize(raw)
        if key in self.archs:
            return Resolved(self.archs[key])
        target = self._aliases.get(key)
        if target is None:
            cc = parse_cc(key)
            if cc is not None and cc in self.archs:
                return Resolved(self.archs[cc])
            raise UnknownArchError(raw, self.suggest(key))
        kind, name = target.split(":", 1)
        if kind == "cc":
            arch = self.archs[name]
            if arch.formerly and parse_cc(key) in arch.formerly:
                return Resolved(arch, None, f"'{raw}' is {arch.sm}: CUDA 13 renamed compute capability "
                                            f"{parse_cc(key)} to {arch.cc}")
            return Resolved(arch)
        if kind == "product":
            product = self.products[name]
            return Resolved(self.archs[product.cc], product)
        cc, note = self.family_default[name]
        return Resolved(self.archs[cc], None, f"'{raw}' means compute capability {cc}: {note}")

    def suggest(self, key: str) -> list[str]:
        return suggest(key, [*self._aliases, *(a.sm for a in self.archs.values()), *self.archs])


@lru_cache(maxsize=1)
def _index() -> dict:
    return _compiled(INDEX_FILE)


@lru_cache(maxsize=64)
def _family_document(stem: str) -> dict:
    return _compiled(f"{stem}.json")


def _compiled(name: str) -> dict:
    return json.loads(read_bounded(os.path.join(DATA_DIR, COMPILED_DIR, name), what="spec file"))


def shipped_documents() -> list[dict]:
    """Every shipped family's validated document, oldest family first."""
    return [_family_document(stem) for stem in _index()["families"]]


@lru_cache(maxsize=1)
def shipped_catalog() -> Catalog:
    return _catalog_of(tuple(_index()["families"]))


@lru_cache(maxsize=64)
def _catalog_of(stems: tuple[str, ...]) -> Catalog:
    """A catalog of these family files alone, added oldest first as the full one adds them."""
    catalog = Catalog()
    for stem in stems:
        catalog.add_family(_family_document(stem))
    return catalog


def resolve_shipped(text: str) -> Resolved:
    """shipped_catalog().resolve(text), reading only the family files the answer needs (the
    index names them: tests/specs/test_compiled_specs.py holds every name's answer to the full
    catalog's). A name the index does not know goes to the full catalog, for its suggestions."""
    index, key = _index(), normalize(str(text).strip())
    stems = index["cc"].get(key) or index["aliases"].get(key) or index["cc"].get(parse_cc(key) or "")
    catalog = _catalog_of(tuple(stems)) if stems else shipped_catalog()
    return catalog.resolve(text)


@lru_cache(maxsize=1)
def sources() -> dict:
    return read_toml(os.path.join(DATA_DIR, SOURCES_FILE))


def describe_source(ref: str) -> str:
    """'volta-guide#4.1.3' -> 'Volta Tuning Guide, release 13.0, 4.1.3'."""
    ident, _, section = ref.partition("#")
    entry = sources().get(ident)
    if entry is None:
        return ref
    return f"{entry['title']}, {section}" if section else entry["title"]


def catalog_with(doc: dict, origin: str) -> tuple[Catalog, list[Arch]]:
    """A fresh catalog of the shipped families plus one more family document
    (a user's spec file, or the local device); its entries replace shipped ones."""
    catalog = Catalog()
    for shipped in shipped_documents():
        catalog.add_family(shipped)
    added = catalog.add_family(doc, origin=origin)
    return catalog, added
