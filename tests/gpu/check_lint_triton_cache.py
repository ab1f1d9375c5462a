"""On a machine with an NVIDIA GPU and Triton: build a fresh Triton cache of other kernels
than the recorded fixture's (layer norm, softmax, matmul variants in fp16 and fp32, num_ctas
> 1 where Triton compiles it, configurations too large to launch), run `tuneadvise lint` on
the directory, and compare each entry with the driver: cuFuncGetAttribute(NUM_REGS) and
cuOccupancyMaxActiveBlocksPerMultiprocessor at Triton's launch (32 * num_warps threads, the
metadata's `shared` bytes, opted in above 48 KB as Triton's launcher does).

  python tests/gpu/check_lint_triton_cache.py [OUTDIR]

Prints the number of entries where registers and blocks per SM both agree, and every
disagreement; writes OUTDIR/lint_check.json (the driver's answers and lint's, side by side)
and OUTDIR/triton_cache2.tar.gz (the cubins and metadata).
"""

import ctypes
import json
import os
import sys
import tarfile
import tempfile

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
CACHE = tempfile.mkdtemp(prefix="triton_cache2_")
os.environ["TRITON_CACHE_DIR"] = CACHE
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from cuda_driver import check, cuda, function_attributes, occupancy, open_device  # noqa: E402  (this directory)

device = open_device(0)
OPTIN = ctypes.c_int()
cuda.cuDeviceGetAttribute(ctypes.byref(OPTIN), 97, device)


@triton.jit
def layer_norm(x_ptr, y_ptr, w_ptr, b_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    y = d * rstd * tl.load(w_ptr + cols, mask=mask) + tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, y, mask=mask)


@triton.jit
def softmax(out_ptr, in_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n)


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BLOCK_K * sak
        b += BLOCK_K * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty))


def build():
    x = torch.randn(64, 8192, device="cuda")
    w = torch.ones(8192, device="cuda")
    for block, warps in ((1024, 4), (2048, 8), (8192, 16), (4096, 32)):
        layer_norm.warmup(x, x, w, w, x.stride(0), 8192, 1e-5, BLOCK=block, num_warps=warps, grid=(1,))
        softmax.warmup(x, x, x.stride(0), 8192, BLOCK=block, num_warps=warps, grid=(1,))
    for dtype in (torch.float16, torch.float32):
        a = torch.randn(512, 512, device="cuda", dtype=dtype)
        for bm, bn, bk, warps, stages, ctas in ((64, 64, 64, 4, 3, 1), (128, 128, 32, 4, 4, 1), (128, 64, 64, 4, 5, 1),
                                                (256, 128, 64, 8, 3, 1), (128, 256, 128, 8, 4, 1), (128, 128, 64, 4, 3, 2),
                                                (64, 64, 32, 1, 2, 1), (256, 256, 64, 4, 2, 1)):
            try:
                mm.warmup(a, a, a, 512, 512, 512, 512, 1, 512, 1, 512, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                          num_warps=warps, num_stages=stages, num_ctas=ctas, grid=(1,))
            except Exception as error:  # a configuration Triton cannot compile is simply not in the cache
                print(f"not compiled: {dtype} {bm}x{bn}x{bk} w{warps} s{stages} ctas{ctas}: {type(error).__name__}")


def driver(entry_dir, name, meta):
    data = open(os.path.join(entry_dir, name + ".cubin"), "rb").read()
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.create_string_buffer(data, len(data))), "load")
    check(cuda.cuModuleGetFunction(ctypes.byref(func), module, meta["name"].encode()), "function")
    shared = meta["shared"]
    if shared > 49152:
        cuda.cuFuncSetCacheConfig(func, 1)
        cuda.cuFuncSetAttribute(func, 8, OPTIN.value - function_attributes(func)["shared_size_bytes"])
    status, blocks = occupancy(func, 32 * meta["num_warps"], shared)
    return {"attributes": function_attributes(func), "status": status, "blocks": blocks if status == 0 else 0}


build()
from tuneadvise.advisor.lint.run import LintOptions, lint_paths  # noqa: E402

report = lint_paths([CACHE], LintOptions())
linted = {os.path.relpath(k.usage.file, CACHE): k for k in report.kernels}
rows, agree = [], 0
for root, _dirs, files in os.walk(CACHE):
    for name in files:
        if name.endswith(".json") and not name.startswith("__grp__") and name[:-5] + ".cubin" in files:
            meta = json.load(open(os.path.join(root, name)))
            entry = os.path.relpath(os.path.join(root, name[:-5] + ".cubin"), CACHE)
            truth = driver(root, name[:-5], meta)
            kernel = linted.get(entry)
            row = {"entry": entry, "num_warps": meta["num_warps"], "num_ctas": meta.get("num_ctas"),
                   "cluster_dims": meta.get("cluster_dims"), "shared": meta["shared"], "driver": truth,
                   "lint": None if kernel is None else {"registers": kernel.usage.registers,
                                                        "blocks": kernel.result.active_blocks_per_sm,
                                                        "variant": kernel.usage.variant,
                                                        "launchable": kernel.result.launchable}}
            same = kernel is not None and kernel.usage.registers == truth["attributes"]["num_regs"] \
                and kernel.result.active_blocks_per_sm == truth["blocks"]
            agree += same
            if not same:
                print("DIFFERS", json.dumps(row))
            rows.append(row)
print(f"lint DIR: {len(report.kernels)} kernels from {len(rows)} cache entries; registers and blocks/SM equal the "
      f"driver's for {agree}/{len(rows)}; cannot launch (driver 0 blocks): "
      f"{sum(r['driver']['blocks'] == 0 for r in rows)}; with local memory: "
      f"{sum(r['driver']['attributes']['local_size_bytes'] > 0 for r in rows)}; problems: {[str(p) for p in report.problems]}")
os.makedirs(OUT, exist_ok=True)
json.dump({"rows": rows}, open(os.path.join(OUT, "lint_check.json"), "w"), indent=1)
with tarfile.open(os.path.join(OUT, "triton_cache2.tar.gz"), "w:gz") as tar:
    for root, _dirs, files in os.walk(CACHE):
        for name in files:
            if name.endswith((".cubin", ".json")) and not name.startswith("__grp__"):
                tar.add(os.path.join(root, name), os.path.relpath(os.path.join(root, name), CACHE))
