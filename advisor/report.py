"""Occupancy results as plain, versioned JSON-ready dictionaries.

`occupancy_document` is the one layout of an occupancy result: `occupancy
--format json` prints it, each batch line is it (advisor/batch.py), and lint
nests it. The layout is an interface (docs/json-schema.md); add keys, never
rename or remove them without raising SCHEMA_VERSION.
"""

from __future__ import annotations

from .engine.occupancy import CARVEOUT_NAMES, Occupancy

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
    "predicted_shared_mem_config": "measured",
    "max_warps_per_sm": "spec",
}


def shared_config_prediction(result: Occupancy) -> dict:
    """The configuration the driver will pick at launch (engine/shared_config.py), in bytes, null
    where the recordings leave its rule unknown, with its lower bound, rule and the L1 it leaves."""
    from .engine.shared_config import predicted_config_of

    predicted = predicted_config_of(result)
    if predicted is None:
        return {"predicted_shared_mem_config": None, "shared_mem_config_prediction": None}
    return {"predicted_shared_mem_config": predicted.size,
            "shared_mem_config_prediction": {"at_least": predicted.at_least, "at_most": predicted.at_most,
                                             "rule": predicted.rule, "l1_bytes": predicted.l1_bytes}}


def provenance(arch) -> dict:
    """PROVENANCE for this architecture: a limit the driver reported (`--arch native`, a spec
    saved by `probe --save`) is the driver's, not the spec's."""
    source = arch.sources.get("max_warps_per_sm") or ""
    kind = source.partition("#")[0]
    if kind in ("driver", "measured"):
        return {**PROVENANCE, "max_warps_per_sm": kind}
    return PROVENANCE


def occupancy_document(result: Occupancy, dims: tuple = (), arch_note: str | None = None,
                       product: str | None = None, findings: list | None = None) -> dict:
    """The document of one result. `dims`: the block's shape where the caller knows it apart
    from the result (lint shares one result across shapes); by default the result's own."""
    arch, kernel = result.arch, result.kernel
    return {
        "schema_version": SCHEMA_VERSION,
        "arch": arch.sm,
        "compute_capability": arch.cc,
        "cuda_release": arch.cuda_release,
        "arch_note": arch_note,
        "product": product,
        "input": {
            "registers": kernel.registers,
            "block_size": kernel.block_size,
            "block_dims": list(dims or kernel.dims),
            "shared_mem": kernel.static_shared_mem,
            "dynamic_shared_mem": kernel.dynamic_shared_mem,
            "carveout": _CARVEOUT_LABEL.get(kernel.carveout, kernel.carveout),
            "opt_in": kernel.opt_in,
            "barriers": kernel.barriers,
            "virtual_resources": kernel.virtual_resources,
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
        **shared_config_prediction(result),
        "launchable": result.launchable,
        "errors": [{"code": e.code, "field": e.field, "message": e.message} for e in result.errors],
        "notes": result.notes,
        "findings": findings or [],
        "provenance": provenance(arch),
        "spec_sources": {"max_warps_per_sm": arch.sources.get("max_warps_per_sm")},
    }


def budget_document(resolved, budget) -> dict:
    """The document of `max-dynamic-smem` (a DynamicSharedMemBudget on a resolved --arch)."""
    arch, kernel = budget.arch, budget.kernel
    return {
        "schema_version": SCHEMA_VERSION,
        "arch": arch.sm,
        "compute_capability": arch.cc,
        "cuda_release": arch.cuda_release,
        "arch_note": resolved.note,
        "product": resolved.product.name if resolved.product else None,
        "input": {
            "registers": kernel.registers,
            "block_size": kernel.block_size,
            "block_dims": list(kernel.dims),
            "shared_mem": kernel.static_shared_mem,
            "carveout": _CARVEOUT_LABEL.get(kernel.carveout, kernel.carveout),
            "opt_in": kernel.opt_in,
            "barriers": kernel.barriers,
            "virtual_resources": kernel.virtual_resources,
            "max_threads_per_block": kernel.max_threads_per_block,
            "blocks_per_sm": budget.blocks_per_sm,
        },
        "max_dynamic_shared_mem": budget.max_dynamic_shared_mem,
        "limiter": budget.limiter,
        "blocks_per_sm_without_dynamic": budget.blocks_without_dynamic,
        "blocks_per_sm_at_max": budget.blocks_at_max,
        "errors": [{"code": e.code, "field": e.field, "message": e.message} for e in budget.errors],
        "provenance": {"max_dynamic_shared_mem": "model", "blocks_per_sm_at_max": "model"},
    }


def resolved_document(resolved, result: Occupancy, findings: list | None = None) -> dict:
    """occupancy_document for a result on a resolved --arch (or a batch line's "arch")."""
    product = resolved.product.name if resolved.product else None
    document = occupancy_document(result, result.kernel.dims, resolved.note, product, findings)
    document["dynamic_shared_mem_budget"] = dynamic_shared_mem_budget(result)
    if result.kernel.cluster_size is not None:  # single queries and batch lines alike
        from .engine.clusters import cluster_document

        document["clusters"] = cluster_document(resolved, result.active_blocks_per_sm,
                                                result.kernel.cluster_size) if result.launchable else None
    return document


def dynamic_shared_mem_budget(result: Occupancy) -> dict | None:
    """The most dynamic shared memory per block that keeps the result's blocks per SM
    (cudaOccAvailableDynamicSMemPerBlock), what bounds it, and the blocks per SM the occupancy
    calculation gives with that much; None where nothing launches."""
    if not result.launchable or not result.active_blocks_per_sm:
        return None
    from .engine.occupancy import max_dynamic_shared_mem

    budget = max_dynamic_shared_mem(result.arch, result.kernel, result.active_blocks_per_sm)
    return {"max_dynamic_shared_mem": budget.max_dynamic_shared_mem, "limiter": budget.limiter,
            "blocks_per_sm_at_max": budget.blocks_at_max}


def occupancy_findings(resolved, result: Occupancy, selection=None) -> list[dict]:
    """The findings of the selected rules on `result`, as the document lists them."""
    from .rules import check_occupancy

    return [finding.to_dict() for finding in check_occupancy(resolved, result, selection)]


def error_document(code: str, message: str) -> dict:
    return {"schema_version": SCHEMA_VERSION, "error": {"code": code, "message": message}}
