"""The shared-memory configuration the driver picks at launch, as far as the
recorded launches determine it (tests/fixtures/ncu: the 414 launches on a 9.0
GPU whose carveout preference the programs logged),
and the L1 it leaves. cuda_occupancy.h assumes the configuration the carveout
asks for, or the largest one; the driver often picks a smaller one:

- with a carveout percentage set (cudaFuncAttributePreferredSharedMemoryCarveout),
  the smallest supported configuration holding that percentage of the SM's
  shared memory, raised to the smallest one holding one block: so on 40 of
  the 41 recorded launches. The other, a kernel that uses no shared memory at
  carveout 0, got 32 KB: below 32 KB that case is left unknown.
- with no preference, the smallest configuration that keeps the most resident
  blocks (the occupancy of the largest configuration), where that needs more
  than 100 KB: recorded on 127 launches, every one so. Where it needs 100 KB or
  less the driver often picks a larger one, by a rule the recordings do not
  settle (docs/occupancy.md says what was tried): between that smallest
  configuration and the smallest holding twice the resident blocks, capped at
  the first configuration over 100 KB, for a kernel that uses shared memory
  (held on all 1,121 such recorded launches, a sweep of 544 among them); the
  size is known where the two bounds meet. For a kernel that uses none only
  the lower bound holds (a 256-thread block got 32 KB where 8 KB would do).

Only architectures whose shared memory is a carveout of the L1 (7.0 and later)
have configurations; elsewhere there is nothing to predict. On the carveout
architectures not recorded the size is unknown, at least the configuration
that holds one block."""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import NamedTuple

from ...specs.records import Arch
from .limits import CARVEOUT_DEFAULT, INT_MAX, align_up_shared_mem

RECORDED_ON = frozenset({"9.0"})  # compute capabilities the rule was recorded on
KNOWN_ABOVE = 100 * 1024  # default preference: the rule holds on every recording whose need is larger
SMALLEST_UNSHARED = 32 * 1024  # a kernel using no shared memory never got less (carveout 0 asked for 0)


class SharedMemConfig(NamedTuple):
    """The driver's configuration for one launch: `size` in bytes, or None when unknown."""
    size: int | None
    at_least: int  # a lower bound (equal to size when known)
    rule: str  # "carveout", "default" or why unknown
    l1_bytes: int | None  # the unified L1/shared capacity less the configuration, when known
    at_most: int | None = None  # an upper bound where one is known (equal to size when known)


def predict_shared_mem_config(arch: Arch, blocks_without_shared: int, allocated_per_block: int,
                              used_shared_mem: int, carveout: int) -> SharedMemConfig | None:
    """The configuration the driver picks for a block allocating `allocated_per_block` bytes
    (static + dynamic + reserved, rounded to the allocation unit) that uses `used_shared_mem`
    bytes itself, when the other limits allow `blocks_without_shared` blocks per SM. None where
    the architecture has no carveout."""
    if arch.shared_mem_model != "carveout" or not arch.shared_mem_configs:
        return None
    one_block = align_up_shared_mem(arch, allocated_per_block)
    if one_block is None:
        return None
    if arch.cc not in RECORDED_ON:
        return _config(arch, None, one_block, f"unknown: recorded on {', '.join(sorted(RECORDED_ON))} only")
    if carveout != CARVEOUT_DEFAULT:
        asked = align_up_shared_mem(arch, carveout * arch.shared_mem_per_sm // 100)
        if asked is None:
            asked = arch.shared_mem_per_sm
        size = max(asked, one_block)
        if used_shared_mem == 0 and size < SMALLEST_UNSHARED:
            return _config(arch, None, size, "unknown: no shared memory used and a carveout under 32 KB")
        return _config(arch, size, size, "carveout")
    blocks = min(blocks_without_shared, arch.shared_mem_per_sm // allocated_per_block) if allocated_per_block else 0
    need = blocks * allocated_per_block if blocks and blocks < INT_MAX else allocated_per_block
    smallest = align_up_shared_mem(arch, need)
    if smallest is None:
        smallest = arch.shared_mem_per_sm
    if need > KNOWN_ABOVE:
        return _config(arch, smallest, smallest, "default")
    at_most = _twice_capped(arch, need, smallest) if used_shared_mem else None
    if at_most == smallest:
        return _config(arch, smallest, smallest, "default")
    return _config(arch, None, smallest, "unknown: the most resident blocks need 100 KB or less", at_most)


def _twice_capped(arch: Arch, need: int, smallest: int) -> int:
    """The upper bound with no preference: the smallest configuration holding twice the resident
    blocks' need, capped at the first configuration over KNOWN_ABOVE, and at least `smallest`."""
    cap = align_up_shared_mem(arch, KNOWN_ABOVE + 1) or arch.shared_mem_per_sm
    return max(smallest, min(align_up_shared_mem(arch, 2 * need) or arch.shared_mem_per_sm, cap))


def _config(arch: Arch, size: int | None, at_least: int, rule: str, at_most: int | None = None) -> SharedMemConfig:
    capacity = arch.l1_shared_total  # the unified L1/shared memory per SM, from the spec
    l1 = capacity - size if (capacity and size is not None) else None
    return SharedMemConfig(size, at_least, rule, l1, size if size is not None else at_most)


def predicted_config_of(result) -> SharedMemConfig | None:
    """predict_shared_mem_config for an occupancy result (its kernel's carveout preference);
    None where the architecture has no carveout or nothing launches."""
    if result.errors:
        return None
    others = [v for k, v in result.block_limits.items() if k != "shared_memory" and v is not None]
    kernel = result.kernel
    return predict_shared_mem_config(result.arch, min(others), result.allocated_shared_mem_per_block,
                                     kernel.static_shared_mem + kernel.dynamic_shared_mem, kernel.carveout)
