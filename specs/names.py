"""What users type for --arch, and what it means: the spellings each record
answers to, compute-capability forms (sm_90a, compute_70, 7.0, 70, 120), family
names, and suggestions for a name that matches nothing."""

from __future__ import annotations

import re

from .errors import InputError, quoted
from .records import Arch, Product


class UnknownArchError(InputError):
    """An architecture name (`arch`, --arch) that names no architecture or product."""

    def __init__(self, text: str, suggestions: list[str]):
        self.text = text
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__("arch", f"unknown architecture {quoted(text)}{hint} "
                                 "(accepted: family names, sm_XX, compute_XX, X.Y, product names; see 'tuneadvise specs')")


class NativeNotTaken(UnknownArchError):
    """'native' where nothing measures this machine's GPU (lint, frontier, a batch line): said
    as such, not as an unknown name with a guess at a product."""

    def __init__(self, text: str):
        self.text, self.suggestions = text, []
        InputError.__init__(self, "arch", f"{quoted(text)} (this machine's GPU) is not taken here; name its "
                                          "architecture (sm_90) or product (h100-sxm)")


def arch_aliases(arch: Arch) -> tuple[str, ...]:
    """The usual spellings of one compute capability, so that resolving them needs no pattern."""
    old = [spelling for cc in arch.formerly for spelling in former_spellings(cc)]
    return tuple(name.lower() for name in (*arch.names, arch.sm, f"compute_{arch.major}{arch.minor}", *old))


def former_spellings(cc: str) -> tuple[str, ...]:
    """The names of a compute capability NVIDIA renamed: '10.1' -> sm_101, compute_101, 10.1, 101."""
    major, minor = cc.split(".")
    return (f"sm_{major}{minor}", f"compute_{major}{minor}", cc, f"{major}{minor}")


def product_aliases(product: Product) -> tuple[str, ...]:
    return tuple(name.lower() for name in (product.name, *product.names))


def normalize(text: str) -> str:
    """'A100 SXM4' -> 'a100-sxm4': the key aliases are held under."""
    return str(text).strip().lower().replace(" ", "-")


# (?a): digits 0-9 only; `sm_９０` (full-width) is no architecture's name.
_CC_PATTERNS = (
    r"(?a)^(?:sm|compute|arch)[_=-]?(\d)(\d)[af]?$",
    r"(?a)^(?:sm|compute|arch)[_=-]?(1\d)(\d)[af]?$",
    r"(?a)^(\d{1,2})\.(\d)[af]?$",
    r"(?a)^(\d)(\d)$",
    r"(?a)^(1\d)(\d)$",
)


def parse_cc(key: str) -> str | None:
    """'sm_90a', 'compute_70', '7.0', '70', '120' -> 'X.Y' (re caches the compiled patterns)."""
    for pattern in _CC_PATTERNS:
        match = re.match(pattern, key)
        if match:
            return f"{int(match.group(1))}.{int(match.group(2))}"
    return None


def suggest(key: str, candidates) -> list[str]:
    """Close names with the same numbers as `key`: in a GPU's name a number is the model
    (l40s is not l4, rtx4080 not rtx4090, sm_91 not sm_90), so a near spelling with other
    numbers names another part, never the one meant."""
    import difflib  # only on the error path

    numbers = re.findall(r"\d+", key)
    alike = sorted({name for name in candidates if re.findall(r"\d+", name) == numbers})
    return difflib.get_close_matches(key, alike, n=3, cutoff=0.5)
