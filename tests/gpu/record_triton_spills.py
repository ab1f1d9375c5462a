"""Records, on a machine with an NVIDIA GPU and Triton, a Triton kernel cache whose kernels
spill, and what the CUDA driver says about each, so the CPU tests can hold `tuneadvise
lint DIR`'s spill figures (read from the machine code) to the driver:

  python tests/gpu/record_triton_spills.py OUTDIR

Built here (TRITON_CACHE_DIR): a matmul whose fp32 accumulator tile holds far more values
per thread than 255 registers (256x256 tile, 4 warps), the same at 128x128 capped with
`maxnreg`, and a small copy kernel that does not spill. For each cache entry the cubin is
loaded with the driver and cuFuncGetAttribute's LOCAL_SIZE_BYTES and NUM_REGS recorded,
with Triton's own n_regs and n_spills.

Output: OUTDIR/triton_spills.tar.gz (the cache's .cubin and .json files) and
OUTDIR/triton_spills.json (the driver's figures by cache entry).
"""

import json
import os
import sys
import tarfile
import tempfile

OUT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="triton_spills_")
CACHE = os.path.join(WORK, "triton_spills")
os.environ["TRITON_CACHE_DIR"] = CACHE
os.makedirs(OUT, exist_ok=True)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctypes  # noqa: E402

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from cuda_driver import check, cuda, function_attributes, open_device  # noqa: E402  (this directory)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def copy_kernel(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask), mask=mask)


def triton_view(kernel):
    kernel._init_handles()
    return {"n_regs": kernel.n_regs, "n_spills": kernel.n_spills}


def main():
    open_device(0)
    log = {"triton": triton.__version__, "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "live": {}, "driver": {}}
    size = 512
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty(size, size, device="cuda", dtype=torch.float32)
    runs = [("matmul 256x256x32 w4", {"BM": 256, "BN": 256, "BK": 32, "num_warps": 4}),
            ("matmul 128x128x32 w4 maxnreg 64", {"BM": 128, "BN": 128, "BK": 32, "num_warps": 4, "maxnreg": 64})]
    for label, settings in runs:
        grid = (size // settings["BM"], size // settings["BN"])
        try:
            kernel = matmul_kernel[grid](a, b, c, size, size, size, **settings)
            torch.cuda.synchronize()
            expected = (a.float() @ b.float())
            log["live"][label] = {**triton_view(kernel), "hash": kernel.metadata.hash,
                                  "max_abs_error": float((c - expected).abs().max())}
        except Exception as error:  # kept: a configuration Triton refuses is an answer too
            log["live"][label] = {"error": f"{type(error).__name__}: {error}"}
    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)
    kernel = copy_kernel[(4,)](x, y, x.numel(), BLOCK=1024, num_warps=4)
    torch.cuda.synchronize()
    log["live"]["copy 1024 w4"] = {**triton_view(kernel), "hash": kernel.metadata.hash}
    for root, _dirs, files in os.walk(CACHE):
        for name in sorted(f for f in files if f.endswith(".cubin")):
            meta = json.load(open(os.path.join(root, name[:-6] + ".json")))
            module, func = ctypes.c_void_p(), ctypes.c_void_p()
            data = open(os.path.join(root, name), "rb").read()
            check(cuda.cuModuleLoadData(ctypes.byref(module), data), "cuModuleLoadData")
            check(cuda.cuModuleGetFunction(ctypes.byref(func), module, meta["name"].encode()), "cuModuleGetFunction")
            entry = os.path.relpath(os.path.join(root, name), CACHE)
            log["driver"][entry] = {"name": meta["name"], "hash": meta.get("hash"), **function_attributes(func)}
    packed = os.path.join(OUT, "triton_spills.tar.gz")
    with tarfile.open(packed, "w:gz") as tar:
        for root, _dirs, files in os.walk(CACHE):
            for name in sorted(files):
                if name.endswith((".cubin", ".json")):
                    path = os.path.join(root, name)
                    tar.add(path, os.path.join("triton_spills", os.path.relpath(path, CACHE)))
    with open(os.path.join(OUT, "triton_spills.json"), "w") as handle:
        json.dump(log, handle, indent=1, sort_keys=True)
    print(json.dumps(log, indent=1))
    print("cache:", CACHE)


if __name__ == "__main__":
    main()
