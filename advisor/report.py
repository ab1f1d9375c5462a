"""Occupancy results as plain, versioned JSON-ready dictionaries.

The document layout is an interface (docs/json-schema.md); add keys, never
rename or remove them without raising SCHEMA_VERSION.
"""

from __future__ import annotations

from tuneadvise.advisor.engine import CARVEOUT_NAMES, Occupancy

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
