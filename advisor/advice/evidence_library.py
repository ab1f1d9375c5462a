"""Library kernels: cuBLAS/cuBLASLt, cuDNN, CUTLASS/xmma, cuFFT, NCCL, flash-attention,
PyTorch's at::native, Thrust/CUB and others whose code their vendor builds. Their registers and
launch bounds are chosen on purpose (NVIDIA's xmma GEMMs run at 12.5% occupancy by design) and
no user can rebuild them with a cap, so tuneadvise states their facts and proposes no register or
launch-bounds change. The name patterns are data (data/library_kernels.toml), validated when
read: a library with no name or no patterns, or a pattern that is not a regular expression, is
refused with the entry named."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .verdict import Evidence

DATA = Path(__file__).with_name("data") / "library_kernels.toml"


class LibraryDataError(ValueError):
    """The library name patterns are malformed."""


def parse_library(text: str, where: str = "library_kernels.toml") -> tuple[tuple[str, re.Pattern], ...]:
    """(library, compiled pattern) of each pattern, in the file's order."""
    from ...specs.files import tomllib

    toml = tomllib()
    try:
        data = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise LibraryDataError(f"{where}: not TOML ({exc})") from None
    if set(data) != {"library"} or not isinstance(data["library"], list):
        raise LibraryDataError(f"{where}: expected [[library]] entries only")
    found = []
    for index, entry in enumerate(data["library"], 1):
        name, patterns = entry.get("name") if isinstance(entry, dict) else None, entry.get("patterns", None) \
            if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or set(entry) != {"name", "patterns"}:
            raise LibraryDataError(f"{where}: library {index}: needs exactly a non-empty name and patterns")
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) and p for p in patterns):
            raise LibraryDataError(f"{where}: library '{name}': patterns must be a non-empty list of strings")
        for pattern in patterns:
            try:
                found.append((name, re.compile(pattern)))
            except re.error as exc:
                raise LibraryDataError(f"{where}: library '{name}': pattern {pattern!r}: {exc}") from None
    return tuple(found)


@lru_cache(maxsize=1)
def patterns() -> tuple[tuple[str, re.Pattern], ...]:
    return parse_library(DATA.read_text(encoding="utf-8"), DATA.name)


@lru_cache(maxsize=4096)
def library_of(kernel_name: str) -> str | None:
    """The library whose kernel this is, by name; None for a kernel the user builds."""
    name = kernel_name[:4096]
    return next((library for library, pattern in patterns() if pattern.search(name)), None)


def library(kernel_name: str) -> Evidence | None:
    found = library_of(kernel_name)
    if found is None:
        return None
    return Evidence("library", {"library": found}, "no_gain",
                    f"a {found} kernel: its vendor chose its registers, and it cannot be rebuilt with a cap")
