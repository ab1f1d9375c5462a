// Arithmetic throughput: independent FMA chains per thread, enough of them to
// hide the pipeline latency. The first thread of block 0 also records clock64()
// and %globaltimer around its work, so the SM clock during the run is known.
#include "common.cuh"

#define CHAINS 8

__device__ __forceinline__ void record_clock(unsigned long long* clock_out, long long c0, unsigned long long t0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clock_out[0] = (unsigned long long)(clock64() - c0);
        clock_out[1] = global_timer_ns() - t0;
    }
}

extern "C" __global__ void fma_fp32(int iterations, float x, float y, float* __restrict__ sink,
                                    unsigned long long* __restrict__ clock_out) {
    const long long c0 = clock64();
    const unsigned long long t0 = global_timer_ns();
    float a[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) a[k] = threadIdx.x + k;
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < 16; ++r)
#pragma unroll
            for (int k = 0; k < CHAINS; ++k) a[k] = fmaf(a[k], x, y);
    }
    float total = 0.f;
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) total += a[k];
    if (total == -1.0f) sink[blockIdx.x] = total;
    record_clock(clock_out, c0, t0);
}

extern "C" __global__ void fma_fp64(int iterations, double x, double y, double* __restrict__ sink,
                                    unsigned long long* __restrict__ clock_out) {
    const long long c0 = clock64();
    const unsigned long long t0 = global_timer_ns();
    double a[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) a[k] = threadIdx.x + k;
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < 16; ++r)
#pragma unroll
            for (int k = 0; k < CHAINS; ++k) a[k] = fma(a[k], x, y);
    }
    double total = 0.0;
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) total += a[k];
    if (total == -1.0) sink[blockIdx.x] = total;
    record_clock(clock_out, c0, t0);
}

// half2: one fma.rn.f16x2 is two FMAs. Inline PTX keeps the probe free of the
// cuda_fp16.h header.
extern "C" __global__ void fma_fp16x2(int iterations, unsigned x, unsigned y, unsigned* __restrict__ sink,
                                      unsigned long long* __restrict__ clock_out) {
    const long long c0 = clock64();
    const unsigned long long t0 = global_timer_ns();
    unsigned a[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) a[k] = 0x3c003c00u + threadIdx.x + k;  // about (1.0, 1.0)
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < 16; ++r)
#pragma unroll
            for (int k = 0; k < CHAINS; ++k) asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(a[k]) : "r"(x), "r"(y));
    }
    unsigned total = 0;
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) total ^= a[k];
    if (total == 0xffffffffu) sink[blockIdx.x] = total;
    record_clock(clock_out, c0, t0);
}
