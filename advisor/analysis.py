"""One configuration (as a dict of user values) through engine and rules.

Used by the rule examples, batch input and lint configs alike, so the three
accept exactly the same keys with the same validation.
"""

from __future__ import annotations

from tuneadvise.advisor.engine.occupancy import Occupancy, occupancy
from tuneadvise.advisor.inputs import KERNEL_KEYS, InputError, kernel_from_mapping, parse_int

CONTEXT_KEYS = ("spill_bytes", "grid_size", "sm_count", "cluster_size", "compiled_for")
ALL_KEYS = ("arch",) + KERNEL_KEYS + CONTEXT_KEYS


def check_keys(config: dict, allowed=ALL_KEYS) -> None:
    for key in config:
        if key not in allowed:
            import difflib  # only on the error path

            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (allowed: {', '.join(allowed)})"
            raise InputError(key, f"unknown key{hint}")


def parse_context(config: dict) -> dict:
    context = {}
    for key, high in (("spill_bytes", 1 << 30), ("grid_size", 2**31 - 1), ("sm_count", 10000), ("cluster_size", 64)):
        if config.get(key) is not None:
            context[key] = parse_int(config[key], key, 0 if key == "spill_bytes" else 1, high)
    if config.get("compiled_for") is not None:
        context["compiled_for"] = str(config["compiled_for"])
    return context


def analyze_config(config: dict, catalog) -> tuple:
    """-> (resolved arch, Occupancy, block dims, context); raises InputError or UnknownArchError."""
    check_keys(config)
    if "arch" not in config:
        raise InputError("arch", "missing")
    resolved = catalog.resolve(str(config["arch"]))
    kernel, dims = kernel_from_mapping(config)
    result: Occupancy = occupancy(resolved.arch, kernel)
    context = parse_context(config)
    context["block_dims"] = dims
    return resolved, result, dims, context
