"""The one launch configuration: a kernel's resource usage and how it is launched.

Every way a configuration reaches the tool builds this one type through this
one parser: `occupancy`'s options, batch lines, lint configs (their pydantic
model wraps it), rule examples, compiler output and the library's `analyze`.
The engine reads the resource fields (what `cudaOccFuncAttributes` and
`cudaOccDeviceState` carry); the rules also read the launch context (grid,
cluster, spills, the target it was compiled for).

    >>> config = LaunchConfig.from_mapping({"registers": 64, "block_size": "16x16", "shared_mem": "12K"})
    >>> config.block_size, config.block_dims, config.static_shared_mem
    (256, (16, 16), 12288)

A field is described once, in FIELDS: its key in JSON, batch lines and configs
(the `input` object of `--format json` uses the same keys), its parser, its
command-line help and whether the engine reads it. Adding a context key is one
FIELDS entry and one LaunchConfig field.
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from collections.abc import Callable, Mapping
from typing import NamedTuple

from .inputs import (
    CARVEOUT_DEFAULT,
    MAX_BARRIERS,
    MAX_REGISTERS,
    MAX_THREADS,
    MAX_VIRTUAL_RESOURCES,
    InputError,
    parse_block,
    parse_bool,
    parse_carveout,
    parse_int,
    parse_size,
)
from .text import quoted

MAX_GRID_BLOCKS = 2**31 - 1  # gridDim.x
MAX_SM_COUNT = 10_000
MAX_CLUSTER_SIZE = 64  # far above any architecture's non-portable limit (16); the rules say which is exceeded
MAX_LOCAL_BYTES = 1 << 30  # spill and stack figures per thread; larger values are typos


class LaunchConfig(NamedTuple):
    """A kernel's resource usage and its launch, validated. Build it by keyword or through
    `from_mapping`; `replace` keeps `block_dims` consistent with `block_size`."""

    registers: int
    block_size: int  # threads per block: the product of block_dims
    block_dims: tuple[int, ...] = ()  # as given (256,), (16, 16) or (32, 8, 2); () means (block_size,)
    static_shared_mem: int = 0
    dynamic_shared_mem: int = 0
    carveout: int = CARVEOUT_DEFAULT  # -1 default, or a percentage 0..100 (cudaOccCarveoutConfig)
    opt_in: bool = False  # cudaFuncAttributeMaxDynamicSharedMemorySize raised to the maximum
    barriers: int = 1  # named barriers per block; 1 is what cuda_occupancy.h assumes
    virtual_resources: int = 0  # cudaOccFuncAttributes.virtualResourceCount (CUDA 13); 0 does not limit
    max_threads_per_block: int | None = None  # __launch_bounds__ maxThreadsPerBlock
    # The launch context: not occupancy inputs, but what the launch-level and spill rules read.
    grid_size: int | None = None  # blocks in the grid
    sm_count: int | None = None  # SMs on the device (default: the product's)
    cluster_size: int | None = None  # blocks per thread-block cluster (9.0+)
    compiled_for: str | None = None  # the target the binary was built for, if not the one it runs on
    spill_stores: int | None = None  # bytes per thread, ptxas "N bytes spill stores"
    spill_loads: int | None = None  # bytes per thread, ptxas "N bytes spill loads"
    stack_frame: int | None = None  # bytes per thread, ptxas "N bytes stack frame"
    # How the kernel's register cap is set where -maxrregcount cannot: "__maxnreg__" (its own
    # attribute) or "triton" (triton.Config's maxnreg); None: by __launch_bounds__ or the flag.
    register_control: str | None = None

    @property
    def dims(self) -> tuple[int, ...]:
        """The block's dimensions, (block_size,) for a one-dimensional block."""
        return self.block_dims or (self.block_size,)

    @property
    def resources(self) -> "LaunchConfig":
        """This configuration without its launch context: what the occupancy depends on."""
        return self._replace(grid_size=None, sm_count=None, cluster_size=None, compiled_for=None,
                             spill_stores=None, spill_loads=None, stack_frame=None, register_control=None)

    def replace(self, **changes) -> "LaunchConfig":
        """A copy with `changes`; a new block_size without new dims makes the block one-dimensional."""
        if "block_size" in changes and "block_dims" not in changes:
            changes["block_dims"] = ()
        return self._replace(**changes)

    @classmethod
    def from_mapping(cls, values: Mapping, *, keys: frozenset[str] | None = None) -> "LaunchConfig":
        """Validate user values (CLI text, JSON, TOML) into a LaunchConfig. `keys` narrows the
        accepted keys (default: every FIELDS key; a key that is no field, such as a batch line's
        "arch", may be allowed and is then ignored); a null or absent value is the default.
        Raises InputError naming the key and what is allowed."""
        allowed = KEYS if keys is None else keys
        if not allowed.issuperset(values):
            raise unknown_key(next(key for key in values if key not in allowed), allowed)
        parsed = _parsed(values)
        dims = parsed.pop("block_dims")
        threads = 1
        for d in dims:
            threads *= d
        return cls(block_size=threads, block_dims=dims if len(dims) > 1 else (), **parsed)

    def to_mapping(self) -> dict:
        """The configuration as user values by FIELDS key, defaults and nulls left out:
        `from_mapping(c.to_mapping()) == c`."""
        out = {}
        for field in FIELDS:
            value = self.dims if field.attribute == "block_dims" else getattr(self, field.attribute)
            if value is not None and value != field.default:
                out[field.key] = list(value) if field.attribute == "block_dims" else value
        if "block_size" in out and len(self.dims) == 1:
            out["block_size"] = self.block_size
        return out


class Field(NamedTuple):
    """One configuration value: where users write it, how it is read, what it means."""

    key: str  # in JSON, batch lines, lint configs and rule examples; the option is --key-with-dashes
    attribute: str  # on LaunchConfig
    parse: Callable  # (value, key) -> parsed value, raising InputError
    help: str
    engine: bool  # the occupancy engine reads it (else it is launch context, read by rules)
    required: bool = False
    default: object = None

    @property
    def option(self) -> str:
        return "--" + self.key.replace("_", "-")


def _ranged(low: int, high: int) -> Callable:
    return lambda value, key: parse_int(value, key, low, high)


def _text(value, key: str) -> str:
    """A target name: letters, digits, '_', '.', '-' (sm_70, sm_90a, compute_80, 7.5)."""
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > 64 or not all(c.isascii() and (c.isalnum() or c in "_.-") for c in text):
        raise InputError(key, f"expected a target name such as sm_70, got {quoted(value)}")
    return text


FIELDS: tuple[Field, ...] = (
    Field("registers", "registers", _ranged(0, MAX_REGISTERS),
          "Registers per thread (0-255), as ptxas reports them.", engine=True, required=True),
    Field("block_size", "block_dims", parse_block,
          "Threads per block: 256, or dimensions such as 16x16 or 32,8,2.", engine=True, required=True),
    Field("shared_mem", "static_shared_mem", parse_size,
          "Static shared memory per block: bytes, or 12K.", engine=True, default=0),
    Field("dynamic_shared_mem", "dynamic_shared_mem", parse_size,
          "Dynamic shared memory per block at launch.", engine=True, default=0),
    Field("carveout", "carveout", parse_carveout,
          "Shared-memory carveout preference: default, max-shared, max-l1, or a percentage 0-100.",
          engine=True, default=CARVEOUT_DEFAULT),
    Field("opt_in", "opt_in", parse_bool,
          "The kernel raised cudaFuncAttributeMaxDynamicSharedMemorySize (over 48 KB).", engine=True, default=False),
    Field("barriers", "barriers", _ranged(0, MAX_BARRIERS),
          "Barriers per block (ptxas: 'used N barriers'); limits 9.0+.", engine=True, default=1),
    Field("virtual_resources", "virtual_resources", _ranged(0, MAX_VIRTUAL_RESOURCES),
          "Virtual resources per block (cudaOccFuncAttributes.virtualResourceCount, CUDA 13): 128 per SM on "
          "10.x-12.x limit blocks to 128/N; no compiler output reports it, so it is an input. 0 does not limit.",
          engine=True, default=0),
    Field("max_threads_per_block", "max_threads_per_block", _ranged(1, MAX_THREADS),
          "__launch_bounds__ maximum threads per block.", engine=True),
    Field("grid_size", "grid_size", _ranged(1, MAX_GRID_BLOCKS),
          "Blocks in the grid, for the launch-level rules (with a product or --sm-count).", engine=False),
    Field("sm_count", "sm_count", _ranged(1, MAX_SM_COUNT),
          "SMs on the device (default: the product's, when --arch names one).", engine=False),
    Field("cluster_size", "cluster_size", _ranged(1, MAX_CLUSTER_SIZE),
          "Blocks per thread-block cluster (9.0+).", engine=False),
    Field("compiled_for", "compiled_for", _text,
          "The target the binary was compiled for (e.g. sm_70), if not the one it runs on.", engine=False),
    Field("spill_stores", "spill_stores", _ranged(0, MAX_LOCAL_BYTES),
          "Spill stores per thread in bytes (ptxas 'N bytes spill stores').", engine=False),
    Field("spill_loads", "spill_loads", _ranged(0, MAX_LOCAL_BYTES),
          "Spill loads per thread in bytes (ptxas 'N bytes spill loads').", engine=False),
    Field("stack_frame", "stack_frame", _ranged(0, MAX_LOCAL_BYTES),
          "Stack frame per thread in bytes (ptxas 'N bytes stack frame').", engine=False),
)
KEYS = frozenset(field.key for field in FIELDS)
BY_KEY = {field.key: field for field in FIELDS}
REQUIRED_FIELDS = tuple(field for field in FIELDS if field.required)
OPTIONAL_FIELDS = tuple(field for field in FIELDS if not field.required)
REQUIRED_ATTRIBUTES = frozenset(field.attribute for field in REQUIRED_FIELDS)


def _parsed(values: Mapping) -> dict:
    """The values given, parsed, by LaunchConfig attribute: one pass over the keys given (a batch
    line sets a few of FIELDS). Where a value is bad or a required one missing, _raise_first_error
    names the first, as FIELDS orders them."""
    parsed = {}
    try:
        for key, raw in values.items():
            field = BY_KEY.get(key)
            if field is not None and raw is not None:
                parsed[field.attribute] = field.parse(raw, key)
    except Exception:
        _raise_first_error(values)
        raise
    if not REQUIRED_ATTRIBUTES.issubset(parsed):
        _raise_first_error(values)
    return parsed


def _raise_first_error(values: Mapping) -> None:
    """Parse the values in FIELDS' order, required ones first: the first missing or bad one raises."""
    for field in (*REQUIRED_FIELDS, *OPTIONAL_FIELDS):
        raw = values.get(field.key)
        if raw is None and field.required:
            raise InputError(field.key, "missing")
        if raw is not None:
            field.parse(raw, field.key)


def unknown_key(key, allowed) -> InputError:
    """The error for a key no configuration has, with the closest known key."""
    import difflib  # only on the error path

    names = sorted(allowed)
    close = difflib.get_close_matches(str(key), names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f" (allowed: {', '.join(names)})"
    return InputError(str(key)[:64], f"unknown key{hint}")
