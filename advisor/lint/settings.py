"""What lint needs of a configuration before (or without) loading one: which
paths are config files, where a project's config is, architecture names, and
the settings in force when there is no config at all.

The config model (advisor/lint/config.py) is pydantic, whose import alone costs more
than linting a small log; a run with no config file never imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ...specs.names import UnknownArchError
from ...specs.resolve import resolve

CONFIG_SUFFIXES = (".toml", ".yaml", ".yml", ".json")


def is_config_path(path: str | Path) -> bool:
    return Path(path).suffix.lower() in CONFIG_SUFFIXES


def find_project_config(start: Path | None = None) -> Path | None:
    """tuneadvise.toml, or a pyproject.toml with [tool.tuneadvise], in the directory or its parents."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "tuneadvise.toml"
        if candidate.is_file():
            return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _mentions_tool_table(pyproject):
            return pyproject
        if (directory / ".git").exists():
            break
    return None


def _mentions_tool_table(pyproject: Path) -> bool:
    from ...specs.files import read_bounded

    try:
        return b"[tool.tuneadvise" in read_bounded(pyproject)
    except OSError:  # unreadable or larger than any pyproject: not this tool's
        return False


def normalise_archs(value) -> list[str]:
    """Architecture names (sm_90, hopper, 9.0, products...) -> sm_XX, in order; ValueError names the bad one."""
    if not isinstance(value, (str, list, tuple)):
        raise ValueError("expected an architecture name such as sm_90, hopper or 9.0, or a list of them")
    items = [value] if isinstance(value, str) else list(value)
    normalised = []
    for item in items:
        if not isinstance(item, (str, int, float)) or isinstance(item, bool) or len(str(item)) > 40:
            raise ValueError("expected an architecture name such as sm_90, hopper or 9.0")
        try:
            normalised.append(resolve(str(item)).arch.sm)
        except UnknownArchError as exc:
            raise ValueError(exc.detail) from None
    return normalised


def product_sm_counts(value) -> dict[str, int]:
    """sm_XX -> the SM count of the product named for it (h100-sxm: sm_90 -> 132), for the grid
    rules; architectures named by family or compute capability have none. ValueError when two
    products of one architecture with different SM counts are named (the count would be a guess)."""
    items = [value] if isinstance(value, str) else list(value or ())
    counts: dict[str, int] = {}
    named: dict[str, str] = {}
    for item in items:
        resolved = resolve(str(item))  # normalise_archs validated the names
        sms = resolved.product.get("sm_count") if resolved.product else None
        if sms is None:
            continue
        sm = resolved.arch.sm
        if counts.get(sm, sms) != sms:
            raise ValueError(f"{named[sm]} and {item} are both {sm} with different SM counts ({counts[sm]}, {sms}): "
                             "lint them in separate runs")
        counts[sm], named[sm] = sms, str(item)
    return counts


class NoConfig(NamedTuple):
    """The settings with no config file, as an immutable tuple: the one home of a lint run's
    defaults, which LintConfig's fields take (a list's default is the empty list; the test in
    tests/lint/test_lint.py holds the two equal field for field)."""

    schema_version: None = None
    arch: tuple = ()
    inputs: tuple = ()
    select: tuple = ()
    ignore: tuple = ()
    fail_on: str = "error"
    min_occupancy: None = None
    min_achieved_occupancy: None = None
    block_size: None = None
    sm_count: None = None
    kernels: tuple = ()
    budgets: tuple = ()

    def product_sm_counts(self) -> dict[str, int]:
        return {}

    def kernel_index(self, names: tuple[str, ...], arch: str) -> None:
        return None

    def budget_index(self, names: tuple[str, ...], arch: str) -> None:
        return None


NO_CONFIG = NoConfig()
