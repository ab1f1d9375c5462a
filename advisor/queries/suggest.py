"""`suggest`: the block size with the highest occupancy, as cudaOccMaxPotentialOccupancyBlockSize
chooses it, the minimum grid that fills the device, and the waves of a planned grid."""

from __future__ import annotations

from ..engine.optimizer import LinearSharedMem
from ..inputs import InputError, parse_size

SCHEMA_VERSION = 1  # `suggest --format json`'s own layout


def shared_mem_function(fixed=None, per_thread=None, base=None) -> LinearSharedMem:
    """Dynamic shared memory against block size: a fixed size, or base + per_thread x threads
    (sizes as users write them: 12K). InputError naming the value otherwise."""
    if per_thread is not None:
        return LinearSharedMem(parse_size(base or 0, "dynamic_shared_mem_base"),
                               parse_size(per_thread, "dynamic_shared_mem_per_thread"))
    if base is not None:  # alone it was dropped without a word: no per-thread part to add it to
        raise InputError("dynamic_shared_mem_base", "the constant part of a size per thread: give "
                                                    "--dynamic-shared-mem-per-thread too, or a fixed size as "
                                                    "--dynamic-shared-mem")
    return LinearSharedMem(parse_size(fixed or 0, "dynamic_shared_mem"), 0)


def suggest_query(resolved, kernel, shared: LinearSharedMem) -> dict:
    """The document of `suggest` for `kernel` (a LaunchConfig whose block size is to be chosen and
    whose dynamic shared memory is `shared`) on `resolved`."""
    from ..engine.occupancy import occupancy
    from ..engine.optimizer import kernel_errors, max_potential_block_size
    from ..rules import device_sm_count
    from ..rules.families.ta7_grid import waves

    arch = resolved.arch
    sms = device_sm_count(resolved, kernel)
    errors = kernel_errors(arch, kernel)
    choice = max_potential_block_size(arch, kernel, shared, sms or 1)
    document = {
        "schema_version": SCHEMA_VERSION,
        "arch": arch.sm,
        "compute_capability": arch.cc,
        "cuda_release": arch.cuda_release,
        "block_size": choice.block_size,
        "blocks_per_sm": choice.blocks_per_sm,
        "min_grid_size": choice.min_grid_size if sms else None,
        "sm_count": sms,
        "occupancy": round(choice.occupancy, 6),
        "dynamic_shared_mem": choice.dynamic_shared_mem,
        "dynamic_shared_mem_function": shared.describe(),
        "tie_note": choice.tie_note,
        "curve": [{"block_size": b, "blocks_per_sm": n, "threads_per_sm": t} for b, n, t in choice.tried],
        "errors": [{"code": e.code, "field": e.field, "message": e.message} for e in errors],
        "waves": None,
        "verdict": None,
        "provenance": "model",
    }
    if kernel.grid_size and sms and choice.block_size:
        best = occupancy(arch, kernel.resources.replace(block_size=choice.block_size,
                                                        dynamic_shared_mem=choice.dynamic_shared_mem))
        document["waves"] = waves(best, kernel.grid_size, sms)
    if choice.block_size:
        from ..advice.judge import chosen_block_verdict

        verdict = chosen_block_verdict(choice.occupancy, document["waves"])
        document["verdict"] = verdict.to_dict()
    return document


def launches(document: dict) -> bool:
    """Whether some block size launches (the command's exit status)."""
    return not document["errors"] and bool(document["block_size"])
