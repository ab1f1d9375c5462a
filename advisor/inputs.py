"""Parse one user-supplied value (CLI text, JSON, TOML): sizes, integers, block
dimensions, carveouts, booleans. `advisor/launch.py` combines them into a LaunchConfig.

Every failure raises InputError naming the field and what is allowed, so the
CLI can print one line and exit 2 without a traceback.
"""

from __future__ import annotations

import math
import re

from ..specs.errors import InputError
from .text import quoted

# Carveout preferences as cuda_occupancy.h encodes them (cudaOccCarveoutConfig): what a user
# names, and what the engine's limits read (engine/limits.py imports them from here).
CARVEOUT_DEFAULT = -1
CARVEOUT_MAX_L1 = 0
CARVEOUT_MAX_SHARED = 100
CARVEOUT_NAMES = {"default": CARVEOUT_DEFAULT, "max-l1": CARVEOUT_MAX_L1, "max-shared": CARVEOUT_MAX_SHARED}

MAX_REGISTERS = 255  # no architecture encodes more registers per thread
MAX_THREADS = 1024  # no architecture allows larger blocks
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_BARRIERS = 16  # named barriers per block (bar.sync 0..15)
MAX_VIRTUAL_RESOURCES = 1024  # far above the 128 per SM of CUDA 13's header; larger values are typos
MAX_SHARED_MEM = 1 << 30  # a sanity bound far above any architecture; larger values are typos

# Patterns as strings: re compiles and caches them on first use, so a command
# that never parses "12K" never pays for compiling them. (?a): the digits 0-9 only, as C and
# every tool the numbers go to read them (Python's int() and \d also take full-width digits).
_SIZE = r"(?ia)^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib)?\s*$"
_INTEGER = r"(?a)\s*[+-]?\d+\s*"
_DECIMAL = r"(?a)\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*"
_UNITS = {None: 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20}


_QUANTITY = r"(?a)\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*([kKmMgGtTpP]?)\s*"
_SI = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_size(value, field: str) -> int:
    """Bytes from 12288, '12288', '12K', '12 KiB', '1.5K' (K = 1024)."""
    if type(value) is int and 0 <= value <= MAX_SHARED_MEM:  # the usual case, checked first for batch speed
        return value
    if isinstance(value, bool):
        raise InputError(field, f"expected a byte count such as 12288 or 12K, got {quoted(value)}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer() or isinstance(value, str) and value.isascii() and value.isdigit():
        if isinstance(value, str) and len(value) > 30:  # more digits than Python may convert (4,300): refused, not read
            raise InputError(field, f"must be between 0 and {MAX_SHARED_MEM} bytes, got {quoted(value)}")
        number = int(value)
    elif isinstance(value, str):
        match = re.match(_SIZE, value)
        if not match:
            raise InputError(field, f"expected a byte count such as 12288 or 12K, got {quoted(value)}")
        scaled = float(match.group(1)) * _UNITS[(match.group(2) or "").lower() or None]
        if not scaled.is_integer():
            raise InputError(field, f"{quoted(value)} is not a whole number of bytes")
        number = int(scaled)
    else:
        raise InputError(field, f"expected a byte count such as 12288 or 12K, got {quoted(value)}")
    if number < 0 or number > MAX_SHARED_MEM:
        raise InputError(field, f"must be between 0 and {MAX_SHARED_MEM} bytes, got {quoted(number)}")
    return number


def parse_quantity(value, field: str) -> float:
    """A positive, finite amount with an optional SI prefix (K = 1000, as for FLOPs):
    2.5e12, '2.5T', '900G'."""
    if isinstance(value, bool):
        raise InputError(field, f"expected a positive number (e.g. 2.5e12 or 2.5T), got {quoted(value)}")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        match = re.fullmatch(_QUANTITY, str(value))
        if not match:
            raise InputError(field, f"expected a positive number (e.g. 2.5e12 or 2.5T), got {quoted(value)}")
        number = float(match.group(1)) * _SI[match.group(2).lower()]
    if not (number > 0 and math.isfinite(number)):
        raise InputError(field, f"must be a positive, finite number, got {quoted(value)}")
    return number


def parse_int(value, field: str, low: int, high: int) -> int:
    """A whole number from `low` to `high`: an int, an integral float, or text of the digits 0-9."""
    if type(value) is int and low <= value <= high:  # the usual case (JSON numbers), checked first for batch speed
        return value
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise InputError(field, f"expected an integer from {low} to {high}, got {quoted(value)}")
    if isinstance(value, str):
        number = int(value) if len(value) <= 30 and re.fullmatch(_INTEGER, value) else None
    else:
        number = int(value) if not isinstance(value, float) or value.is_integer() else None
    if number is None:
        raise InputError(field, f"expected an integer from {low} to {high} (digits 0-9), got {quoted(value)}")
    if not low <= number <= high:
        raise InputError(field, f"must be from {low} to {high}, got {quoted(number)}")
    return number


def parse_float(value, field: str, low: float, high: float) -> float:
    """A number from `low` to `high` (NaN refused): a float, an int, or text of the digits 0-9."""
    span = f"from {_bound(low)} to {_bound(high)}"
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise InputError(field, f"expected a number {span}, got {quoted(value)}")
    if isinstance(value, str) and not (len(value) <= 40 and re.fullmatch(_DECIMAL, value)):
        raise InputError(field, f"expected a number {span} (digits 0-9), got {quoted(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int past a float's range (10**400): past `high` as well
        raise InputError(field, f"must be {span}, got {quoted(value)}") from None
    if not low <= number <= high:
        raise InputError(field, f"must be {span}, got {quoted(value)}")
    return number


def _bound(limit: float) -> str:
    """A range's end as written: 1048576, not 1.04858e+06; 0.5 as 0.5."""
    return str(int(limit)) if float(limit).is_integer() else f"{limit:g}"


def parse_block(value, field: str = "block_size") -> tuple[int, ...]:
    """Block dimensions from 256, '256', '16x16', '32,8,2' or [32, 8]."""
    if type(value) is int and 1 <= value <= MAX_THREADS:  # the usual case: a plain thread count
        return (value,)
    if isinstance(value, (list, tuple)):
        parts = list(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        parts = re.split(r"[x,*\s]+", text) if text else []
    else:
        parts = [value]
    if not 1 <= len(parts) <= 3 or "" in parts:  # '32x' or ',32' is a dimension missing, not 32
        raise InputError(field, f"expected 1 to 3 dimensions such as 256 or 16x16, got {quoted(value)}")
    try:
        dims = tuple(parse_int(p, field, 1, limit) for p, limit in zip(parts, MAX_BLOCK_DIMS))
    except InputError as exc:
        if len(parts) == 1:
            raise
        # `0x40` is read as 0 by 40: the message quotes what was given, not the part alone.
        raise InputError(field, f"{exc.detail} in {quoted(value)} (dimensions such as 16x16)") from None
    threads = 1
    for d in dims:
        threads *= d
    if threads > MAX_THREADS:
        raise InputError(field, f"{'x'.join(map(str, dims))} is {threads} threads; no architecture allows more than {MAX_THREADS}")
    return dims


def parse_carveout(value, field: str = "carveout") -> int:
    """'default', 'max-shared', 'max-l1', or a percentage 0..100 ('50' or '50%')."""
    if value == "default":
        return CARVEOUT_DEFAULT
    if isinstance(value, str):
        text = value.strip().lower()
        if text in CARVEOUT_NAMES:
            return CARVEOUT_NAMES[text]
        value = text.rstrip("%")
    try:
        return parse_int(value, field, 0, 100)
    except InputError:
        raise InputError(field, f"expected default, max-shared, max-l1 or a percentage 0-100, got {quoted(value)}") from None


def parse_bool(value, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if value in (0, 1):
        return bool(value)
    raise InputError(field, f"expected true or false, got {quoted(value)}")
