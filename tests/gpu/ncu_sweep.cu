// A sweep for the driver's shared-memory configuration under the default
// carveout preference: every block size from one warp to 1024 threads, dynamic
// shared memory from none to 48 KB, at two register counts. Profiled with the
// LaunchStats section only (record_ncu.sh sweep).
#include "ncu_common.cuh"

__global__ void light(float* out, int words) {
    extern __shared__ float tile[];
    float a = threadIdx.x;
    if (words > 0) {
        for (int k = threadIdx.x; k < words; k += blockDim.x) tile[k] = k;
        __syncthreads();
        a += tile[threadIdx.x % words];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void __launch_bounds__(1024) heavy(float* out, int words) {
    extern __shared__ float tile[];
    float acc[24];
#pragma unroll
    for (int k = 0; k < 24; ++k) acc[k] = out[(threadIdx.x + k * 37) % 1024];
    if (words > 0) {
        for (int k = threadIdx.x; k < words; k += blockDim.x) tile[k] = k;
        __syncthreads();
        acc[0] += tile[threadIdx.x % words];
    }
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int k = 0; k < 24; ++k) acc[k] = acc[k] * acc[(k + 1) % 24] + 1e-7f;
    float s = 0;
#pragma unroll
    for (int k = 0; k < 24; ++k) s += acc[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
    float* out;
    CHECK(cudaMalloc(&out, size_t(8) << 20));
    CHECK(cudaMemset(out, 0, size_t(8) << 20));
    CHECK(cudaFuncSetAttribute(light, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    CHECK(cudaFuncSetAttribute(heavy, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    const int blocks[] = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
    const int dyns[] = {0, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536};
    for (int block : blocks)
        for (int dyn : dyns) {
            light<<<4, block, dyn>>>(out, dyn / 4);
            CHECK(cudaGetLastError());
            log_launch("ncu_sweep", "light", 4, block, dyn, -1);
            heavy<<<4, block, dyn>>>(out, dyn / 4);
            CHECK(cudaGetLastError());
            log_launch("ncu_sweep", "heavy", 4, block, dyn, -1);
        }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
