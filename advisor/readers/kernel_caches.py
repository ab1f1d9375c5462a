"""Directories as lint input: the kernel caches of the Python GPU frameworks, and
any build output found while walking.

- A Triton cache entry (Triton's own cache, TRITON_CACHE_DIR, or the `triton/`
  folder of a TorchInductor output directory) is a `<name>.cubin` beside its
  `<name>.json` metadata. It is linted as Triton's launcher launches it: blocks
  of 32 * num_warps threads, the metadata's `shared` bytes as dynamic shared
  memory, opted in to the device's maximum when that passes 48 KB (Triton calls
  cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) then), clusters of
  cluster_dims (or num_ctas) blocks, on the architecture the metadata names.
  Each entry keeps its configuration (num_warps, num_stages, ...) as the
  kernel's `variant`, so autotune variants of one kernel are never merged.
- A CuPy kernel cache file (CUPY_CACHE_DIR) is a hex digest of the cubin
  followed by the cubin; the digest is checked. CuPy launches are chosen at
  each call, so these kernels get the configured (or default) launch.
- Other `.cubin`, `.fatbin`, `.o` and `.so` files are read as build output; those with no
  CUDA code in them (Triton's compiled launchers, `cuda_utils*.so`) are passed over.

Entries with the same kernel name from different files stay apart (their
variant names the file). The walk is bounded: symbolic links are not followed,
and at most MAX_FILES files and MAX_METADATA_BYTES of metadata each are read.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

from ...specs.errors import InputError
from ...specs.files import MAX_CUBIN_BYTES, NotRegularFile, open_regular, read_bounded, read_bounded_from
from ..text import quoted
from .cubin import ELF_MAGIC, CubinError, read_cubin
from .usage import (
    NO_CUDA_CODE,
    InputProblem,
    MachineCode,
    ReadResult,
    cubin_records,
    from_cubin_kernel,
    read_usage_opened,
)

MAX_FILES = 100_000  # files looked at in one directory tree
MAX_METADATA_BYTES = 1 << 20  # a Triton .json is a few KB
# Dynamic shared memory per block past which a launch must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize;
# CUDA's default limit is 48 KB): Triton's launcher opts in above it (its driver.c), CuPy's attributes show it.
OPT_IN_ABOVE = 49152
MAX_WARPS = 32  # 1024 threads per block
BUILD_SUFFIXES = (".cubin", ".fatbin", ".o", ".so")
_HEX = frozenset(b"0123456789abcdef")
_DIGESTS = {32: hashlib.md5, 40: hashlib.sha1, 64: hashlib.sha256}  # CuPy's header: the hex digest of the cubin


class MetadataError(InputError):
    """A Triton metadata file that does not say how its kernel is launched."""


def read_directory(root: str | Path, machine_code: MachineCode | None = None) -> ReadResult:
    """Every kernel in a directory tree, with the launch of the framework that cached it."""
    result = ReadResult()
    seen = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        names = set(files)
        for name in sorted(files):
            seen += 1
            if seen > MAX_FILES:
                result.problems.append(InputProblem(str(root), None, f"more than {MAX_FILES} files: the rest "
                                                                     "were not read; name a smaller directory"))
                return _apart(result)
            path = os.path.join(folder, name)
            stem, suffix = os.path.splitext(name)
            if suffix == ".json" and stem + ".cubin" in names and not stem.startswith("__grp__"):
                _read_triton(path, os.path.join(folder, stem + ".cubin"), result, machine_code)
            elif suffix == ".cubin" and stem + ".json" in names:
                continue  # read with its metadata
            elif suffix in BUILD_SUFFIXES and not os.path.islink(path):
                _read_build_output(path, result, machine_code)
    if not result.records and not result.problems:  # nothing checked is not a pass
        result.problems.append(InputProblem(str(root), None, "no kernel in this directory: expected Triton cache "
                                                             "entries (.cubin beside .json), CuPy cache files, or "
                                                             ".cubin/.fatbin/.o/.so files"))
    return _apart(result)


def _cannot_read(path: str, exc: OSError) -> InputProblem:
    if isinstance(exc, NotRegularFile) or os.path.islink(path):
        return InputProblem(path, None, "not a regular file (a link, device or FIFO): not read")
    return InputProblem(path, None, f"cannot read: {exc.strerror}")


def _read_build_output(path: str, result: ReadResult, machine_code: MachineCode | None) -> None:
    """A file of a walk, opened once: a CuPy cache file by its digest header, else build output."""
    try:
        handle = open_regular(path)
        with handle:
            size = _digest_size(handle.peek(80)[:80])
            if size:
                _read_cupy(handle, path, size, result, machine_code)
                return
            one = read_usage_opened(handle, path, machine_code)
    except OSError as exc:
        result.problems.append(_cannot_read(path, exc))
        return
    result.records += one.records
    # A cache holds host code too (Triton's compiled launchers, cuda_utils*.so): named on the
    # command line such a file is an error, found in a walk it is simply not CUDA output.
    result.problems += [p for p in one.problems if p.message != NO_CUDA_CODE]
    result.ptx_only += one.ptx_only


def without_cupy_header(data: bytes) -> bytes:
    """The cubin of a CuPy cache file (its digest header stripped where the digest matches); other data as it is."""
    size = _digest_size(data[:80])
    if size and _DIGESTS[size](data[size:]).hexdigest().encode() == data[:size]:
        return data[size:]
    return data


def _digest_size(head: bytes) -> int:
    """The length of a CuPy cache file's hex digest header, or 0 if `head` does not start with one."""
    for size in _DIGESTS:
        if head[size:size + 4] == ELF_MAGIC and _HEX.issuperset(head[:size]):
            return size
    return 0


def _read_cupy(handle, path: str, size: int, result: ReadResult, machine_code: MachineCode | None) -> None:
    try:
        data = read_bounded_from(handle, MAX_CUBIN_BYTES, "cubin")
    except OSError as exc:
        result.problems.append(_not_read(path, exc, MAX_CUBIN_BYTES))
        return
    cubin = data[size:]
    if _DIGESTS[size](cubin).hexdigest().encode() != data[:size]:
        result.problems.append(InputProblem(path, None, "CuPy cache entry whose cubin does not match its digest "
                                                        "(a partial or corrupt write): not linted"))
        return
    try:
        result.records += cubin_records(cubin, path, machine_code=machine_code)
    except CubinError as exc:
        result.problems.append(InputProblem(path, None, f"CuPy cache entry: {exc}"))


def _read_bytes(path: str, result: ReadResult, limit: int = MAX_CUBIN_BYTES) -> bytes | None:
    try:
        return read_bounded(path, limit, regular_only=True)
    except OSError as exc:
        result.problems.append(_not_read(path, exc, limit))
        return None


def _not_read(path: str, exc: OSError, limit: int) -> InputProblem:
    if exc.errno == errno.EFBIG:
        return InputProblem(path, None, f"larger than {limit} bytes: not read")
    return _cannot_read(path, exc)


def _read_triton(meta_path: str, cubin_path: str, result: ReadResult, machine_code: MachineCode | None) -> None:
    raw = _read_bytes(meta_path, result, MAX_METADATA_BYTES)
    if raw is None:
        return
    try:
        meta = json.loads(raw)
        entry = triton_entry(meta)
    except (ValueError, RecursionError) as exc:  # json's errors are ValueErrors; so is MetadataError
        message = str(exc) if isinstance(exc, MetadataError) else "not JSON"
        result.problems.append(InputProblem(meta_path, None, f"Triton metadata: {message}"))
        return
    data = _read_bytes(cubin_path, result)
    if data is None:
        return
    try:
        kernels = [k for k in read_cubin(data) if k.name == entry["name"]]
    except CubinError as exc:
        result.problems.append(InputProblem(cubin_path, None, str(exc)))
        return
    if not kernels:
        result.problems.append(InputProblem(cubin_path, None, f"no kernel named {entry['name']!r} (from "
                                                              f"{os.path.basename(meta_path)}) in this cubin"))
        return
    record = from_cubin_kernel(kernels[0], cubin_path)
    if machine_code is not None:
        record, = machine_code(data, [record])
    result.records.append(replace(record, arch=entry["arch"] or record.arch, variant=entry["variant"],
                                  launch=entry["launch"], framework="triton"))


def triton_entry(meta) -> dict:
    """From a Triton metadata dict: the kernel's name, its arch (sm_XX, or None), the launch
    Triton makes as LaunchConfig keys, and the variant text naming its configuration."""
    if not isinstance(meta, dict):
        raise MetadataError("expected a JSON object")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise MetadataError("'name' must be the kernel's name")
    warps = _whole(meta, "num_warps", 1, MAX_WARPS, required=True)
    shared = _whole(meta, "shared", 0, 1 << 30, default=0)
    ctas = _whole(meta, "num_ctas", 1, 64, default=1)
    stages = _whole(meta, "num_stages", 0, 1024, default=None)
    cluster = meta.get("cluster_dims")
    size = ctas
    if cluster is not None:
        if not (isinstance(cluster, list) and 1 <= len(cluster) <= 3
                and all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 64 for d in cluster)):
            raise MetadataError("'cluster_dims' must be 1 to 3 whole numbers from 1 to 64")
        size = 1
        for d in cluster:
            size *= d
        size = max(size, ctas)
    launch = [("block_size", 32 * warps), ("dynamic_shared_mem", shared), ("opt_in", shared > OPT_IN_ABOVE)]
    if size > 1:
        launch.append(("cluster_size", size))
    parts = [f"num_warps={warps}"]
    if stages is not None:
        parts.append(f"num_stages={stages}")
    if ctas > 1:
        parts.append(f"num_ctas={ctas}")
    if isinstance(meta.get("maxnreg"), int):
        parts.append(f"maxnreg={meta['maxnreg']}")
    constants = meta.get("constants")
    if isinstance(constants, dict):  # older Triton releases kept the constexprs here
        parts += [f"{k}={v}" for k, v in sorted(constants.items(), key=str) if isinstance(v, (int, float, bool, str))]
    return {"name": name, "arch": _arch(meta.get("target")), "launch": tuple(launch),
            "variant": "triton " + ", ".join(parts)}


def _whole(meta: dict, key: str, low: int, high: int, *, required: bool = False, default=None):
    value = meta.get(key, None)
    if value is None:
        if required:
            raise MetadataError(f"'{key}' is missing")
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MetadataError(f"'{key}' must be a whole number from {low} to {high}, not {quoted(str(value), 40)}")
    return value


def _arch(target) -> str | None:
    """`{"backend": "cuda", "arch": 90}` -> "sm_90"; None where the metadata names none (the cubin's is used)."""
    arch = target.get("arch") if isinstance(target, dict) else None
    if isinstance(arch, bool):
        return None
    if isinstance(arch, int) and 10 <= arch < 1000:
        return f"sm_{arch}"
    if isinstance(arch, str):
        digits = arch.removeprefix("sm_").rstrip("af")
        if digits.isascii() and digits.isdigit() and 2 <= len(digits) <= 3:
            return f"sm_{digits}"
    return None


def _apart(result: ReadResult) -> ReadResult:
    """Name the file in the variant of kernels whose name, arch and variant occur in more than one file,
    so lint reports each one rather than reconciling them as one kernel."""
    files: dict[tuple, set[str]] = {}
    for record in result.records:
        files.setdefault((record.name, record.arch, record.variant), set()).add(record.file)
    result.records = [named_apart(record) if len(files[(record.name, record.arch, record.variant)]) > 1 else record
                      for record in result.records]
    return result


def named_apart(record):
    """The record with its file named in its variant, kept apart from a namesake of another file."""
    where = os.path.basename(os.path.dirname(record.file))[:12] + "/" + os.path.basename(record.file)
    return replace(record, variant=f"{record.variant}; {where}" if record.variant else where)
