"""tuneadvise: an occupancy and tuning advisor for CUDA kernels.

The library lives in `tuneadvise.advisor` (`from tuneadvise.advisor import analyze`).
Two entry points for the Python GPU frameworks are re-exported here, imported only when
first used so that the command line starts fast:

- `tuneadvise.analyze_compiled(obj, arch=None, block_size=None, dynamic_shared_mem=None)`:
  the occupancy of a Triton, CuPy or Numba kernel compiled in this process, or of a cubin;
- `tuneadvise.prune(configs, arch, resources)`: the configurations that can launch, each with
  its occupancy, for autotuners; `tuneadvise.triton_early_config_prune` adapts it to
  `triton.autotune(prune_configs_by={"early_config_prune": ...})`.
"""

_LAZY = {
    "analyze_compiled": "tuneadvise.advisor.compiled",
    "prune": "tuneadvise.advisor.prune",
    "Pruned": "tuneadvise.advisor.prune",
    "triton_early_config_prune": "tuneadvise.advisor.prune",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tuneadvise' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
