"""Triton launches for the Nsight Compute fixtures: one elementwise kernel
under several block sizes and warp counts, and a tiled matrix product whose
pipelining stages take dynamic shared memory."""
import torch
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 2.0 * x + y, mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def main():
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    for block, warps in [(256, 2), (1024, 4), (4096, 8), (16384, 16)]:
        axpy[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=warps)
    m = 2048
    a = torch.randn(m, m, device="cuda", dtype=torch.float16)
    b = torch.randn(m, m, device="cuda", dtype=torch.float16)
    c = torch.empty(m, m, device="cuda", dtype=torch.float32)
    for bm, bn, bk, stages, warps in [(128, 128, 32, 3, 4), (64, 64, 64, 4, 4), (128, 256, 64, 3, 8)]:
        grid = (m // bm, m // bn)
        matmul[grid](a, b, c, m, m, m, BM=bm, BN=bn, BK=bk, num_stages=stages, num_warps=warps)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
