// Arithmetic throughput: independent FMA chains per thread, enough of them to
// hide the pipeline latency. The first thread of block 0 also records clock64()
// and %globaltimer around its work, so the SM clock during the run is known.
#include "common.cuh"

#define CHAINS 8
#define UNROLL 16

__device__ __forceinline__ float fma_step(float a, float x, float y) { return fmaf(a, x, y); }
__device__ __forceinline__ double fma_step(double a, double x, double y) { return fma(a, x, y); }
// half2 as its 32-bit pattern: one fma.rn.f16x2 is two FMAs. Inline PTX keeps
// the probe free of the cuda_fp16.h header.
__device__ __forceinline__ unsigned fma_step(unsigned a, unsigned x, unsigned y) {
    asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(a) : "r"(x), "r"(y));
    return a;
}

template <typename T>
__device__ void fma_chains(int iterations, T x, T y, T start, T* __restrict__ sink,
                           unsigned long long* __restrict__ clock_out) {
    const long long c0 = clock64();
    const unsigned long long t0 = global_timer_ns();
    T a[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) a[k] = start + (T)(threadIdx.x + k);
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < UNROLL; ++r)
#pragma unroll
            for (int k = 0; k < CHAINS; ++k) a[k] = fma_step(a[k], x, y);
    }
    T total = a[0];
#pragma unroll
    for (int k = 1; k < CHAINS; ++k) total = total + a[k];
    if (total == (T)-1) sink[blockIdx.x] = total;  // never true: keeps the chains alive
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clock_out[0] = (unsigned long long)(clock64() - c0);
        clock_out[1] = global_timer_ns() - t0;
    }
}

extern "C" __global__ void fma_fp32(int iterations, float x, float y, float* sink, unsigned long long* clock_out) {
    fma_chains<float>(iterations, x, y, 0.0f, sink, clock_out);
}

extern "C" __global__ void fma_fp64(int iterations, double x, double y, double* sink, unsigned long long* clock_out) {
    fma_chains<double>(iterations, x, y, 0.0, sink, clock_out);
}

extern "C" __global__ void fma_fp16x2(int iterations, unsigned x, unsigned y, unsigned* sink,
                                      unsigned long long* clock_out) {
    fma_chains<unsigned>(iterations, x, y, 0x3c003c00u, sink, clock_out);  // start about (1.0, 1.0)
}
