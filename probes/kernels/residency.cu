// Empirical occupancy: each block records the SM it ran on and when it started
// and finished (%smid, %globaltimer), holding the SM for `hold_ns` so blocks
// that can be co-resident overlap. The host counts the most blocks resident on
// one SM at once. `pressure` sets how many values each thread keeps live,
// which (with -maxrregcount) sets the register count; dynamic shared memory is
// touched so it is really allocated.
#include "common.cuh"

#define PRESSURE 96

extern "C" __global__ void resident(unsigned long long* __restrict__ records, unsigned long long hold_ns,
                                    int pressure, int dynamic_floats, const float* __restrict__ seed,
                                    float* __restrict__ sink) {
    extern __shared__ float dynamic_smem[];
    unsigned long long start = 0;
    if (threadIdx.x == 0) start = global_timer_ns();
    // A dependent chain of loaded values: too costly to recompute, so all stay live.
    float v[PRESSURE];
    v[0] = seed[threadIdx.x & 255];
#pragma unroll
    for (int k = 1; k < PRESSURE; ++k) v[k] = fmaf(v[k - 1], seed[k], (float)threadIdx.x);
    if (threadIdx.x == 0) {
        if (dynamic_floats > 0) dynamic_smem[dynamic_floats - 1] = v[0];
        while (global_timer_ns() - start < hold_ns) {
        }
    }
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int k = 0; k < PRESSURE; ++k)
        if (k < pressure) total += v[k] * v[(k * 7) % PRESSURE];
    if (total == -1.0f) sink[blockIdx.x] = total + (dynamic_floats > 0 ? dynamic_smem[dynamic_floats - 1] : 0.f);
    if (threadIdx.x == 0) {
        records[3 * blockIdx.x] = sm_id();
        records[3 * blockIdx.x + 1] = start;
        records[3 * blockIdx.x + 2] = global_timer_ns();
    }
}

extern "C" __global__ void empty_kernel() {}
