// Blocks that end early or carry unequal work, a persistent-loop kernel, and
// short kernels where launch overhead dominates.
#include "ncu_common.cuh"

// every `heavy_every`-th block loops `long_iters`, the others `short_iters`
__global__ void imbalanced(float* out, int heavy_every, int long_iters, int short_iters) {
    int iters = (blockIdx.x % heavy_every == 0) ? long_iters : short_iters;
    float a = threadIdx.x * 1e-3f;
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

// blocks at or past `active` return at once
__global__ void early_exit(float* out, int active, int iters) {
    if (blockIdx.x >= active) return;
    float a = threadIdx.x * 1e-3f;
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

// only the first warp of each block works; the rest leave at once
__global__ void one_warp_works(float* out, int iters) {
    if (threadIdx.x >= 32) return;
    float a = threadIdx.x * 1e-3f;
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

// grid-stride loop: as many blocks as fit at once, each taking many items
__global__ void persistent(float* out, int items, int iters) {
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
        float a = item * 1e-3f;
        for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
        out[(item % 4096) * blockDim.x + threadIdx.x] = a;
    }
}

__global__ void tiny(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float* out;
    CHECK(cudaMalloc(&out, size_t(64) << 20));
    for (int every : {2, 8, 64}) {
        int grid = 8 * sms * 4;
        imbalanced<<<grid, 256>>>(out, every, 40000, 500);
        CHECK(cudaGetLastError());
        log_launch("ncu_imbalance", "imbalanced", grid, 256, 0, -1);
    }
    for (int active : {sms, 4 * sms, 12 * sms}) {
        int grid = 16 * sms;
        early_exit<<<grid, 256>>>(out, active, 30000);
        CHECK(cudaGetLastError());
        log_launch("ncu_imbalance", "early_exit", grid, 256, 0, -1);
    }
    one_warp_works<<<4 * sms, 512>>>(out, 30000);
    CHECK(cudaGetLastError());
    log_launch("ncu_imbalance", "one_warp_works", 4 * sms, 512, 0, -1);
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent, 256, 0));
    for (int grid : {per_sm * sms, per_sm * sms / 2}) {
        persistent<<<grid, 256>>>(out, 40 * sms * per_sm, 2000);
        CHECK(cudaGetLastError());
        log_launch("ncu_imbalance", "persistent", grid, 256, 0, -1);
    }
    for (int grid : {1, 4, sms}) for (int block : {32, 256, 1024}) {
        tiny<<<grid, block>>>(out);
        CHECK(cudaGetLastError());
        log_launch("ncu_imbalance", "tiny", grid, block, 0, -1);
    }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
