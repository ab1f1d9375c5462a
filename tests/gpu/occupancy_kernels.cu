// Kernels with varied resource usage, compiled with several -maxrregcount
// caps, to record what the CUDA driver's occupancy API answers for them.
// STATIC_BYTES (static shared memory) and NAMED_BARRIERS are set per build.
#ifndef STATIC_BYTES
#define STATIC_BYTES 0
#endif
#ifndef NAMED_BARRIERS
#define NAMED_BARRIERS 1
#endif

extern "C" __global__ void pressure(const float* __restrict__ in, float* __restrict__ out, int n) {
#if STATIC_BYTES > 0
    __shared__ float tile[STATIC_BYTES / 4];
#endif
    // Many independent live values: register use follows the -maxrregcount cap.
    float acc[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 64; ++k) acc[k] = in[(i + k * 97) % n];
#pragma unroll 4
    for (int r = 0; r < 32; ++r) {
#pragma unroll
        for (int k = 0; k < 64; ++k) acc[k] = acc[k] * acc[(k + 1) & 63] + acc[(k + 7) & 63];
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 64; ++k) s += acc[k];
#if STATIC_BYTES > 0
    tile[threadIdx.x % (STATIC_BYTES / 4)] = s;
#endif
#if NAMED_BARRIERS >= 1
    __syncthreads();
#endif
#if NAMED_BARRIERS > 1
    // Named barriers 1..N-1 over the whole block (bar.sync id, threads).
#pragma unroll
    for (int b = 1; b < NAMED_BARRIERS; ++b) asm volatile("bar.sync %0;" :: "r"(b));
#endif
#if STATIC_BYTES > 0
    s += tile[(threadIdx.x + 1) % (STATIC_BYTES / 4)];
#endif
    out[i] = s;
}
