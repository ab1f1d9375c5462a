"""Load the shipped spec files into light, immutable records and resolve names.

This is the hot path of every command, so it avoids pydantic: the shipped
files are validated by `tuneadvise.specs.models` in the test suite (and by
`tuneadvise specs validate`), while files supplied by users always go through
those models before they reach the catalog (see `load_user_spec`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

# os.path rather than pathlib: pathlib (with urllib.parse) costs ~4 ms of every start-up.
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

def family_files(data_dir: str | None = None) -> list[str]:
    """Every family's spec file: each *.toml in the data folder but sources.toml. Discovered,
    not listed, so a new family is one new file."""
    data_dir = data_dir or DATA_DIR
    return sorted(os.path.join(data_dir, name) for name in os.listdir(data_dir)
                  if name.endswith(".toml") and name != "sources.toml")


def _oldest_first(docs: list[dict]) -> list[dict]:
    """Families in order of their lowest compute capability (Fermi first), as the data says."""
    return sorted(docs, key=lambda doc: min(tuple(int(x) for x in a["cc"].split(".")) for a in doc["arch"]))

# Fields every architecture must define (after family defaults are applied).
ARCH_INT_FIELDS = (
    "warp_size",
    "max_threads_per_block",
    "max_warps_per_sm",
    "max_blocks_per_sm",
    "registers_per_sm",
    "registers_per_block",
    "max_registers_per_thread",
    "register_allocation_unit",
    "warp_allocation_granularity",
    "shared_mem_per_sm",
    "shared_mem_per_block",
    "shared_mem_per_block_optin",
    "reserved_shared_mem_per_block",
    "shared_mem_allocation_unit",
)
# Fields only some architectures have.
ARCH_OPTIONAL_INT_FIELDS = (
    "register_launch_check_granularity",
    "barriers_per_block_slot",
    "max_cluster_size_portable",
    "max_cluster_size_nonportable",
    "l1_shared_total",
)
# How cuda_occupancy.h behaves per compute capability, as data: the header's register cap per
# thread, whether the opt-in shared-memory limit exists, whether the reserved shared memory
# counts in the per-block limit. A user's spec file may leave them out: they are then those of
# the shipped architecture with the same compute capability.
ARCH_BEHAVIOUR_FIELDS = (
    "header_max_registers_per_thread",
    "shared_mem_opt_in",
    "reserved_shared_mem_in_block_limit",
)
PRODUCT_NUMBER_FIELDS = (
    "sm_count",
    "base_clock_mhz",
    "boost_clock_mhz",
    "memory_bandwidth_gbs",
    "measured_copy_bandwidth_gbs",
    "fp64_tflops",
    "fp32_tflops",
    "fp16_tflops",
    "fp16_tensor_tflops",
    "l2_bytes",
)


class UnknownArchError(ValueError):
    """An --arch value that names no architecture or product."""

    def __init__(self, text: str, suggestions: list[str]):
        self.text = text
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"--arch: unknown architecture '{text}'{hint} "
            "(accepted: family names, sm_XX, compute_XX, X.Y, product names; see 'tuneadvise specs')"
        )


class FrozenMap(Mapping):
    """A read-only mapping that hashes by value, so that an Arch holding one can key a cache
    (functools.lru_cache) by what it is rather than by which object it is."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items=()):
        self._items = dict(items)
        self._hash = hash(frozenset(self._items.items()))  # computed once: the values never change

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


class Disagreement(NamedTuple):
    field: str
    values: tuple[tuple[float, str], ...]  # (value, source)
    used: float
    why: str


class Arch(NamedTuple):
    """One compute capability's limits. Every number has an entry in `sources`."""

    cc: str
    major: int
    minor: int
    family: str
    names: tuple[str, ...]
    warp_size: int
    max_threads_per_block: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    warp_allocation_granularity: int
    shared_mem_per_sm: int
    shared_mem_per_block: int
    shared_mem_per_block_optin: int
    reserved_shared_mem_per_block: int
    shared_mem_allocation_unit: int
    shared_mem_model: str  # "carveout" (7.0+), "cache-config" (2.x/3.x), "fixed" (5.x/6.x)
    shared_mem_configs: tuple[int, ...]
    header_max_registers_per_thread: int  # cudaOccRegAllocationMaxPerThread (255 up to 6.x, 256 from 7.0)
    shared_mem_opt_in: bool  # cudaFuncAttributeMaxDynamicSharedMemorySize can raise the per-block limit (7.0+)
    reserved_shared_mem_in_block_limit: bool  # cudaOccSMemPerBlock adds the reserved bytes (8.0+)
    register_launch_check_granularity: int | None = None
    barriers_per_block_slot: int | None = None
    max_cluster_size_portable: int | None = None
    max_cluster_size_nonportable: int | None = None
    l1_shared_total: int | None = None
    sources: FrozenMap = FrozenMap()  # field -> source reference
    disagreements: tuple[Disagreement, ...] = ()
    origin: str = "shipped"  # "shipped", or the path of a user spec file

    @property
    def sm(self) -> str:
        """Normalized target name, e.g. 'sm_90'."""
        return f"sm_{self.major}{self.minor}"

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size


class Product(NamedTuple):
    name: str
    title: str
    cc: str
    names: tuple[str, ...]
    values: dict  # field -> number
    sources: dict = MappingProxyType({})  # field -> source reference (read-only default)
    disagreements: tuple[Disagreement, ...] = ()

    def get(self, key: str):
        return self.values.get(key)


class Resolved(NamedTuple):
    """What an --arch value resolved to, and how."""

    arch: Arch
    product: Product | None = None
    note: str | None = None  # e.g. why a family name picked this compute capability


def _value(entry):
    return entry["value"] if isinstance(entry, dict) else entry


def _disagreements(raw: list, values_in_use: dict) -> tuple[Disagreement, ...]:
    """The value in use is the record's own field value (the models check it is one of those listed)."""
    return tuple(
        Disagreement(
            field=d["field"],
            values=tuple((v["value"], v["source"]) for v in d["values"]),
            used=values_in_use.get(d["field"]),
            why=d["why"],
        )
        for d in raw
    )


def build_arch(family: str, defaults: dict, entry: dict, origin: str = "shipped", base: Arch | None = None) -> Arch:
    """`base`: the shipped architecture of the same compute capability, whose behaviour fields a
    user's file may leave out."""
    merged = {**defaults, **{k: v for k, v in entry.items() if k not in ("cc", "names", "disagreement")}}
    major, minor = (int(x) for x in entry["cc"].split("."))
    kwargs = {}
    sources = {}
    for key in ARCH_INT_FIELDS + ARCH_OPTIONAL_INT_FIELDS + ARCH_BEHAVIOUR_FIELDS + ("shared_mem_configs",):
        if key in merged:
            kwargs[key] = _value(merged[key])
            if isinstance(merged[key], dict):
                sources[key] = merged[key]["source"]
        elif key in ARCH_BEHAVIOUR_FIELDS:
            if base is None:
                raise ValueError(f"{entry['cc']}: {key} missing (no shipped architecture {entry['cc']} to take it from)")
            kwargs[key] = getattr(base, key)
            sources[key] = base.sources.get(key, "user")
    disagreements = _disagreements(entry.get("disagreement", []), kwargs)
    return Arch(
        cc=entry["cc"],
        major=major,
        minor=minor,
        family=family,
        names=tuple(entry.get("names", ())),
        shared_mem_model=merged.get("shared_mem_model", "fixed"),
        shared_mem_configs=tuple(kwargs.pop("shared_mem_configs", ()) or ()),
        sources=FrozenMap(sources),
        disagreements=disagreements,
        origin=origin,
        **kwargs,
    )


def build_product(entry: dict) -> Product:
    values, sources = {}, {}
    for key in PRODUCT_NUMBER_FIELDS:
        if key in entry:
            values[key] = _value(entry[key])
            sources[key] = entry[key]["source"] if isinstance(entry[key], dict) else "user"
    return Product(
        name=entry["name"],
        title=entry.get("title", entry["name"]),
        cc=entry["cc"],
        names=tuple(entry.get("names", ())),
        values=values,
        sources=sources,
        disagreements=_disagreements(entry.get("disagreement", []), values),
    )


class Catalog:
    """All architectures and products, with name resolution."""

    def __init__(self):
        self.archs: dict[str, Arch] = {}
        self.products: dict[str, Product] = {}
        self.family_default: dict[str, tuple[str, str]] = {}
        self.family_covered_by_header: dict[str, bool] = {}
        self._aliases: dict[str, str] = {}  # lower-case name -> "cc:X.Y" or "product:NAME"

    # -- building -----------------------------------------------------------
    def add_family(self, doc: dict, origin: str = "shipped") -> list[Arch]:
        family = doc["family"]
        defaults = doc.get("defaults", {})
        added = []
        for entry in doc.get("arch", []):
            base = self.archs.get(entry["cc"]) if origin != "shipped" else None
            arch = build_arch(family, defaults, entry, origin, base)
            self.archs[arch.cc] = arch
            # The usual spellings, so that resolving them needs no regular expression.
            for name in (*arch.names, arch.sm, f"compute_{arch.major}{arch.minor}"):
                self._aliases[name.lower()] = f"cc:{arch.cc}"
            added.append(arch)
        for entry in doc.get("product", []):
            product = build_product(entry)
            self.products[product.name] = product
            for name in (product.name, *product.names):
                self._aliases[name.lower()] = f"product:{product.name}"
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
        key = raw.lower().replace(" ", "-")
        if key in self.archs:
            return Resolved(self.archs[key])
        target = self._aliases.get(key)
        if target is None:
            cc = _parse_cc(key)
            if cc is not None and cc in self.archs:
                return Resolved(self.archs[cc])
        if target:
            kind, name = target.split(":", 1)
            if kind == "cc":
                return Resolved(self.archs[name])
            if kind == "product":
                product = self.products[name]
                return Resolved(self.archs[product.cc], product)
            cc, note = self.family_default[name]
            return Resolved(self.archs[cc], None, f"'{raw}' means compute capability {cc}: {note}")
        raise UnknownArchError(raw, self.suggest(key))

    def suggest(self, key: str) -> list[str]:
        candidates = set(self._aliases) | {a.sm for a in self.archs.values()} | set(self.archs)
        import difflib  # only on the error path

        return difflib.get_close_matches(key, sorted(candidates), n=3, cutoff=0.5)


_CC_PATTERNS = (
    r"^(?:sm|compute|arch)[_=-]?(\d)(\d)[af]?$",
    r"^(?:sm|compute|arch)[_=-]?(1\d)(\d)[af]?$",
    r"^(\d{1,2})\.(\d)[af]?$",
    r"^(\d)(\d)$",
    r"^(1\d)(\d)$",
)


def _parse_cc(key: str) -> str | None:
    """'sm_90a', 'compute_70', '7.0', '70', '120' -> 'X.Y' (re caches the compiled patterns)."""
    for pattern in _CC_PATTERNS:
        match = re.match(pattern, key)
        if match:
            return f"{int(match.group(1))}.{int(match.group(2))}"
    return None


def read_toml(path: str | os.PathLike) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    with open(path, "rb") as handle:
        return tomllib.load(handle)


def _cache_dir() -> str | None:
    if os.environ.get("TUNEADVISE_NO_CACHE"):
        return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "tuneadvise")


def read_toml_cached(paths: list) -> list[dict]:
    """Parse data files, reusing a marshal copy keyed by their contents.

    Parsing the spec files costs about 10 ms of every command's start-up (measured: 79 ms
    with the copy, 88 ms without, against 48 ms for a minimal click command); marshal
    reads the same dictionaries back in well under a millisecond. The copy is named by a
    hash of the files' bytes and carries a hash of its own payload, checked before it is
    read, so an edited or corrupt copy is never used; writing one removes the others.
    It is an optimisation only: any failure falls back to parsing, and
    TUNEADVISE_NO_CACHE=1 turns it off.
    """
    import hashlib
    import marshal

    paths = [os.fspath(p) for p in paths]
    contents = []
    for p in paths:
        with open(p, "rb") as handle:
            contents.append(handle.read())
    cache = _cache_dir()
    target = None
    if cache is not None:
        key = hashlib.sha256(repr((sys.version_info[:2], [os.path.basename(p) for p in paths], contents)).encode())
        target = os.path.join(cache, f"data-{key.hexdigest()[:24]}.marshal")
        try:
            with open(target, "rb") as handle:
                stored = handle.read(1 << 24)  # far above any real copy: a huge file is not ours
            digest, payload = stored[:32], stored[32:]
            if hashlib.sha256(payload).digest() == digest:
                return marshal.loads(payload)
        except (OSError, EOFError, ValueError, TypeError, MemoryError):
            pass
    docs = [_parse_toml(text, p) for text, p in zip(contents, paths)]
    if target is not None:
        try:
            os.makedirs(cache, exist_ok=True)
            payload = marshal.dumps(docs)
            write_atomically(target, hashlib.sha256(payload).digest() + payload)
            for name in os.listdir(cache):  # older copies: spec files that changed since
                if name.startswith("data-") and name.endswith(".marshal") and name != os.path.basename(target):
                    os.unlink(os.path.join(cache, name))
        except (OSError, ValueError):
            pass
    return docs


def _parse_toml(data: bytes, path: str) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    return tomllib.loads(data.decode("utf-8"))


def write_atomically(path: str | os.PathLike, data) -> None:
    """Write `data` (bytes, or an iterable of bytes chunks) beside the target and
    rename it over: readers never see a partial file, and a failed write leaves
    nothing behind."""
    path = os.fspath(path)
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        with open(partial, "wb", buffering=1 << 20) as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


@lru_cache(maxsize=1)
def shipped_catalog() -> Catalog:
    catalog = Catalog()
    for doc in _oldest_first(read_toml_cached(family_files())):
        catalog.add_family(doc)
    return catalog


@lru_cache(maxsize=1)
def sources() -> dict:
    return read_toml(os.path.join(DATA_DIR, "sources.toml"))


def describe_source(ref: str) -> str:
    """'volta-guide#4.1.3' -> 'Volta Tuning Guide, release 13.0, 4.1.3'."""
    ident, _, section = ref.partition("#")
    entry = sources().get(ident)
    if entry is None:
        return ref
    return f"{entry['title']}, {section}" if section else entry["title"]


def load_user_spec(path: str | os.PathLike) -> tuple[Catalog, list[Arch]]:
    """Validate a user's spec file with the pydantic models and add it to a catalog copy."""
    from pathlib import Path

    from tuneadvise.specs.models import SpecFileError, validate_family_document  # pydantic: only on this path

    path = Path(path)
    try:
        return catalog_with(validate_family_document(path), origin=str(path))
    except ValueError as exc:  # a behaviour field left out for a compute capability nothing ships
        raise SpecFileError(f"--spec-file: {path}: {exc}") from None


def catalog_with(doc: dict, origin: str) -> tuple[Catalog, list[Arch]]:
    """A fresh catalog of the shipped families plus one more family document
    (a user's spec file, or the local device); its entries replace shipped ones."""
    catalog = Catalog()
    for shipped in _oldest_first(read_toml_cached(family_files())):
        catalog.add_family(shipped)
    added = catalog.add_family(doc, origin=origin)
    return catalog, added
