"""Arguments of benchmarks/advice_kernels.cu's `elementwise_heavy` for `tuneadvise tune`, in
Kernel Tuner's convention: `arguments` in the kernel's order and `problem_size` in threads (each
thread handles four float4).

    tuneadvise tune benchmarks/advice_kernels.cu --kernel elementwise_heavy \\
        --args benchmarks/tune/elementwise_heavy_args.py --arch sm_90 --block-size 256
"""

import numpy as np

n4 = 1 << 22  # float4 elements of each array
problem_size = n4 // 4
rng = np.random.default_rng(0)
arguments = [rng.random(4 * n4, dtype=np.float32), rng.random(4 * n4, dtype=np.float32),
             np.zeros(4 * n4, np.float32), np.int32(n4)]
