"""Occupancy results as plain, versioned JSON-ready dictionaries.

The document layout is an interface (docs/json-schema.md); add keys, never
rename or remove them without raising SCHEMA_VERSION.
"""

from __future__ import annotations

import json

from tuneadvise.advisor.engine.occupancy import (
    CARVEOUT_DEFAULT,
    CARVEOUT_NAMES,
    LIMITERS,
    Occupancy,
    block_limits,
    launch_errors,
    notes_on,
    occupancy_from,
)
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.memo import PerArch

SCHEMA_VERSION = 1
_CARVEOUT_LABEL = {v: k for k, v in CARVEOUT_NAMES.items()}

# Where each top-level number comes from: a spec value, the engine's model,
# the CUDA driver on a real GPU, or a probe measurement.
PROVENANCE = {
    "active_blocks_per_sm": "model",
    "active_warps_per_sm": "model",
    "occupancy": "model",
    "block_limits": "model",
    "allocated": "model",
    "shared_mem_config_per_sm": "model",
    "max_warps_per_sm": "spec",
}


def occupancy_document(result: Occupancy, dims: tuple = (), arch_note: str | None = None,
                       product: str | None = None, findings: list | None = None) -> dict:
    arch, kernel = result.arch, result.kernel
    return {
        "schema_version": SCHEMA_VERSION,
        "arch": arch.sm,
        "compute_capability": arch.cc,
        "arch_note": arch_note,
        "product": product,
        "input": {
            "registers": kernel.registers,
            "block_size": kernel.block_size,
            "block_dims": list(dims) or [kernel.block_size],
            "shared_mem": kernel.static_shared_mem,
            "dynamic_shared_mem": kernel.dynamic_shared_mem,
            "carveout": _CARVEOUT_LABEL.get(kernel.carveout, kernel.carveout),
            "opt_in": kernel.opt_in,
            "barriers": kernel.barriers,
            "max_threads_per_block": kernel.max_threads_per_block,
        },
        "active_blocks_per_sm": result.active_blocks_per_sm,
        "active_warps_per_sm": result.active_warps_per_sm,
        "max_warps_per_sm": result.max_warps_per_sm,
        "occupancy": round(result.occupancy, 6),
        "limiters": result.limiters,
        "block_limits": result.block_limits,
        "allocated": {
            "registers_per_block": result.allocated_registers_per_block,
            "shared_mem_per_block": result.allocated_shared_mem_per_block,
            "reserved_shared_mem_per_block": arch.reserved_shared_mem_per_block,
        },
        "shared_mem_config_per_sm": result.shared_mem_config,
        "launchable": result.launchable,
        "errors": [{"code": e.code, "field": e.field, "message": e.message} for e in result.errors],
        "notes": result.notes,
        "findings": findings or [],
        "provenance": PROVENANCE,
        "spec_sources": {"max_warps_per_sm": arch.sources.get("max_warps_per_sm")},
    }


def error_document(code: str, message: str) -> dict:
    return {"schema_version": SCHEMA_VERSION, "error": {"code": code, "message": message}}


# --------------------------------------------------------------------------
# The same document as one JSON line, written directly (batch mode)
# --------------------------------------------------------------------------
# Batch output is json.dumps(occupancy_document(...)) with compact separators;
# building the dictionary and encoding it generically took over half of each
# line's time. occupancy_json_line writes the same text itself, reusing the
# parts that depend only on the architecture. tests/test_report.py holds the two
# equal byte for byte over every architecture and a hypothesis sweep, so the
# layout above stays the one source of truth.

# json.dumps(x, separators=(",", ":")), and what it does to a str (ensure_ascii): the
# compact writers here and in lint_report.py build their text from these two.
json_string = json.encoder.encode_basestring_ascii


def _compact_encoder():
    """json.dumps(x, separators=(",", ":")) as a function. JSONEncoder.encode builds CPython's C
    encoder afresh on every call, half the cost of encoding a small dict, and the writers encode
    small dicts by the ten thousand: this builds it once. Without circular-reference checks
    (nothing encoded here refers to itself); where the C encoder is missing or its signature
    differs, JSONEncoder.encode itself. tests/test_report.py holds it equal to json.dumps."""
    plain = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    try:
        encoder = make(None, plain.default, json_string, None, ":", ",", False, False, True)
    except TypeError:  # None (no C accelerator), or another signature
        return plain.encode

    def compact_json(value) -> str:
        return "".join(encoder(value, 0))

    return compact_json


compact_json = _compact_encoder()
_PROVENANCE_JSON = compact_json(PROVENANCE)
_QUOTED = {name: f'"{name}"' for name in LIMITERS}
_CARVEOUT_JSON = {value: f'"{label}"' for value, label in _CARVEOUT_LABEL.items()}
_BOOL = {True: "true", False: "false"}
_ARCH_PARTS = PerArch(4096)  # (arch, note, product) -> the line's head and tail
# Small texts that recur across lines, each keyed by what determines it. round()
# with digits costs about a microsecond, as much as the rest of a field.
_OCCUPANCY_TEXT: dict = {}
_LIMITS_TEXT: dict = {}
_TEXT_CACHE_LIMIT = 1 << 14


def _arch_parts(arch, arch_note, product) -> tuple[str, str]:
    return _ARCH_PARTS.get(arch, (arch_note, product), lambda: (
        f'{{"schema_version":{SCHEMA_VERSION},"arch":{compact_json(arch.sm)},"compute_capability":{compact_json(arch.cc)},'
        f'"arch_note":{compact_json(arch_note)},"product":{compact_json(product)},"input":{{"registers":',
        f'"findings":[],"provenance":{_PROVENANCE_JSON},'
        f'"spec_sources":{compact_json({"max_warps_per_sm": arch.sources.get("max_warps_per_sm")})}}}'))


def _remember(cache: dict, key, text: str) -> str:
    if len(cache) >= _TEXT_CACHE_LIMIT:
        cache.clear()
    cache[key] = text
    return text


def _occupancy_text(warps: int, max_warps: int) -> str:
    key = (warps, max_warps)
    return _OCCUPANCY_TEXT.get(key) or _remember(_OCCUPANCY_TEXT, key, repr(round(warps / max_warps, 6)))


def _limits_text(limits: dict) -> str:
    """The members of block_limits' dict, whose keys are always LIMITERS in order ("barriers"
    only where it applies, last): the values alone tell one dict from another."""
    key = tuple(limits.values())
    return _LIMITS_TEXT.get(key) or _remember(_LIMITS_TEXT, key, ",".join(
        [f'{_QUOTED[name]}:{"null" if value is None else value}' for name, value in limits.items()]))


def _errors_text(errors: list) -> str:
    return "[" + ",".join([f'{{"code":{json_string(e.code)},"field":{json_string(e.field)},"message":{json_string(e.message)}}}'
                           for e in errors]) + "]"


def json_int(value: int | None) -> str:
    """compact_json(value) for an int or None, without the encoder."""
    return "null" if value is None else str(value)


def _input_text(kernel: LaunchConfig, dims: tuple) -> str:
    """The "input" object's members after "registers":, and the brace that closes it."""
    registers, block_size, static, dynamic = kernel.registers, kernel.block_size, kernel.static_shared_mem, kernel.dynamic_shared_mem
    carveout, opt_in, barriers, bound = kernel.carveout, kernel.opt_in, kernel.barriers, kernel.max_threads_per_block
    return (f'{registers},"block_size":{block_size},'
            f'"block_dims":[{",".join(map(str, dims)) if dims else block_size}],'
            f'"shared_mem":{static},"dynamic_shared_mem":{dynamic},'
            f'"carveout":{_CARVEOUT_JSON.get(carveout) or carveout},"opt_in":{_BOOL[opt_in]},'
            f'"barriers":{barriers},"max_threads_per_block":{json_int(bound)}}},')


def _outcome_text(result: Occupancy) -> str:
    """From "active_blocks_per_sm" to "notes": everything the engine decided."""
    return _blocks_text(result) + _allocation_text(result.arch, result.allocated_registers_per_block,
                                                   result.allocated_shared_mem_per_block, result.shared_mem_config,
                                                   result.errors, compact_json(result.notes) if result.notes else "[]")


def _blocks_text(result: Occupancy) -> str:
    """From "active_blocks_per_sm" to "block_limits": what the limits and the block's warps decide."""
    arch, active, limits, limiters = result.arch, result.active_blocks_per_sm, result.block_limits, result.limiters
    warps = active * result.warps_per_block
    return (
        f'"active_blocks_per_sm":{active},"active_warps_per_sm":{warps},'
        f'"max_warps_per_sm":{arch.max_warps_per_sm},"occupancy":{_occupancy_text(warps, arch.max_warps_per_sm)},'
        f'"limiters":[{",".join([_QUOTED[name] for name in limiters])}],'
        f'"block_limits":{{{_limits_text(limits)}}},'
    )


def _allocation_text(arch, regs: int, smem: int, config, errors: list, notes_json: str) -> str:
    """From "allocated" to "notes"."""
    return (
        f'"allocated":{{"registers_per_block":{regs},"shared_mem_per_block":{smem},'
        f'"reserved_shared_mem_per_block":{arch.reserved_shared_mem_per_block}}},'
        f'"shared_mem_config_per_sm":{json_int(config)},'
        f'"launchable":{"false" if errors else "true"},'
        f'"errors":{_errors_text(errors) if errors else "[]"},'
        f'"notes":{notes_json},'
    )


def occupancy_json_line(result: Occupancy, dims: tuple = (), arch_note: str | None = None,
                        product: str | None = None, end: str = "") -> str:
    """json.dumps(occupancy_document(result, dims, arch_note, product), separators=(",", ":")) + end, faster."""
    head, tail = _arch_parts(result.arch, arch_note, product)
    return f'{head}{_input_text(result.kernel, dims)}{_outcome_text(result)}{tail}{end}'


# The text from "active_blocks_per_sm" to "block_limits" depends only on the limits, whether
# the launch fails, and the block's warps; the notes only on the architecture, the carveout
# and opt-in: a batch's lines share them far more often than whole configurations.
_BLOCKS = PerArch(_TEXT_CACHE_LIMIT)
_NOTES = PerArch(_TEXT_CACHE_LIMIT)


def kernel_json_line(arch, kernel: LaunchConfig, dims: tuple = (), arch_note: str | None = None,
                     product: str | None = None, end: str = "") -> tuple[str, bool]:
    """(occupancy_json_line(occupancy(arch, kernel), dims, arch_note, product, end), whether it launches)."""
    limits, regs, smem, config = block_limits(arch, kernel)
    errors = launch_errors(arch, kernel, limits)
    head, tail = _arch_parts(arch, arch_note, product)
    # No block resides when the launch fails, so the block's warps do not matter then.
    warps_per_block = 0 if errors else -(-kernel.block_size // arch.warp_size)
    blocks = _BLOCKS.get(arch, (tuple(limits.values()), warps_per_block, not errors),
                         lambda: _blocks_text(occupancy_from(arch, kernel, limits, regs, smem, config, errors)))
    notes = "[]"
    if kernel.carveout != CARVEOUT_DEFAULT or kernel.opt_in:
        notes = _NOTES.get(arch, (kernel.carveout, kernel.opt_in), lambda: compact_json(notes_on(arch, kernel)))
    allocation = _allocation_text(arch, regs, smem, None if errors else config, errors, notes)
    return f'{head}{_input_text(kernel, dims)}{blocks}{allocation}{tail}{end}', not errors
