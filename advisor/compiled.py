"""Occupancy of a kernel already compiled in this process, from what the object itself
holds, without a profiler: a Triton CompiledKernel, a CuPy RawKernel (or a RawModule's
function), a Numba CUDA dispatcher or kernel, or a cubin (a path or its bytes; a CuPy
cache file too).

    >>> from tuneadvise import analyze_compiled
    >>> result = analyze_compiled("tests/fixtures/python_caches/numba/saxpy.cubin",
    ...                           arch="sm_90", block_size=128)
    >>> result.kernel.registers, result.active_blocks_per_sm
    (15, 16)

Where each figure comes from:
- Triton: registers, static shared memory and local memory from the cubin in `asm["cubin"]`;
  the launch Triton makes from its metadata: 32 * num_warps threads, `shared` bytes of dynamic
  shared memory, opted in above 48 KB, clusters of num_ctas (or cluster_dims) blocks.
- CuPy: `attributes` (CuPy's cuFuncGetAttribute answers): NUM_REGS, SHARED_SIZE_BYTES,
  LOCAL_SIZE_BYTES, MAX_THREADS_PER_BLOCK; opted in where MAX_DYNAMIC_SHARED_SIZE_BYTES was
  raised past 48 KB less the static shared memory.
- Numba: the kernel's regs_per_thread, shared_mem_per_block, local_mem_per_thread and
  max_threads_per_block (the driver's answers); a dispatcher with several signatures needs one
  picked: `dispatcher.overloads[signature]`.
- A cubin: the reader of `tuneadvise lint`; `kernel=` picks one of several.

`arch=None` means the device of the current CUDA context (device 0 without one) when a CUDA
driver is present; without one, the architecture the object was compiled for.
`block_size` and `dynamic_shared_mem` default to Triton's launch; CuPy, Numba and cubin
kernels are launched with what each call says, so they need `block_size`.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from .engine.occupancy import Occupancy
from .inputs import InputError


class Resources(NamedTuple):
    """What a compiled kernel uses, and the launch its framework makes (None: chosen per call)."""

    framework: str
    name: str
    registers: int
    static_shared_mem: int
    local_bytes: int | None
    max_threads: int | None
    arch: str | None  # the target the object was compiled for, sm_XX
    block_size: int | None = None
    dynamic_shared_mem: int = 0
    opt_in: bool = False
    cluster_size: int | None = None


def analyze_compiled(obj, arch=None, block_size=None, dynamic_shared_mem=None, *, kernel: str | None = None,
                     opt_in: bool | None = None, cuda: str | None = None) -> Occupancy:
    """The occupancy of compiled kernel `obj` (see the module's help for what it accepts), as
    `tuneadvise.advisor.analyze` computes it. `kernel` picks a kernel of a cubin by name; `opt_in`
    says whether cudaFuncAttributeMaxDynamicSharedMemorySize was raised (default: what the object
    says, or for Triton what its launcher does for this amount of dynamic shared memory)."""
    from ..probes.driver import current_device_arch
    from . import analyze
    from .readers.kernel_caches import OPT_IN_ABOVE

    found = resources_of(obj, kernel)
    arch = arch if arch is not None else (current_device_arch() or found.arch)
    if arch is None:
        raise InputError("arch", f"no CUDA device here and the {found.framework} kernel {found.name!r} does "
                                 "not say what it was compiled for; give arch='sm_90' or a product name")
    block = block_size if block_size is not None else found.block_size
    if block is None:
        raise InputError("block_size", f"needed for the {found.framework} kernel {found.name!r} (its "
                                       "launch is chosen at each call)")
    dynamic = dynamic_shared_mem if dynamic_shared_mem is not None else found.dynamic_shared_mem
    values = {"registers": found.registers, "shared_mem": found.static_shared_mem, "block_size": block,
              "dynamic_shared_mem": dynamic, "opt_in": found.opt_in,
              "max_threads_per_block": found.max_threads, "stack_frame": found.local_bytes,
              "cluster_size": found.cluster_size}
    if found.arch is not None and arch != found.arch:
        values["compiled_for"] = found.arch
    if dynamic_shared_mem is not None and found.framework == "triton":
        values["opt_in"] = _parse_dynamic(dynamic) > OPT_IN_ABOVE  # as Triton would, for this amount
    if opt_in is not None:
        values["opt_in"] = opt_in
    return analyze(arch, cuda=cuda, **{k: v for k, v in values.items() if v is not None})


def _parse_dynamic(value) -> int:
    from .inputs import parse_size

    return parse_size(value, "dynamic_shared_mem")


def resources_of(obj, kernel: str | None = None) -> Resources:
    """Resources from any object analyze_compiled accepts; InputError for anything else."""
    if isinstance(obj, (bytes, bytearray, memoryview, str, os.PathLike)):
        return _cubin_resources(obj, kernel)
    metadata, asm = getattr(obj, "metadata", None), getattr(obj, "asm", None)
    if metadata is not None and asm is not None:
        return _triton_resources(metadata, asm)
    attributes = getattr(obj, "attributes", None)
    if attributes is not None and _get(attributes, "num_regs") is not None:
        return _cupy_resources(obj, attributes)
    overloads = getattr(obj, "overloads", None)
    if isinstance(overloads, dict):
        if len(overloads) != 1:
            raise InputError("obj", f"a Numba dispatcher with {len(overloads)} compiled signatures; pick one: "
                                    "dispatcher.overloads[signature] (compile it first by calling it)")
        return _numba_resources(next(iter(overloads.values())), getattr(obj, "py_func", None))
    if hasattr(obj, "regs_per_thread"):
        return _numba_resources(obj, getattr(obj, "py_func", None))
    raise InputError("obj", f"a {type(obj).__name__} is not a compiled kernel; give a Triton CompiledKernel, "
                            "a CuPy RawKernel, a Numba CUDA dispatcher, or a cubin path or bytes")


def _get(source, key):
    if isinstance(source, dict):
        return source.get(key)
    return getattr(source, key, None)


def _whole(value, what: str, low: int = 0, high: int = 1 << 31) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(what, f"expected a whole number from {low} to {high}, got {str(value)[:40]!r}")
    return value


def _one_kernel(data: bytes, kernel: str | None, where: str):
    from .readers.cubin import CubinError, read_cubin

    try:
        kernels = read_cubin(data)
    except CubinError as exc:
        raise InputError("obj", f"{where}: {exc}") from None
    if kernel is not None:
        from .readers.demangle import name_matches

        kernels = [k for k in kernels if k.name == kernel or name_matches(k.name, kernel)]
    if len(kernels) != 1:
        names = ", ".join(k.name for k in read_cubin(data))[:400]
        raise InputError("kernel", f"{where} holds {names or 'no kernel'}; name one with kernel= (its mangled "
                                   "or demangled name, or a glob that matches one)")
    return kernels[0]


def _cubin_resources(obj, kernel: str | None) -> Resources:
    from ..specs.files import MAX_CUBIN_BYTES, read_bounded
    from .readers.kernel_caches import without_cupy_header

    where = "the cubin"
    if isinstance(obj, (str, os.PathLike)):
        where = os.fspath(obj)
        try:
            data = read_bounded(obj, MAX_CUBIN_BYTES, "cubin")
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            reason = exc.strerror if isinstance(exc, OSError) else "a path with a NUL byte"
            raise InputError("obj", f"cannot read {where[:200]!r}: {reason}") from None
    else:
        data = bytes(obj)
    data = without_cupy_header(data)
    found = _one_kernel(data, kernel, where)
    return Resources("cubin", found.name, found.registers, found.shared_mem, found.frame_bytes, found.max_threads,
                     found.arch)


def _triton_resources(metadata, asm) -> Resources:
    from .readers.kernel_caches import MetadataError, triton_entry

    try:
        fields = metadata if isinstance(metadata, dict) else (metadata._asdict() if hasattr(metadata, "_asdict")
                                                              else vars(metadata))
        entry = triton_entry(dict(fields))
    except TypeError:  # vars() of an object without attributes, or fields that are not a mapping
        raise InputError("obj", f"Triton metadata: expected a dict, a namedtuple or an object with attributes, "
                                f"not a {type(metadata).__name__}") from None
    except MetadataError as exc:
        raise InputError("obj", f"Triton metadata: {exc}") from None
    cubin = asm.get("cubin") if isinstance(asm, dict) else None
    if not isinstance(cubin, (bytes, bytearray)):
        raise InputError("obj", "this Triton kernel holds no cubin (asm['cubin']); compile it for a CUDA target")
    found = _one_kernel(bytes(cubin), entry["name"], f"Triton kernel {entry['name']!r}")
    launch = dict(entry["launch"])
    return Resources("triton", entry["name"], found.registers, found.shared_mem, found.frame_bytes, found.max_threads,
                     entry["arch"] or found.arch, launch["block_size"], launch["dynamic_shared_mem"],
                     launch["opt_in"], launch.get("cluster_size"))


def _cupy_resources(obj, attributes) -> Resources:
    from .readers.kernel_caches import OPT_IN_ABOVE

    static = _whole(_get(attributes, "shared_size_bytes") or 0, "shared_size_bytes")
    max_dynamic = _get(attributes, "max_dynamic_shared_size_bytes")
    version = _get(attributes, "binary_version")
    arch = f"sm_{version}" if isinstance(version, int) and 10 <= version < 1000 else None
    return Resources("CuPy", str(getattr(obj, "name", "") or "kernel"), _whole(_get(attributes, "num_regs"), "num_regs"),
                     static, _whole(_get(attributes, "local_size_bytes") or 0, "local_size_bytes"),
                     _whole(_get(attributes, "max_threads_per_block") or 1024, "max_threads_per_block", 1, 1024), arch,
                     opt_in=isinstance(max_dynamic, int) and max_dynamic + static > OPT_IN_ABOVE)


def _numba_resources(kernel, py_func) -> Resources:
    name = getattr(py_func, "__name__", None) or getattr(kernel, "entry_name", None) or "kernel"
    cc = _numba_cc(kernel)
    def field(key, low=0, high=1 << 31):  # getattr with a default: a missing attribute is named as bad input
        return _whole(getattr(kernel, key, None), key, low, high)

    return Resources("Numba", name, field("regs_per_thread"), field("shared_mem_per_block"),
                     field("local_mem_per_thread"), field("max_threads_per_block", 1, 1024), cc)


def _numba_cc(kernel) -> str | None:
    """The architecture Numba compiled for, where the kernel's code library says."""
    library = getattr(kernel, "_codelibrary", None) or getattr(kernel, "library", None)
    for attribute in ("_cc", "cc"):
        cc = getattr(library, attribute, None)
        if isinstance(cc, tuple) and len(cc) == 2 and all(isinstance(v, int) for v in cc):
            return f"sm_{cc[0]}{cc[1]}"
    return None
