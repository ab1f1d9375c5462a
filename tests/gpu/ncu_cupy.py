"""CuPy launches for the Nsight Compute fixtures: a RawKernel under several
block sizes, dynamic shared memory amounts and carveout preferences (logged to
NCU_MANIFEST, since the export does not show the preference), and a few of
CuPy's own elementwise and reduction kernels."""
import os

import cupy as cp

SOURCE = r"""
extern "C" __global__ void scaled(float* out, const float* in, int n, int iters) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.f;
    __syncthreads();
    float a = tile[(threadIdx.x + 1) % blockDim.x];
    for (int k = 0; k < iters; ++k) a = a * 1.0001f + 1e-7f;
    if (i < n) out[i] = a;
}
"""


def log(line):
    with open(os.environ.get("NCU_MANIFEST", os.devnull), "a") as f:
        f.write(line + "\n")


def main():
    sms = cp.cuda.Device(0).attributes["MultiProcessorCount"]
    kernel = cp.RawKernel(SOURCE, "scaled")
    n = 1 << 22
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    for block, dyn, carveout in [(128, 512, -1), (256, 1024, -1), (512, 30000, -1), (256, 1024, 0),
                                 (256, 1024, 100), (256, 60000, 50), (1024, 100000, -1), (96, 384, -1)]:
        kernel.max_dynamic_shared_size_bytes = max(dyn, 0)
        if carveout >= 0:
            kernel.preferred_shared_memory_carveout = carveout
        grid = 3 * sms + 17
        kernel((grid,), (block,), (dst, src, cp.int32(n), cp.int32(3000)), shared_mem=dyn)
        log(f"ncu_cupy scaled grid={grid} block={block} dynamic={dyn} carveout={carveout} cluster=1")
    a = cp.random.random((3000, 3000), dtype=cp.float32)
    (a * 2 + 1).sum(axis=1)
    cp.cumsum(a[0])
    cp.sort(a[1])
    cp.cuda.Device(0).synchronize()


if __name__ == "__main__":
    main()
