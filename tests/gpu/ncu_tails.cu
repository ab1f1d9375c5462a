// Uniform blocks on grids chosen around whole waves: under one wave, exactly
// one, one block over, half a wave over; block sizes 64..1024 and a
// register-heavy kernel, so the waves-per-SM and tail figures vary.
#include "ncu_common.cuh"

__global__ void spin(float* out, int iters) {
    float a = threadIdx.x * 1e-3f, b = 1.0001f;
    for (int i = 0; i < iters; ++i) a = a * b + 1e-7f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

__global__ void __launch_bounds__(256) heavy(float* out, int iters) {
    float acc[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = threadIdx.x + k;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + 5) % 48] + 1e-7f;
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 48; ++k) s += acc[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
    int sms = 0, max_threads = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
    float* out;
    CHECK(cudaMalloc(&out, size_t(64) << 20));
    const int blocks[] = {64, 128, 256, 512, 1024};
    for (int block : blocks) {
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin, block, 0));
        int wave = per_sm * sms;
        const int grids[] = {sms / 2, sms, wave - 1, wave, wave + 1, wave + wave / 2, 2 * wave + sms / 4};
        for (int grid : grids) {
            if (size_t(grid) * block * 4 > (size_t(64) << 20)) continue;
            spin<<<grid, block>>>(out, 20000);
            CHECK(cudaGetLastError());
            log_launch("ncu_tails", "spin", grid, block, 0, -1);
        }
    }
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, heavy, 256, 0));
    for (int grid : {sms, per_sm * sms, per_sm * sms + 7, 3 * per_sm * sms + sms / 3}) {
        heavy<<<grid, 256>>>(out, 400);
        CHECK(cudaGetLastError());
        log_launch("ncu_tails", "heavy", grid, 256, 0, -1);
    }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
