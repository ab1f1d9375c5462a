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
answer is the engine's (`tuneadvise.advisor.analyze`): each resource's limit comes from its
cached table (advisor/engine/cache.py), so thousands of configurations cost milliseconds;
benchmarks/prune.py measures it. Configurations with the same resources share one answer.

What it cannot know: before compiling, registers and spills are the caller's estimate, and a
configuration that launches may still spill or run slowly; the answer is occupancy, not speed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from .engine.cache import shape_limits, shared_mem_limits
from .engine.occupancy import block_limits, cluster_errors
from .inputs import InputError
from .launch import CARVEOUT_DEFAULT, LaunchConfig

WARP = 32
_KEYS = frozenset({"registers", "block_size", "num_warps", "shared_mem", "dynamic_shared_mem", "opt_in",
                   "cluster_size", "max_threads_per_block"})
_LIMITS = {"registers": 255, "block_size": 1 << 20, "num_warps": 1 << 15, "shared_mem": 1 << 30,
           "dynamic_shared_mem": 1 << 30, "cluster_size": 64, "max_threads_per_block": 1 << 20}


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
    table = _Table(resolve_arch(arch, cuda))
    kept = []
    for index, config in enumerate(configs):
        answer = table.answer(_key(resources(config), index))
        if answer is not None and (min_occupancy is None or answer[0] >= min_occupancy):
            kept.append(Pruned(config, *answer))
    return kept


def _key(values, index: int) -> tuple:
    """(registers, block, static, dynamic, opt_in or None, cluster, bound), validated."""
    try:
        get = values.get
        registers, block, warps = get("registers"), get("block_size"), get("num_warps")
        static, dynamic, opt_in = get("shared_mem", 0), get("dynamic_shared_mem", 0), get("opt_in")
        cluster, bound = get("cluster_size"), get("max_threads_per_block")
    except AttributeError:
        raise InputError("resources", f"config {index}: resources() must return a mapping, not "
                                      f"{type(values).__name__}") from None
    if len(values) > 2 and not _KEYS.issuperset(values):
        unknown = ", ".join(sorted(map(str, set(values) - _KEYS)))[:200]
        raise InputError("resources", f"config {index}: unknown key(s) {unknown}; allowed: {', '.join(sorted(_KEYS))}")
    if block is None and warps is not None:
        block = WARP * _whole(warps, "num_warps", index)
    key = (registers, block, static, dynamic, opt_in, cluster, bound)
    if type(registers) is int and type(block) is int and type(static) is int and type(dynamic) is int \
            and 0 <= registers <= 255 and 1 <= block <= 1 << 20 and 0 <= static <= 1 << 30 and 0 <= dynamic <= 1 << 30 \
            and (opt_in is None or type(opt_in) is bool) and cluster is None and bound is None:
        return key  # the usual case, checked without a call per field
    if registers is None:
        raise InputError("registers", f"config {index}: registers is needed (an estimate before compiling)")
    if block is None:
        raise InputError("block_size", f"config {index}: block_size or num_warps is needed")
    for name, value in zip(("registers", "block_size", "shared_mem", "dynamic_shared_mem", "cluster_size",
                            "max_threads_per_block"), (registers, block, static, dynamic, cluster, bound)):
        _whole(value, name, index)
    if block < 1:
        raise InputError("block_size", f"config {index}: a block needs at least one thread")
    if opt_in is not None and not isinstance(opt_in, bool):
        raise InputError("opt_in", f"config {index}: opt_in must be True, False or absent")
    return key


def _whole(value, key: str, index: int):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _LIMITS[key]:
        raise InputError(key, f"config {index}: expected a whole number from 0 to {_LIMITS[key]}, "
                              f"got {str(value)[:40]!r}")
    return value


class _Table:
    """One architecture's answers, built from the engine's cached limit tables: each resource's
    limit as block_limits computes it, and the launch errors as launch_errors finds them (the
    cluster's through the engine's own check). Answers are kept per key for this call only."""

    def __init__(self, arch):
        self.arch = arch
        probe = block_limits(arch, LaunchConfig(registers=0, block_size=WARP))[0]
        self.fixed = [v for k, v in probe.items() if k not in ("warps", "registers", "shared_memory")]
        self.fixed_names = [k for k in probe if k not in ("warps", "registers", "shared_memory")]
        self.answers: dict[tuple, tuple | None] = {}

    def answer(self, key: tuple) -> tuple | None:
        """(occupancy, blocks per SM, limiters), or None where the configuration cannot launch."""
        answers = self.answers
        if key in answers:
            return answers[key]
        arch = self.arch
        registers, block, static, dynamic, opt_in, cluster, bound = key
        if opt_in is None:
            opt_in = static + dynamic > arch.shared_mem_per_block and bool(arch.shared_mem_opt_in)
        answer = None
        if block <= arch.max_threads_per_block and registers <= arch.max_registers_per_thread \
                and static <= arch.shared_mem_per_block and (bound is None or block <= bound):
            warps_limit, registers_limit, _ = shape_limits(arch, registers, block)
            smem_limit = shared_mem_limits(arch, static, dynamic, CARVEOUT_DEFAULT, opt_in)[0]
            limits = (warps_limit, registers_limit, smem_limit, *self.fixed)
            blocks = min(limits)
            if blocks > 0 and not (cluster is not None and cluster > 1 and cluster_errors(
                    arch, LaunchConfig(registers=registers, block_size=block, cluster_size=cluster))):
                names = ("warps", "registers", "shared_memory", *self.fixed_names)
                warps = -(-block // arch.warp_size)
                answer = (blocks * warps / arch.max_warps_per_sm, blocks,
                          tuple(n for n, v in zip(names, limits) if v == blocks))
        answers[key] = answer
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
