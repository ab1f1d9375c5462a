"""Records, on a machine with an NVIDIA GPU, Triton, CuPy and Numba, real kernel caches of the
Python GPU frameworks and what the CUDA driver says about every kernel in them, so the CPU
tests can hold `tuneadvise lint DIR` and `tuneadvise.analyze_compiled` to the driver:

  python tests/gpu/record_python_caches.py OUTDIR

Built here:
- a Triton cache (TRITON_CACHE_DIR): a few kernels, autotune variants of one matmul with
  different num_warps/num_stages, one config needing more shared memory than a block may
  have (it cannot launch) and configs that spill;
- a CuPy kernel cache (CUPY_CACHE_DIR) from RawKernel/RawModule/ElementwiseKernel code;
- Numba CUDA kernels (their cubins written out beside the cache).

For each cubin the driver's cuFuncGetAttribute figures (NUM_REGS, SHARED_SIZE_BYTES,
LOCAL_SIZE_BYTES, MAX_THREADS_PER_BLOCK) are recorded, and
cuOccupancyMaxActiveBlocksPerMultiprocessor at the framework's launch: for Triton 32 *
num_warps threads with the metadata's `shared` bytes of dynamic shared memory, opted in
above 48 KB as Triton's launcher does (and, where the kernel was loaded by Triton itself,
through Triton's own function handle). The in-process objects' own answers (Triton's
n_regs/n_spills, CuPy's attributes, Numba's get_regs_per_thread...) are kept beside them.

Output: OUTDIR/python_caches.tar.gz (triton_cache/, cupy_cache/, numba/, driver.json) and
OUTDIR/record.log. Only the cubins and Triton's .json metadata are packed (small).
"""

import ctypes
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
import traceback

OUT = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="python_caches_")
STARTED = time.time()
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.makedirs(OUT, exist_ok=True)
TRITON_DIR = os.path.join(WORK, "triton_cache")
CUPY_DIR = os.path.join(WORK, "cupy_cache")
NUMBA_DIR = os.path.join(WORK, "numba")
INDUCTOR_DIR = os.path.join(WORK, "inductor_cache")
os.environ["TRITON_CACHE_DIR"] = TRITON_DIR
os.environ["CUPY_CACHE_DIR"] = CUPY_DIR
os.environ["TORCHINDUCTOR_CACHE_DIR"] = INDUCTOR_DIR
os.makedirs(NUMBA_DIR)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_driver import check, cuda, function_attributes, occupancy, open_device  # noqa: E402  (this directory)

LOG = open(os.path.join(OUT, "record.log"), "w")


def log(*parts):
    text = " ".join(str(p) for p in parts)
    print(text, flush=True)
    LOG.write(text + "\n")
    LOG.flush()


def attempt(what, fn, *args):
    started = time.time()
    try:
        value = fn(*args)
        log(f"ok   {what} ({time.time() - started:.1f} s)")
        return value
    except Exception:  # record what failed and carry on: the other sections still count
        log(f"FAIL {what}\n{traceback.format_exc()}")
        return None


device = open_device(0)


def dev_attr(code):
    value = ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(value), code, device), f"cuDeviceGetAttribute {code}")
    return value.value


driver_version = ctypes.c_int()
cuda.cuDriverGetVersion(ctypes.byref(driver_version))
DEVICE = {
    "major": dev_attr(75), "minor": dev_attr(76), "sm_count": dev_attr(16),
    "max_shared_per_block": dev_attr(8), "max_shared_per_block_optin": dev_attr(97),
    "max_shared_per_sm": dev_attr(81), "max_regs_per_sm": dev_attr(82), "driver_version": driver_version.value,
}
SM = f"sm_{DEVICE['major']}{DEVICE['minor']}"
OPTIN = DEVICE["max_shared_per_block_optin"]
log("device", DEVICE)

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_CACHE_PREFER_SHARED = 1


def as_function(handle):
    """A CUfunction from a framework's handle (an int, or a cuda-python object)."""
    if isinstance(handle, ctypes.c_void_p):
        return handle
    for convert in (int, lambda h: int(h.value), lambda h: int(h.getPtr())):
        try:
            return ctypes.c_void_p(convert(handle))
        except Exception:
            continue
    raise TypeError(f"cannot read a CUfunction from {type(handle)!r}")


def occupancy_row(func, block, dynamic):
    status, blocks = occupancy(func, block, dynamic)
    return {"block": block, "dynamic": dynamic, "status": status, "blocks": blocks if status == 0 else None}


def load_cubin(data: bytes, name: str):
    module = ctypes.c_void_p()
    image = ctypes.create_string_buffer(data, len(data))
    check(cuda.cuModuleLoadData(ctypes.byref(module), image), f"cuModuleLoadData for {name}")
    func = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(func), module, name.encode()), f"cuModuleGetFunction {name}")
    return func


def triton_like_opt_in(func, shared):
    """What Triton's launcher does after loading a kernel whose `shared` passes 48 KB."""
    if shared > 49152 and OPTIN > 49152:
        cuda.cuFuncSetCacheConfig(func, CU_FUNC_CACHE_PREFER_SHARED)
        static = function_attributes(func)["shared_size_bytes"]
        return cuda.cuFuncSetAttribute(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, OPTIN - static)
    return None


def dynamic_sweep(shared):
    return sorted({0, 1024, 16384, 49152, shared, max(0, shared - 4096), OPTIN})


def driver_for_cubin(data, name, block, dynamic, opt_in_like_triton):
    """The driver's answers for kernel `name` of a freshly loaded cubin."""
    func = load_cubin(data, name)
    record = {"attributes": function_attributes(func)}
    record["plain"] = occupancy_row(func, block, dynamic)
    if opt_in_like_triton:
        record["opt_in_status"] = triton_like_opt_in(func, dynamic)
        record["attributes_after_opt_in"] = function_attributes(func)
    record["launch"] = occupancy_row(func, block, dynamic)
    record["sweep"] = [occupancy_row(func, b, d) for b in sorted({32, 128, 256, block, 1024})
                       for d in dynamic_sweep(dynamic) if b <= record["attributes"]["max_threads_per_block"]]
    return record


# --------------------------------------------------------------------------------------- Triton
TRITON_LIVE = {}  # cache-entry name+config -> what the live CompiledKernel said


def triton_section():
    import torch
    import triton
    import triton.language as tl

    log("triton", triton.__version__, "torch", torch.__version__)

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid = tl.program_id(0)
        grid_n = tl.cdiv(N, BLOCK_N)
        pm, pn = pid // grid_n, pid % grid_n
        rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _ in range(0, tl.cdiv(K, BLOCK_K)):
            acc += tl.dot(tl.load(a), tl.load(b))
            a += BLOCK_K * sak
            b += BLOCK_K * sbk
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))

    x = torch.randn(1 << 16, device="cuda")
    y = torch.randn_like(x)
    out = torch.empty_like(x)
    for block, warps in ((1024, 4), (4096, 8)):
        kernel = add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block, num_warps=warps)
        keep_live("add_kernel", kernel)
    s_in = torch.randn(64, 1000, device="cuda")
    s_out = torch.empty_like(s_in)
    kernel = softmax_kernel[(64,)](s_out, s_in, s_in.stride(0), 1000, BLOCK=1024, num_warps=8)
    keep_live("softmax_kernel", kernel)

    M = N = K = 1024
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    variants = [  # (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, extra)
        (64, 64, 32, 4, 2, {}), (64, 64, 32, 4, 3, {}), (128, 128, 32, 4, 3, {}), (128, 128, 64, 8, 3, {}),
        (128, 128, 64, 8, 4, {}), (128, 256, 64, 8, 3, {}), (64, 128, 64, 4, 4, {}),
        (256, 256, 128, 8, 4, {}),  # needs far more shared memory than a block may have: cannot launch
        (128, 128, 32, 2, 2, {}),  # 128x128 fp32 accumulator over 64 threads: spills
        (128, 128, 64, 4, 3, {"maxnreg": 128}),  # capped registers: spills
    ]
    for bm, bn, bk, warps, stages, extra in variants:
        def launch(bm=bm, bn=bn, bk=bk, warps=warps, stages=stages, extra=extra):
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
            kernel = matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                         c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                         num_warps=warps, num_stages=stages, **extra)
            keep_live("matmul_kernel", kernel, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, **extra})
        attempt(f"triton matmul {bm}x{bn}x{bk} w{warps} s{stages} {extra}", launch)

    configs = [triton.Config({"BLOCK": 256}, num_warps=1, num_stages=1),
               triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
               triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=3)]

    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)

    scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel(), 2.0)
    torch.cuda.synchronize()
    log("autotune best:", scale_kernel.best_config)


def keep_live(name, kernel, constants=None):
    """Triton's own view of a compiled kernel, and the driver's through Triton's handle."""
    md = kernel.metadata
    md = md._asdict() if hasattr(md, "_asdict") else dict(md.__dict__)
    entry = {"name": name, "constants": constants or {}, "metadata": jsonable(md),
             "asm_keys": sorted(kernel.asm.keys())}
    try:
        kernel._init_handles()
    except Exception as error:  # OutOfResources: kept as Triton's answer
        entry["init_error"] = f"{type(error).__name__}: {error}"
    for attr in ("n_regs", "n_spills", "n_max_threads"):
        entry[attr] = getattr(kernel, attr, None)
    handle = getattr(kernel, "function", None)
    if handle is not None and "init_error" not in entry:
        func = as_function(handle)
        entry["driver_via_triton_handle"] = {
            "attributes": function_attributes(func),
            "launch": occupancy_row(func, 32 * md["num_warps"], md["shared"]),
        }
    TRITON_LIVE.setdefault(md.get("hash", name), entry)


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if hasattr(value, "_asdict"):
        return jsonable(value._asdict())
    return repr(value)


def triton_cache_rows(cache_dir, label):
    rows = []
    for root, _dirs, files in os.walk(cache_dir):
        for meta_name in sorted(f for f in files if f.endswith(".json") and not f.startswith("__grp__")):
            stem = meta_name[:-5]
            cubin = os.path.join(root, stem + ".cubin")
            if not os.path.exists(cubin):
                continue
            meta = json.load(open(os.path.join(root, meta_name)))
            data = open(cubin, "rb").read()
            block = 32 * meta.get("num_warps", 4)
            row = {"cache": label, "entry": os.path.relpath(cubin, cache_dir), "name": meta.get("name"),
                   "block": block, "shared": meta.get("shared", 0)}
            try:
                row["driver"] = driver_for_cubin(data, meta["name"], block, meta.get("shared", 0), True)
            except Exception as error:
                row["driver_error"] = f"{error}"
            row["live"] = TRITON_LIVE.get(meta.get("hash"))
            rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------- CuPy
CUPY_SOURCE = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void transpose_tiled(const float* in, float* out, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void block_sum_dynamic(const float* in, float* out, int n) {
    extern __shared__ float part[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}
extern "C" __global__ void __launch_bounds__(256, 4) bounded_poly(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float x = in[i]; out[i] = ((x * 3.f + 2.f) * x + 1.f) * x; }
}
extern "C" __global__ void local_array(const int* idx, float* out, int n) {
    float scratch[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 256; ++k) scratch[k] = k * 0.5f + i;
    if (i < n) out[i] = scratch[idx[i] & 255] + scratch[(idx[i] * 7) & 255];
}
extern "C" __global__ void __launch_bounds__(1024, 1) many_registers(const float* in, float* out, int n) {
    float acc[48];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = in[(i + k * 97) % n];
    #pragma unroll
    for (int r = 0; r < 8; ++r) {
        #pragma unroll
        for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + r + 1) % 48] + 1.0f;
    }
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < 48; ++k) s += acc[k];
    if (i < n) out[i] = s;
}
"""
SINGLE_SOURCE = r"""
extern "C" __global__ void scale_by(float* x, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= alpha;
}
"""
CUPY_LAUNCH = {  # kernel -> (block threads, dynamic shared bytes) as the example launches it
    "vec_add": (256, 0), "transpose_tiled": (1024, 0), "block_sum_dynamic": (512, 2048), "bounded_poly": (256, 0),
    "local_array": (128, 0), "many_registers": (1024, 0), "scale_by": (256, 0),
}
CUPY_LIVE = []


def cupy_section():
    import cupy

    log("cupy", cupy.__version__)
    module = cupy.RawModule(code=CUPY_SOURCE)
    for name, (block, dynamic) in CUPY_LAUNCH.items():
        if name == "scale_by":
            continue
        kernel = module.get_function(name)
        attrs = dict(getattr(kernel, "attributes", {}))
        func = as_function(getattr(kernel, "kernel", kernel).ptr)
        CUPY_LIVE.append({"name": name, "block": block, "dynamic": dynamic, "cupy_attributes": jsonable(attrs),
                          "driver": {"attributes": function_attributes(func),
                                     "launch": occupancy_row(func, block, dynamic)}})
    single = cupy.RawKernel(SINGLE_SOURCE, "scale_by")
    single(((4,)), (256,), (cupy.ones(1024, dtype=cupy.float32), cupy.float32(3.0), cupy.int32(1024)))
    func = as_function(single.kernel.ptr)
    CUPY_LIVE.append({"name": "scale_by", "raw_kernel": True, "block": 256, "dynamic": 0,
                      "cupy_attributes": jsonable(dict(single.attributes)),
                      "driver": {"attributes": function_attributes(func), "launch": occupancy_row(func, 256, 0)}})
    square = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "square_it")
    square(cupy.arange(1024, dtype=cupy.float32))
    cupy.cuda.Device().synchronize()


def cupy_cache_rows():
    rows = []
    for root, _dirs, files in os.walk(CUPY_DIR):
        for name in sorted(files):
            path = os.path.join(root, name)
            data = open(path, "rb").read()
            rows.append({"cache": "cupy", "entry": os.path.relpath(path, CUPY_DIR), "size": len(data),
                         "head": data[:48].hex()})
    return rows


def cupy_driver_rows(rows):
    """The driver's answers per function of each cached cubin (CuPy stores an md5 header first)."""
    sys.path.insert(0, os.getcwd())
    try:
        from tuneadvise.advisor.readers.cubin import read_cubin
    except Exception as error:
        log("tuneadvise not importable, CuPy entries get no per-function rows:", error)
        return
    for row in rows:
        data = open(os.path.join(CUPY_DIR, row["entry"]), "rb").read()
        start = data.find(b"\x7fELF")
        if start < 0:
            continue
        cubin = data[start:]
        row["elf_offset"] = start
        row["functions"] = []
        for kernel in read_cubin(cubin):
            block, dynamic = CUPY_LAUNCH.get(kernel.name, (256, 0))
            try:
                row["functions"].append({"name": kernel.name, **driver_for_cubin(cubin, kernel.name, block, dynamic, False)})
            except Exception as error:
                row["functions"].append({"name": kernel.name, "driver_error": str(error)})


# ---------------------------------------------------------------------------------------- Numba
NUMBA_LIVE = []


def numba_section():
    import numpy as np

    if not hasattr(np, "row_stack"):  # removed in NumPy 2.5, still registered by numba-cuda 0.x
        np.row_stack = np.vstack
    import numba
    from numba import cuda as ncuda

    log("numba", numba.__version__)

    @ncuda.jit
    def saxpy(a, x, y, out):
        i = ncuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    @ncuda.jit
    def shared_reverse(x, out):
        tile = ncuda.shared.array(256, numba.float32)
        t = ncuda.threadIdx.x
        i = ncuda.grid(1)
        if i < x.size:
            tile[t] = x[i]
        ncuda.syncthreads()
        if i < x.size:
            out[i] = tile[255 - t]

    @ncuda.jit
    def local_scratch(idx, out):
        scratch = ncuda.local.array(512, numba.float32)
        i = ncuda.grid(1)
        for k in range(512):
            scratch[k] = k * 0.25 + i
        if i < out.size:
            out[i] = scratch[idx[i] % 512]

    n = 4096
    x = ncuda.to_device(np.arange(n, dtype=np.float32))
    y = ncuda.to_device(np.ones(n, dtype=np.float32))
    out = ncuda.device_array(n, dtype=np.float32)
    idx = ncuda.to_device((np.arange(n) * 13 % 512).astype(np.int32))
    saxpy[n // 128, 128](np.float32(2.0), x, y, out)
    shared_reverse[n // 256, 256](x, out)
    local_scratch[n // 64, 64](idx, out)
    ncuda.synchronize()
    cc = (DEVICE["major"], DEVICE["minor"])
    for dispatcher, block in ((saxpy, 128), (shared_reverse, 256), (local_scratch, 64)):
        for sig, kernel in dispatcher.overloads.items():
            entry = {"python_name": dispatcher.py_func.__name__, "signature": str(sig), "block": block}
            for prop in ("regs_per_thread", "shared_mem_per_block", "local_mem_per_thread", "max_threads_per_block",
                         "const_mem_size", "entry_name"):
                try:
                    entry[prop] = getattr(kernel, prop)
                except Exception as error:
                    entry[prop] = f"error: {error}"
            entry["function_name"] = entry["entry_name"]
            library = getattr(kernel, "_codelibrary", None) or getattr(kernel, "library", None)
            try:
                cubin = library.get_cubin(cc=cc)
                cubin = bytes(getattr(cubin, "code", cubin))
                path = os.path.join(NUMBA_DIR, f"{entry['python_name']}.cubin")
                open(path, "wb").write(cubin)
                entry["cubin"] = os.path.basename(path)
            except Exception as error:
                entry["cubin_error"] = f"{type(error).__name__}: {error}"
            try:
                handle = library.get_cufunc().handle
                entry["handle_type"] = type(handle).__name__
                func = as_function(handle)
                if "CUkernel" in entry["handle_type"]:  # cuda.core loads libraries: a context-less kernel
                    resolved = ctypes.c_void_p()
                    check(cuda.cuKernelGetFunction(ctypes.byref(resolved), func), "cuKernelGetFunction")
                    func = resolved
                entry["driver"] = {"attributes": function_attributes(func), "launch": occupancy_row(func, block, 0)}
            except Exception as error:
                entry["driver_error"] = f"{type(error).__name__}: {error}"
            if "cubin" in entry:
                try:
                    entry["driver_fresh"] = driver_for_cubin(open(os.path.join(NUMBA_DIR, entry["cubin"]), "rb").read(),
                                                             entry["function_name"], block, 0, False)
                except Exception as error:
                    entry["driver_fresh_error"] = str(error)
            NUMBA_LIVE.append(entry)


# ------------------------------------------------------------------------------------ Inductor
def inductor_section():
    import torch

    os.environ.pop("TRITON_CACHE_DIR")  # Inductor then keeps its kernels in its own output directory
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "0"

    def f(x, y):
        return torch.softmax(x @ y, dim=-1) * 2.0 + torch.sin(x).sum()

    compiled = torch.compile(f)
    x = torch.randn(256, 256, device="cuda")
    compiled(x, x)
    torch.cuda.synchronize()


# ----------------------------------------------------------------------------------------- main
record = {"device": DEVICE, "arch": SM, "sections": {}}
ONLY = os.environ.get("RECORD_ONLY")  # e.g. "numba": just that section
if ONLY in (None, "triton"):
    attempt("triton", triton_section)
if ONLY in (None, "cupy"):
    attempt("cupy", cupy_section)
cupy_rows = cupy_cache_rows()
attempt("cupy driver rows", cupy_driver_rows, cupy_rows)
record["cupy"] = {"cache": cupy_rows, "live": CUPY_LIVE}
if ONLY in (None, "numba"):
    attempt("numba", numba_section)
record["numba"] = NUMBA_LIVE
if ONLY is None and time.time() - STARTED < 300:
    attempt("inductor", inductor_section)
    record["inductor"] = attempt("inductor rows", triton_cache_rows, INDUCTOR_DIR, "inductor") or []
record["triton"] = attempt("triton cache rows", triton_cache_rows, TRITON_DIR, "triton") or []
with open(os.path.join(WORK, "driver.json"), "w") as handle:
    json.dump(record, handle, indent=1, default=repr)

packed = os.path.join(OUT, "python_caches.tar.gz")
with tarfile.open(packed, "w:gz") as tar:
    tar.add(os.path.join(WORK, "driver.json"), "driver.json")
    for root, _dirs, files in os.walk(WORK):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, WORK)
            top = rel.split(os.sep)[0]
            keep = (top in ("triton_cache", "inductor_cache") and (name.endswith(".cubin") or name.endswith(".json"))) \
                or top in ("cupy_cache", "numba")
            if keep and os.path.getsize(path) < 1_000_000:
                tar.add(path, rel)
log(f"packed {os.path.getsize(packed)} bytes; triton entries {len(record['triton'])}, cupy files {len(cupy_rows)}, "
    f"numba kernels {len(NUMBA_LIVE)}, inductor entries {len(record.get('inductor', []))}")
