// Kernels for benchmarks/advice.py, of shapes common in real code: a row softmax at
// block 1024 (as llm.c's softmax_forward_kernel7), a shared-memory tiled matmul
// with register blocking, a block reduction, and a register-heavy elementwise.
// Each is timed as built and with the register cap tuneadvise suggests.

// One row per block of 1024 threads, 24 values per thread held across the passes.
extern "C" __global__ void softmax_1024_wide(const float* __restrict__ in, float* __restrict__ out, int cols) {
    __shared__ float partial[32];
    const float* row = in + (long)blockIdx.x * cols;
    float v[24], m = -1e30f;
#pragma unroll
    for (int k = 0; k < 24; ++k) {
        int c = threadIdx.x + k * 1024;
        v[k] = c < cols ? row[c] : -1e30f;
        m = fmaxf(m, v[k]);
    }
    for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = m;
    __syncthreads();
    m = partial[threadIdx.x & 31];
    for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    __syncthreads();
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 24; ++k) { v[k] = __expf(v[k] - m); s += v[k]; }
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = s;
    __syncthreads();
    s = partial[threadIdx.x & 31];
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float inv = 1.f / s;
#pragma unroll
    for (int k = 0; k < 24; ++k) {
        int c = threadIdx.x + k * 1024;
        if (c < cols) out[(long)blockIdx.x * cols + c] = v[k] * inv;
    }
}

// C = A * B, 64x64 tiles through shared memory, 4x4 outputs per thread of a 16x16 block.
extern "C" __global__ void smem_matmul_64(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                          int n) {
    __shared__ float As[16][64 + 1], Bs[16][64];
    float acc[4][4] = {};
    int tx = threadIdx.x, ty = threadIdx.y, t = ty * 16 + tx;
    int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
    for (int k0 = 0; k0 < n; k0 += 16) {
        for (int i = t; i < 16 * 64; i += 256) {
            int r = i / 16, c = i % 16;
            As[c][r] = A[(long)(row0 + r) * n + k0 + c];
            Bs[i / 64][i % 64] = B[(long)(k0 + i / 64) * n + col0 + i % 64];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; b[i] = Bs[k][tx * 4 + i]; }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) C[(long)(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
}

// Sum of n floats: a grid-stride loop of float4 loads into eight accumulators, then the block.
extern "C" __global__ void block_reduce_8acc(const float4* __restrict__ in, float* __restrict__ out, int n4) {
    __shared__ float partial[32];
    float acc[8] = {};
    int stride = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 1 * stride < n4; i += 2 * stride) {
        float4 a = in[i], b = in[i + stride];
        acc[0] += a.x; acc[1] += a.y; acc[2] += a.z; acc[3] += a.w;
        acc[4] += b.x; acc[5] += b.y; acc[6] += b.z; acc[7] += b.w;
    }
    if (i < n4) { float4 a = in[i]; acc[0] += a.x + a.y + a.z + a.w; }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += acc[k];
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.f;
        for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) atomicAdd(out, s);
    }
}

// GELU and a polynomial on 16 values per thread (four float4), all live at once.
extern "C" __global__ void elementwise_heavy(const float4* __restrict__ x, const float4* __restrict__ w,
                                             float4* __restrict__ y, int n4) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (base + 3 >= n4) return;
    float v[16], c[16];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        float4 a = x[base + k], b = w[base + k];
        v[4 * k] = a.x; v[4 * k + 1] = a.y; v[4 * k + 2] = a.z; v[4 * k + 3] = a.w;
        c[4 * k] = b.x; c[4 * k + 1] = b.y; c[4 * k + 2] = b.z; c[4 * k + 3] = b.w;
    }
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        float u = v[k], g = 0.5f * u * (1.f + tanhf(0.7978845608f * (u + 0.044715f * u * u * u)));
        v[k] = fmaf(c[k], g, ((0.1f * u + 0.2f) * u + 0.3f) * u + c[(k + 5) & 15]);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) y[base + k] = make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
}
