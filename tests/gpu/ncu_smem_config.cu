// The driver's shared-memory configuration when the program sets no carveout
// preference (which of the 0/8/16/32/64/100/132/164/196/228 KB
// configurations the driver picks): dynamic shared memory from none to 100 KB,
// at each configuration boundary and where resident blocks x per-block need
// crosses one, at block sizes 32..1024 and three register counts (the kernel
// holds 4, 24 or 56 live values: 18, 40 and 64 registers from ptxas for sm_90
// under __launch_bounds__(1024)). Profiled with the Occupancy and LaunchStats sections, whose
// "Shared Memory Configuration Size" and "Driver Shared Memory Per Block" are
// the outside truth; each launch's parameters go to the NCU_MANIFEST log.
#include "ncu_common.cuh"
#include <set>

template <int LIVE>
__global__ void __launch_bounds__(1024) config(float* out, int words) {
    extern __shared__ float tile[];
    float acc[LIVE];
#pragma unroll
    for (int k = 0; k < LIVE; ++k) acc[k] = out[(threadIdx.x + k * 37) % 1024];
    if (words > 0) {
        for (int k = threadIdx.x; k < words; k += blockDim.x) tile[k] = k;
        __syncthreads();
        acc[0] += tile[threadIdx.x % words];
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < LIVE; ++k) acc[k] = acc[k] * acc[(k + 1) % LIVE] + 1e-7f;
    float s = 0;
#pragma unroll
    for (int k = 0; k < LIVE; ++k) s += acc[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Bytes of dynamic shared memory to try: each configuration boundary (KB), one byte
// over it and one reserved KB under it, plus, for each power-of-two resident block
// count, the need at which blocks x (need + 1 KB reserved) just fills a
// configuration and 16 bytes over it.
static std::set<int> needs(int threads) {
    const int kb = 1024, configs[] = {0, 8, 16, 32, 64, 100};
    std::set<int> out = {0, 256, 512};
    for (int c : configs)
        for (int d : {-1024, 0, 1})
            if (c * kb + d > 0 && c * kb + d <= 100 * kb) out.insert(c * kb + d);
    int resident = 2048 / threads < 32 ? 2048 / threads : 32;
    const int all[] = {8, 16, 32, 64, 100, 132, 164, 196, 228};
    for (int blocks = 1; blocks <= resident; blocks *= 2)
        for (int c : all) {
            int per = c * kb / blocks - kb;  // need that fills config c with `blocks` blocks
            for (int d : {0, 16})
                if (per + d > 0 && per + d <= 100 * kb) out.insert(per + d);
        }
    return out;
}

template <int LIVE>
static void sweep(const char* name, float* out, const int* blocks, int nblocks) {
    auto k = config<LIVE>;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    for (int b = 0; b < nblocks; ++b)
        for (int dyn : needs(blocks[b])) {
            k<<<264, blocks[b], dyn>>>(out, dyn / 4);
            CHECK(cudaGetLastError());
            log_launch("ncu_smem_config", name, 264, blocks[b], dyn, -1);
        }
}

int main() {
    float* out;
    CHECK(cudaMalloc(&out, size_t(8) << 20));
    CHECK(cudaMemset(out, 0, size_t(8) << 20));
    const int wide[] = {32, 64, 128, 256, 512, 1024};
    const int mid[] = {128, 512}, big[] = {256, 1024};
    sweep<4>("config_live4", out, wide, 6);
    sweep<24>("config_live24", out, mid, 2);
    sweep<56>("config_live56", out, big, 2);
    CHECK(cudaDeviceSynchronize());
    return 0;
}
