"""Which release of NVIDIA's cuda_occupancy.h the engine is exact to, and how an older
release differs, as data (specs/data/releases.toml).

The shipped spec files hold the values of DEFAULT_RELEASE. An older release is the same
architectures with a few values replaced (a field per listed compute capability), each
difference citing the header function it comes from; `under_release` applies them, so the
engine itself never asks which release it follows.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import NamedTuple

from .errors import InputError, quoted
from .files import DATA_DIR, read_toml
from .records import DEFAULT_RELEASE, FrozenMap

RELEASES_FILE = "releases.toml"


class UnknownReleaseError(InputError):
    """A release (`cuda`, --cuda) naming no release, or an architecture the release's header does not know."""

    def __init__(self, message: str):
        super().__init__("cuda", message)


class Difference(NamedTuple):
    field: str
    ccs: tuple[str, ...]
    value: int | bool
    function: str  # the header function that answers differently
    why: str


class Release(NamedTuple):
    cuda: str
    wheel: str  # the PyPI requirement whose wheel ships the header
    member: str  # the header's path inside that wheel
    source: str  # its ID in sources.toml
    unknown: tuple[str, ...] = ()  # compute capabilities the header refuses
    known_as: dict = {}  # compute capability -> the number this header knows it by
    differences: tuple[Difference, ...] = ()


@lru_cache(maxsize=1)
def releases() -> dict[str, Release]:
    """Every release, the default first."""
    doc = read_toml(os.path.join(DATA_DIR, RELEASES_FILE))
    out = {}
    for entry in doc["release"]:
        out[entry["cuda"]] = Release(
            cuda=entry["cuda"], wheel=entry["wheel"], member=entry["member"], source=entry["source"],
            unknown=tuple(entry.get("unknown", ())), known_as=dict(entry.get("known_as", {})),
            differences=tuple(Difference(d["field"], tuple(d["ccs"]), d["value"], d["function"], d["why"])
                              for d in entry.get("difference", ())))
    return out


def release(cuda: str | None) -> Release:
    """--cuda's value (None: the default) -> Release, or UnknownReleaseError naming those known."""
    known = releases()
    key = DEFAULT_RELEASE if cuda is None else str(cuda).strip()
    if key not in known:
        raise UnknownReleaseError(f"unknown cuda_occupancy.h release {quoted(str(cuda), 32)} "
                                  f"(known: {', '.join(known)})")
    return known[key]


def under_release(arch, cuda: str | None):
    """`arch` as the `cuda` release of the header computes it (the default release: unchanged)."""
    chosen = release(cuda)
    if chosen.cuda == arch.cuda_release:
        return arch
    if arch.cc in chosen.unknown:
        raise UnknownReleaseError(f"CUDA {chosen.cuda}'s cuda_occupancy.h does not know compute capability "
                                  f"{arch.cc} ({arch.sm}); use cuda {DEFAULT_RELEASE}")
    changes, sources = {}, dict(arch.sources)
    for difference in chosen.differences:
        if arch.cc in difference.ccs:
            changes[difference.field] = difference.value
            sources[difference.field] = f"{chosen.source}#{difference.function}"
    return arch._replace(cuda_release=chosen.cuda, sources=FrozenMap(sources), **changes)


def resolved_under(resolved, cuda: str | None):
    """A catalog's Resolved (--arch) with its architecture as the `cuda` release computes it."""
    if cuda is None:
        return resolved
    return resolved._replace(arch=under_release(resolved.arch, cuda))


def differences_of(arch) -> list[dict]:
    """How the other releases answer for `arch`: releases (newest first), field, value there,
    value here, function, why; releases that answer alike share one entry."""
    grouped: dict[tuple, dict] = {}
    for other in releases().values():
        if other.cuda == arch.cuda_release:
            continue
        for entry in _answers_of(other, arch):
            key = (entry["field"], entry["value"], entry["function"], entry["why"])
            grouped.setdefault(key, {"releases": [], **entry})["releases"].append(other.cuda)
    return [{"releases": entry.pop("releases"), **entry} for entry in grouped.values()]


def _answers_of(other: Release, arch) -> list[dict]:
    """How the `other` release answers differently for `arch`, entry by entry."""
    note = {"field": None, "function": None, "value": None, "value_here": None}
    if arch.cc in other.unknown:
        return [{**note, "why": f"cuda_occupancy.h does not know compute capability {arch.cc}."}]
    out = []
    if arch.cc in other.known_as:
        out.append({**note, "why": f"cuda_occupancy.h knows compute capability {arch.cc} as {other.known_as[arch.cc]}."})
    for d in other.differences:
        here = getattr(arch, d.field)
        if arch.cc in d.ccs and here != d.value:
            out.append({"field": d.field, "function": d.function, "value": d.value, "value_here": here, "why": d.why})
    return out
