// Memory bandwidth probes. Bytes are counted as BabelStream counts them: every
// element read plus every element written, once per kernel.
//
// The stream kernels use 16-byte vectors and a grid-stride loop; `n` counts
// double2 elements. A sum that is never 'impossible' keeps the read kernel's
// loads alive without a store per element.

// Each thread keeps UNROLL independent 16-byte accesses in flight (as
// BabelStream's unrolled grid-stride loop does), then finishes the remainder.
#define UNROLL 4
#define GRID_STRIDE_LOOP(BODY)                                                            \
    const size_t stride = (size_t)gridDim.x * blockDim.x;                                   \
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;                               \
    for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {                           \
        _Pragma("unroll") for (int u = 0; u < UNROLL; ++u) { const size_t j = i + u * stride; BODY } \
    }                                                                                       \
    for (; i < n; i += stride) { const size_t j = i; BODY }

extern "C" __global__ void stream_read(const double2* __restrict__ a, size_t n, double* __restrict__ sink) {
    double acc = 0.0;
    GRID_STRIDE_LOOP(double2 v = a[j]; acc += v.x + v.y;)
    if (acc == -1.0) sink[blockIdx.x] = acc;  // never true for the probe's data
}

extern "C" __global__ void stream_write(double2* __restrict__ c, size_t n, double scalar) {
    GRID_STRIDE_LOOP(c[j] = make_double2(scalar, scalar);)
}

extern "C" __global__ void stream_copy(const double2* __restrict__ a, double2* __restrict__ c, size_t n) {
    GRID_STRIDE_LOOP(c[j] = a[j];)
}

extern "C" __global__ void stream_triad(double2* __restrict__ a, const double2* __restrict__ b,
                                        const double2* __restrict__ c, size_t n, double scalar) {
    GRID_STRIDE_LOOP(double2 x = b[j]; double2 y = c[j]; a[j] = make_double2(x.x + scalar * y.x, x.y + scalar * y.y);)
}

// One pass, no loop: BabelStream's shape (one element per thread, the grid
// covers the array). Suffixes name the element: _d one double, _v2 a double2,
// _v4 two double2 per thread (adjacent warps' halves, so each load instruction
// stays coalesced). `n` counts elements of the kernel's type.
extern "C" __global__ void stream_copy_d(const double* __restrict__ a, double* __restrict__ c, size_t n) {
    const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j < n) c[j] = a[j];
}

extern "C" __global__ void stream_triad_d(double* __restrict__ a, const double* __restrict__ b,
                                          const double* __restrict__ c, size_t n, double scalar) {
    const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j < n) a[j] = b[j] + scalar * c[j];
}

extern "C" __global__ void stream_copy_v2(const double2* __restrict__ a, double2* __restrict__ c, size_t n) {
    const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j < n) c[j] = a[j];
}

extern "C" __global__ void stream_triad_v2(double2* __restrict__ a, const double2* __restrict__ b,
                                           const double2* __restrict__ c, size_t n, double scalar) {
    const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j < n) {
        double2 x = b[j], y = c[j];
        a[j] = make_double2(x.x + scalar * y.x, x.y + scalar * y.y);
    }
}

// BabelStream's shape: a grid-stride loop over doubles, the grid sized for
// about four elements per thread. `n` counts doubles.
extern "C" __global__ void stream_copy_g(const double* __restrict__ a, double* __restrict__ c, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
#pragma unroll 4
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n; j += stride) c[j] = a[j];
}

extern "C" __global__ void stream_triad_g(double* __restrict__ a, const double* __restrict__ b,
                                          const double* __restrict__ c, size_t n, double scalar) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
#pragma unroll 4
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n; j += stride) a[j] = b[j] + scalar * c[j];
}

// One double2 per thread with the streaming cache hints (ld.global.cs, st.global.cs): every
// line is used once, so it is marked to be evicted first and leaves L2 to the lines in flight.
extern "C" __global__ void stream_copy_cs(const double2* __restrict__ a, double2* __restrict__ c, size_t n) {
    const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j < n) __stcs(c + j, __ldcs(a + j));
}

extern "C" __global__ void stream_triad_cs(double2* __restrict__ a, const double2* __restrict__ b,
                                           const double2* __restrict__ c, size_t n, double scalar) {
    const size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j < n) {
        const double2 x = __ldcs(b + j), y = __ldcs(c + j);
        __stcs(a + j, make_double2(x.x + scalar * y.x, x.y + scalar * y.y));
    }
}

// Two double2 per thread: block-contiguous halves, so both loads are coalesced
// and each thread has two independent 16-byte loads in flight.
extern "C" __global__ void stream_copy_v4(const double2* __restrict__ a, double2* __restrict__ c, size_t n) {
    const size_t base = blockIdx.x * (size_t)blockDim.x * 2 + threadIdx.x;
    const size_t k = base + blockDim.x;
    if (k < n) { double2 x = a[base], y = a[k]; c[base] = x; c[k] = y; }
    else if (base < n) c[base] = a[base];
}

extern "C" __global__ void stream_triad_v4(double2* __restrict__ a, const double2* __restrict__ b,
                                           const double2* __restrict__ c, size_t n, double scalar) {
    const size_t base = blockIdx.x * (size_t)blockDim.x * 2 + threadIdx.x;
    const size_t k = base + blockDim.x;
    if (k < n) {
        double2 x0 = b[base], y0 = c[base], x1 = b[k], y1 = c[k];
        a[base] = make_double2(x0.x + scalar * y0.x, x0.y + scalar * y0.y);
        a[k] = make_double2(x1.x + scalar * y1.x, x1.y + scalar * y1.y);
    } else if (base < n) {
        double2 x = b[base], y = c[base];
        a[base] = make_double2(x.x + scalar * y.x, x.y + scalar * y.y);
    }
}

// Bandwidth against occupancy: each thread keeps ILP independent 8-byte loads
// in flight over a grid-stride loop; the host limits resident blocks per SM
// with dynamic shared memory (as gpu-benches' gpu-stream does), so the curve
// is bandwidth against resident warps and bytes in flight per thread.
#define OCC_READ(ILP)                                                                              \
extern "C" __global__ void occ_read_ilp##ILP(const double* __restrict__ a, size_t n, double* __restrict__ sink) { \
    double acc = 0.0;                                                                              \
    const size_t stride = (size_t)gridDim.x * blockDim.x;                                          \
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;                                      \
    for (; i + (ILP - 1) * stride < n; i += ILP * stride) {                                        \
        double v[ILP];                                                                             \
        _Pragma("unroll") for (int u = 0; u < ILP; ++u) v[u] = a[i + u * stride];                  \
        _Pragma("unroll") for (int u = 0; u < ILP; ++u) acc += v[u];                               \
    }                                                                                              \
    for (; i < n; i += stride) acc += a[i];                                                        \
    if (acc == -1.0) sink[blockIdx.x] = acc;                                                       \
}
OCC_READ(1)
OCC_READ(2)
OCC_READ(4)

// gpu-stream's shape for the same curve: one double per thread, the grid covers
// the array, so blocks retire and are replaced rather than looping.
extern "C" __global__ void occ_read_once(const double* __restrict__ a, size_t n, double* __restrict__ sink) {
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && a[i] == -1.0) sink[blockIdx.x] = a[i];
}

// L2: re-read a working set smaller than L2, `passes` times, bypassing L1
// (ld.global.cg) so every load is served by L2.
extern "C" __global__ void l2_read(const float4* __restrict__ a, size_t n, int passes, float* __restrict__ sink) {
    float acc = 0.0f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p) {
        size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
        for (; i + 3 * stride < n; i += 4 * stride) {
            float4 v0 = __ldcg(a + i), v1 = __ldcg(a + i + stride), v2 = __ldcg(a + i + 2 * stride), v3 = __ldcg(a + i + 3 * stride);
            acc += (v0.x + v0.y + v0.z + v0.w) + (v1.x + v1.y + v1.z + v1.w) + (v2.x + v2.y + v2.z + v2.w) + (v3.x + v3.y + v3.z + v3.w);
        }
        for (; i < n; i += stride) {
            float4 v = __ldcg(a + i);
            acc += v.x + v.y + v.z + v.w;
        }
    }
    if (acc == -1.0f) sink[blockIdx.x] = acc;
}

// L2, gpu-benches' gpu-l2-cache shape: block b re-reads chunk (b mod chunks) of
// `chunk_vectors` float4 (ld.global.cg), many blocks, so each block streams one
// contiguous region and the working set is chunks x chunk size.
extern "C" __global__ void l2_read_chunks(const float4* __restrict__ a, unsigned chunk_vectors, unsigned chunks,
                                          float* __restrict__ sink) {
    const float4* base = a + (size_t)(blockIdx.x % chunks) * chunk_vectors;
    float acc = 0.0f;
    unsigned i = threadIdx.x;
    for (; i + 3 * blockDim.x < chunk_vectors; i += 4 * blockDim.x) {
        float4 v0 = __ldcg(base + i), v1 = __ldcg(base + i + blockDim.x), v2 = __ldcg(base + i + 2 * blockDim.x),
               v3 = __ldcg(base + i + 3 * blockDim.x);
        acc += (v0.x + v0.y + v0.z + v0.w) + (v1.x + v1.y + v1.z + v1.w) + (v2.x + v2.y + v2.z + v2.w) + (v3.x + v3.y + v3.z + v3.w);
    }
    for (; i < chunk_vectors; i += blockDim.x) {
        float4 v = __ldcg(base + i);
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == -1.0f) sink[blockIdx.x] = acc;
}

// Shared memory: conflict-free 16-byte loads (a warp reads 512 contiguous
// bytes). The base index moves every iteration so the loads cannot be hoisted;
// 16 loads per iteration use immediate offsets into a 32 KiB array.
#define SMEM_VECTORS 2048  // float4 = 32 KiB
#define SMEM_UNROLL 16

extern "C" __global__ void __launch_bounds__(1024) shared_read(int iterations, float* __restrict__ sink) {
    __shared__ float4 s[SMEM_VECTORS];
    for (int i = threadIdx.x; i < SMEM_VECTORS; i += blockDim.x)
        s[i] = make_float4((float)i, 1.0f, 2.0f, 3.0f);
    __syncthreads();
    float4 acc0 = make_float4(0.f, 0.f, 0.f, 0.f), acc1 = acc0;
    for (int it = 0; it < iterations; ++it) {
        const int base = (threadIdx.x + it * 32) & (SMEM_VECTORS / 2 - 1);
#pragma unroll
        for (int k = 0; k < SMEM_UNROLL; k += 2) {
            float4 v = s[base + k * 64];
            float4 w = s[base + (k + 1) * 64];
            acc0.x += v.x; acc0.y += v.y; acc0.z += v.z; acc0.w += v.w;
            acc1.x += w.x; acc1.y += w.y; acc1.z += w.z; acc1.w += w.w;
        }
    }
    float total = acc0.x + acc0.y + acc0.z + acc0.w + acc1.x + acc1.y + acc1.z + acc1.w;
    if (total == -1.0f) sink[blockIdx.x] = total;
}
