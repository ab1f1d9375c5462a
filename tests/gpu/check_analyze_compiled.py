"""On a machine with an NVIDIA GPU, Triton, CuPy and Numba: `tuneadvise.analyze_compiled`
on live kernels of each framework, with arch=None (this device), against
cuOccupancyMaxActiveBlocksPerMultiprocessor asked through each framework's own function
handle (so with whatever attributes the framework set, such as Triton's opt-in):

  python tests/gpu/check_analyze_compiled.py [OUTDIR]

Triton kernels are checked at Triton's launch (32 * num_warps threads, `shared` bytes of
dynamic shared memory); a configuration Triton refuses (OutOfResources) is loaded from its
cubin and opted in as Triton's launcher would. CuPy and Numba kernels are checked over a sweep
of block sizes and dynamic shared memory. Prints one line per framework with the number of
(kernel, launch) pairs where the two agree, and every disagreement; writes OUTDIR/check.json.
"""

import ctypes
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_driver import check, cuda, function_attributes, occupancy, open_device  # noqa: E402  (this directory)

from tuneadvise import analyze_compiled  # noqa: E402
from tuneadvise.probes.driver import current_device_arch  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
device = open_device(0)
ARCH = current_device_arch()
OPTIN = ctypes.c_int()
cuda.cuDeviceGetAttribute(ctypes.byref(OPTIN), 97, device)
BLOCKS = [32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024]
DYNAMIC = [0, 1024, 12288, 40000]
results = {"arch": ARCH, "frameworks": {}}


def as_function(handle):
    return handle if isinstance(handle, ctypes.c_void_p) else ctypes.c_void_p(int(handle))


def driver_blocks(func, block, dynamic):
    status, blocks = occupancy(func, block, dynamic)
    return blocks if status == 0 else 0


def tally(framework, rows):
    same = sum(r["ours"] == r["driver"] for r in rows)
    results["frameworks"][framework] = {"equal": same, "total": len(rows), "rows": rows}
    print(f"{framework}: analyze_compiled equals the driver in {same}/{len(rows)} (kernel, launch) pairs")
    for r in rows:
        if r["ours"] != r["driver"]:
            print("  DIFFERS", r)


def triton_check():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

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

    rows = []
    x = torch.randn(1 << 16, device="cuda")
    kernels = []
    for block, warps in ((256, 1), (1024, 4), (4096, 8), (2048, 16)):
        kernels.append((f"add BLOCK={block} w{warps}",
                        add_kernel.warmup(x, x, x, x.numel(), BLOCK=block, num_warps=warps, grid=(1,))))
    a = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    for bm, bn, bk, warps, stages in ((64, 64, 32, 4, 2), (128, 128, 64, 4, 3), (128, 128, 64, 8, 4), (128, 256, 64, 8, 3),
                                      (64, 256, 64, 4, 5), (256, 128, 64, 8, 4), (256, 256, 128, 8, 4), (128, 128, 32, 2, 2),
                                      (64, 128, 128, 4, 6)):
        compiled = matmul_kernel.warmup(a, a, a, 512, 512, 512, 512, 1, 512, 1, 512, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                        num_warps=warps, num_stages=stages, grid=(1,))
        kernels.append((f"matmul {bm}x{bn}x{bk} w{warps} s{stages}", compiled))
    for label, compiled in kernels:
        md = compiled.metadata
        block, shared = 32 * md.num_warps, md.shared
        try:
            compiled._init_handles()
            func, via = as_function(compiled.function), "triton's handle"
        except Exception as error:  # OutOfResources: load the cubin and opt in as Triton's launcher does
            via = f"cubin ({type(error).__name__})"
            module, func = ctypes.c_void_p(), ctypes.c_void_p()
            image = compiled.asm["cubin"]
            check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.create_string_buffer(image, len(image))), "load")
            check(cuda.cuModuleGetFunction(ctypes.byref(func), module, md.name.encode()), "function")
            if shared > 49152:
                cuda.cuFuncSetCacheConfig(func, 1)
                static = function_attributes(func)["shared_size_bytes"]
                cuda.cuFuncSetAttribute(func, 8, OPTIN.value - static)
        ours = analyze_compiled(compiled)
        rows.append({"kernel": label, "block": block, "dynamic": shared, "via": via,
                     "registers": [ours.kernel.registers, function_attributes(func)["num_regs"]],
                     "ours": ours.active_blocks_per_sm, "driver": driver_blocks(func, block, shared)})
    tally("triton", rows)


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
    if (x < n && y < n) out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void local_array(const int* idx, float* out, int n) {
    float scratch[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 256; ++k) scratch[k] = k * 0.5f + i;
    if (i < n) out[i] = scratch[idx[i] & 255];
}
extern "C" __global__ void __launch_bounds__(256, 2) bounded(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.f;
}
"""


def cupy_check():
    import cupy

    module = cupy.RawModule(code=CUPY_SOURCE)
    rows = []
    for name in ("vec_add", "transpose_tiled", "local_array", "bounded"):
        kernel = module.get_function(name)
        func = as_function(kernel.kernel.ptr if hasattr(kernel, "kernel") else kernel.ptr)
        limit = function_attributes(func)["max_threads_per_block"]
        for block in BLOCKS:
            for dynamic in DYNAMIC:
                if block > limit:
                    continue
                ours = analyze_compiled(kernel, block_size=block, dynamic_shared_mem=dynamic)
                rows.append({"kernel": name, "block": block, "dynamic": dynamic, "ours": ours.active_blocks_per_sm,
                             "driver": driver_blocks(func, block, dynamic)})
    tally("cupy", rows)


def numba_check():
    import numpy as np

    if not hasattr(np, "row_stack"):  # removed in NumPy 2.5, still registered by numba-cuda 0.x
        np.row_stack = np.vstack
    import numba
    from numba import cuda as ncuda

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
            tile[t % 256] = x[i]
        ncuda.syncthreads()
        if i < x.size:
            out[i] = tile[255 - t % 256]

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
    out = ncuda.device_array(n, dtype=np.float32)
    idx = ncuda.to_device((np.arange(n) * 13 % 512).astype(np.int32))
    saxpy[n // 128, 128](np.float32(2.0), x, x, out)
    shared_reverse[n // 256, 256](x, out)
    local_scratch[n // 64, 64](idx, out)
    ncuda.synchronize()
    rows = []
    for dispatcher in (saxpy, shared_reverse, local_scratch):
        kernel = next(iter(dispatcher.overloads.values()))
        library = getattr(kernel, "_codelibrary", None) or getattr(kernel, "library", None)
        handle = library.get_cufunc().handle
        func = as_function(handle)
        if "CUkernel" in type(handle).__name__:
            resolved = ctypes.c_void_p()
            check(cuda.cuKernelGetFunction(ctypes.byref(resolved), func), "cuKernelGetFunction")
            func = resolved
        for block in BLOCKS:
            for dynamic in DYNAMIC:
                ours = analyze_compiled(dispatcher, block_size=block, dynamic_shared_mem=dynamic)
                rows.append({"kernel": dispatcher.py_func.__name__, "block": block, "dynamic": dynamic,
                             "ours": ours.active_blocks_per_sm, "driver": driver_blocks(func, block, dynamic)})
    tally("numba", rows)


print("arch (arch=None resolves to):", ARCH)
for name, fn in (("triton", triton_check), ("cupy", cupy_check), ("numba", numba_check)):
    try:
        fn()
    except Exception:
        print(f"{name}: FAILED\n{traceback.format_exc()}")
        results["frameworks"][name] = {"error": traceback.format_exc()}
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "check.json"), "w") as handle:
    json.dump(results, handle, indent=1)
