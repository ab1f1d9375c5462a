// Dynamic and static shared memory under several carveout preferences, and a
// cluster launch, so the driver's shared-memory configuration varies.
#include "ncu_common.cuh"
#include <cstring>

// words: floats of dynamic shared memory the launch gave (may be 0)
__global__ void staged(float* out, int words, int iters) {
    extern __shared__ float tile[];
    float a = threadIdx.x * 1e-3f;
    if (words > 0) {
        for (int k = threadIdx.x; k < words; k += blockDim.x) tile[k] = k;
        __syncthreads();
        a = tile[(threadIdx.x + 1) % words];
    }
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void static16k(float* out, int iters) {
    __shared__ float tile[4096];
    for (int k = threadIdx.x; k < 4096; k += blockDim.x) tile[k] = k;
    __syncthreads();
    float a = 0;
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + tile[(threadIdx.x * 7 + i) & 4095];
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void static40k(float* out, int iters) {
    __shared__ float tile[10240];
    for (int k = threadIdx.x; k < 10240; k += blockDim.x) tile[k] = k;
    __syncthreads();
    float a = 0;
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + tile[(threadIdx.x * 7 + i) % 10240];
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void __cluster_dims__(2, 1, 1) paired(float* out, int iters) {
    extern __shared__ float tile[];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    float a = tile[threadIdx.x];
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void clustered(float* out, int iters) {
    extern __shared__ float tile[];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    float a = tile[threadIdx.x];
    for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

static void launch_staged(float* out, int sms, int block, int dyn, int carveout) {
    if (carveout >= 0) set_carveout(staged, carveout);
    CHECK(cudaFuncSetAttribute(staged, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    int grid = 2 * sms + 5;
    staged<<<grid, block, dyn>>>(out, dyn / 4, 3000);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    log_launch("ncu_smem", "staged", grid, block, dyn, carveout);
}

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float* out;
    CHECK(cudaMalloc(&out, size_t(64) << 20));
    // default preference first: the driver chooses alone
    for (int dyn : {0, 1024, 4096, 12288, 24576, 40000, 49152, 70000, 110000, 150000, 200000, 232448})
        launch_staged(out, sms, 256, dyn, -1);
    for (int block : {128, 1024})
        for (int dyn : {2048, 16384, 60000})
            launch_staged(out, sms, block, dyn, -1);
    for (int carveout : {0, 10, 25, 31, 50, 66, 75, 100})
        for (int dyn : {0, 8192, 30000, 90000})
            launch_staged(out, sms, 256, dyn, carveout);
    set_carveout(staged, -1);
    for (int carveout : {-1, 0, 50, 100}) {
        if (carveout >= 0) { set_carveout(static16k, carveout); set_carveout(static40k, carveout); }
        static16k<<<3 * sms, 256>>>(out, 3000);
        CHECK(cudaGetLastError());
        log_launch("ncu_smem", "static16k", 3 * sms, 256, 0, carveout);
        static40k<<<3 * sms, 512>>>(out, 3000);
        CHECK(cudaGetLastError());
        log_launch("ncu_smem", "static40k", 3 * sms, 512, 0, carveout);
    }
    for (int dyn : {4096, 65536}) {
        CHECK(cudaFuncSetAttribute(paired, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
        paired<<<4 * sms, 256, dyn>>>(out, 3000);
        CHECK(cudaGetLastError());
        log_launch("ncu_smem", "paired", 4 * sms, 256, dyn, -1, 2);
    }
    for (int cluster : {4, 8}) {
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(cluster * 40); cfg.blockDim = dim3(128); cfg.dynamicSmemBytes = 20000;
        cfg.attrs = attr; cfg.numAttrs = 1;
        CHECK(cudaFuncSetAttribute(clustered, cudaFuncAttributeMaxDynamicSharedMemorySize, 20000));
        CHECK(cudaLaunchKernelEx(&cfg, clustered, out, 3000));
        CHECK(cudaGetLastError());
        log_launch("ncu_smem", "clustered", cluster * 40, 128, 20000, -1, cluster);
    }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
