"""An autotuner's pre-filter: which configurations can launch, and at what occupancy.

    >>> from tuneadvise import prune
    >>> configs = [{"warps": w, "smem": s} for w in (4, 8) for s in (98304, 262144)]
    >>> kept = prune(configs, "h100-sxm", lambda c: {"registers": 128, "num_warps": c["warps"],
    ...                                              "dynamic_shared_mem": c["smem"]})
    >>> [(p.config["warps"], p.active_blocks_per_sm, p.occupancy) for p in kept]
    [(4, 2, 0.125), (8, 2, 0.25)]

`resources(config)` returns what is known of one configuration, as a mapping:
`registers` (per thread; before compiling an estimate the caller supplies), `block_size`
(or Triton's `num_warps`: 32 threads each), `shared_mem` (static bytes),
`dynamic_shared_mem`, and optionally `opt_in` (default: opted in when the block needs more
than the default 48 KB, as Triton's launcher does; pass False for CUDA code that never calls
cudaFuncSetAttribute), `cluster_size`, `max_threads_per_block` (__launch_bounds__). The
answer is the engine's (`tuneadvise.advisor.analyze`) on the LaunchConfig the resources make,
validated as every other input is; each resource's limit is cached by value
(advisor/engine/cached_limits.py), so an autotuner's thousands of configurations share the
arithmetic. Configurations with the same resources share one answer.

What it cannot know: before compiling, registers and spills are the caller's estimate, and a
configuration that launches may still spill or run slowly; the answer is occupancy, not speed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from .engine.occupancy import block_limits, launch_errors
from .inputs import MAX_THREADS, InputError, parse_int
from .launch import LaunchConfig

WARP = 32
# The keys resources() may return: LaunchConfig's (advisor/launch.py) that an autotuner knows
# before launching, and Triton's num_warps (32 threads each) for block_size.
PRUNE_KEYS = frozenset({"registers", "block_size", "shared_mem", "dynamic_shared_mem", "opt_in", "cluster_size",
                        "max_threads_per_block"})


class Pruned(NamedTuple):
    """A configuration that can launch, with its theoretical occupancy."""

    config: object
    occupancy: float  # active warps / maximum warps per SM
    active_blocks_per_sm: int
    limiters: tuple[str, ...]  # the resources that bind, in the engine's names


def prune(configs: Iterable, arch, resources: Callable[[object], Mapping], *, min_occupancy: float | None = None,
          cuda: str | None = None) -> list[Pruned]:
    """The configurations that can launch on `arch` (any name `analyze` accepts, or an Arch), in
    their given order, each with its occupancy; with `min_occupancy`, only those reaching it."""
    from ..specs.resolve import resolve_arch

    if not callable(resources):
        raise InputError("resources", f"must be a function of one configuration, not a {type(resources).__name__}")
    if min_occupancy is not None and (isinstance(min_occupancy, bool) or not isinstance(min_occupancy, (int, float))
                                      or not 0 <= min_occupancy <= 1):
        raise InputError("min_occupancy", f"expected a number from 0 to 1, got {str(min_occupancy)[:40]!r}")
    try:
        configs = iter(configs)
    except TypeError:
        raise InputError("configs", f"expected an iterable of configurations, not a {type(configs).__name__}") from None
    answers = _Answers(resolve_arch(arch, cuda))
    kept = []
    for index, config in enumerate(configs):
        launch = _config(resources(config), index)
        answer = None if launch is None else answers.answer(*launch)
        if answer is not None and (min_occupancy is None or answer[0] >= min_occupancy):
            kept.append(Pruned(config, *answer))
    return kept


def _config(values, index: int) -> tuple[LaunchConfig, bool] | None:
    """(the LaunchConfig of one configuration's resources, whether opt_in was left unsaid),
    through LaunchConfig's own validation (InputError naming the key and the configuration);
    None for a block larger than any architecture allows, which simply cannot launch."""
    if type(values) is not dict and not isinstance(values, Mapping):
        raise InputError("resources", f"config {index}: resources() must return a mapping, not "
                                      f"{type(values).__name__}")
    try:
        if "num_warps" in values:
            values = dict(values)
            warps = values.pop("num_warps")
            if values.get("block_size") is None and warps is not None:
                values["block_size"] = WARP * parse_int(warps, "num_warps", 1, MAX_THREADS)
        block = values.get("block_size")
        if type(block) is int and block > MAX_THREADS:
            return None
        return LaunchConfig.from_mapping(values, keys=PRUNE_KEYS), values.get("opt_in") is None
    except InputError as exc:
        raise InputError(exc.field, f"config {index}: {exc.detail}") from None


class _Answers:
    """One architecture's answers, each the engine's occupancy of the configuration (the opt-in
    that Triton's launcher makes, where the caller did not say), kept per configuration for this
    call only: configurations with the same resources share one."""

    def __init__(self, arch):
        self.arch = arch
        self.answers: dict[tuple, tuple | None] = {}

    def answer(self, config: LaunchConfig, opt_in_unsaid: bool) -> tuple | None:
        """(occupancy, blocks per SM, limiters), or None where the configuration cannot launch."""
        key = (config, opt_in_unsaid)
        if key in self.answers:
            return self.answers[key]
        arch = self.arch
        if opt_in_unsaid:
            total = config.static_shared_mem + config.dynamic_shared_mem
            config = config._replace(opt_in=total > arch.shared_mem_per_block and bool(arch.shared_mem_opt_in))
        limits = block_limits(arch, config)[0]  # the engine's limits and launch checks, without a whole Occupancy
        blocks = 0 if launch_errors(arch, config, limits) else min(limits.values())
        answer = None
        if blocks > 0:
            warps = -(-config.block_size // arch.warp_size)
            answer = (blocks * warps / arch.max_warps_per_sm, blocks,
                      tuple(name for name, limit in limits.items() if limit == blocks))
        self.answers[key] = answer
        return answer


# ----------------------------------------------------------------------------------- adapters
def triton_early_config_prune(resources: Callable, arch=None, *, min_occupancy: float | None = None):
    """For `triton.autotune(configs, key, prune_configs_by={"early_config_prune": ...})`:
    keeps the configs that can launch. `resources(config, named_args)` returns the mapping
    `prune` reads (num_warps defaults to config.num_warps); `arch=None` is this device.
    If none can launch, the configs are returned unchanged, so that Triton reports its own error."""

    def early_config_prune(configs, named_args, **kwargs):
        from ..probes.driver import current_device_arch

        target = arch or current_device_arch()
        if target is None:
            raise InputError("arch", "no CUDA device found; give triton_early_config_prune(..., arch='sm_90')")
        configs = list(configs)

        def values(config):
            found = dict(resources(config, named_args))
            if "block_size" not in found:
                found.setdefault("num_warps", getattr(config, "num_warps", None))
            return found

        kept = [p.config for p in prune(configs, target, values, min_occupancy=min_occupancy)]
        return kept or configs

    return early_config_prune


def kernel_tuner_restriction(arch, resources: Callable[[dict], Mapping], *, min_occupancy: float | None = None):
    """A Kernel Tuner restriction (`tune_kernel(..., restrictions=[...])`): a function of the
    tunable parameters that is True where the configuration can launch on `arch`."""

    def can_launch(params: dict) -> bool:
        return bool(prune([params], arch, resources, min_occupancy=min_occupancy))

    return can_launch
