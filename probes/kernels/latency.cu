// Latency by pointer chase: one thread follows a random cyclic permutation
// (each load's address is the previous load's value), first untimed to warm
// the level being measured, then timed with clock64() on the device.
#include "common.cuh"

// `cached` selects the load: 1 = ld.global.ca (may hit L1), 0 = ld.global.cg (L2 and beyond).
extern "C" __global__ void chase_global(const unsigned* __restrict__ next, unsigned start, int warm_steps, int steps,
                                        int cached, unsigned long long* __restrict__ out) {
    unsigned p = start;
    if (cached) {
        for (int i = 0; i < warm_steps; ++i) p = __ldca(next + p);
        const long long c0 = clock64();
        for (int i = 0; i < steps; ++i) p = __ldca(next + p);
        out[0] = (unsigned long long)(clock64() - c0);
    } else {
        for (int i = 0; i < warm_steps; ++i) p = __ldcg(next + p);
        const long long c0 = clock64();
        for (int i = 0; i < steps; ++i) p = __ldcg(next + p);
        out[0] = (unsigned long long)(clock64() - c0);
    }
    out[1] = p;  // keeps the chain alive
}

#define CHASE_SHARED_ENTRIES 4096

extern "C" __global__ void chase_shared(const unsigned* __restrict__ next, int steps, unsigned long long* __restrict__ out) {
    __shared__ unsigned s[CHASE_SHARED_ENTRIES];
    for (int i = threadIdx.x; i < CHASE_SHARED_ENTRIES; i += blockDim.x) s[i] = next[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned p = 0;
    for (int i = 0; i < CHASE_SHARED_ENTRIES; ++i) p = s[p];
    const long long c0 = clock64();
    for (int i = 0; i < steps; ++i) p = s[p];
    out[0] = (unsigned long long)(clock64() - c0);
    out[1] = p;
}
