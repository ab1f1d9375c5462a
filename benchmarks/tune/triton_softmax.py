"""A row softmax in Triton and its candidate configurations, for `tuneadvise tune`: `configs`
are the triton.Configs to time, `bench(config)` launches the kernel once with one of them and
returns what the launch returns (the compiled kernel, which tuneadvise reads for its registers).

    tuneadvise tune benchmarks/tune/triton_softmax.py --arch sm_90
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * n_cols + offsets, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + offsets, e / tl.sum(e, axis=0), mask=mask)


ROWS, COLS = 16384, 4096
x = torch.randn(ROWS, COLS, device="cuda")
y = torch.empty_like(x)
configs = [triton.Config({"BLOCK": 4096}, num_warps=w) for w in (4, 8, 16, 2)] + \
    [triton.Config({"BLOCK": 4096}, num_warps=4, maxnreg=r) for r in (64, 32)]


def bench(config):
    options = {"num_warps": config.num_warps, **({"maxnreg": config.maxnreg} if config.maxnreg else {})}
    return softmax_rows[(ROWS,)](x, y, COLS, **config.kwargs, **options)
