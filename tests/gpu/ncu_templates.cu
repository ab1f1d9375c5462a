// Templated kernels (block size as a template parameter, so the export shows
// mangled-and-demangled template names) launched on two streams.
#include "ncu_common.cuh"

template <int BLOCK>
__global__ void block_sum(const float* in, float* out, int n, int iters) {
    __shared__ float part[BLOCK];
    float a = 0;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)
        for (int k = 0; k < iters; ++k) a += in[i] * 1.0001f;
    part[threadIdx.x] = a;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

template <int BLOCK>
static void run(const float* in, float* out, int n, int grid, cudaStream_t s) {
    block_sum<BLOCK><<<grid, BLOCK, 0, s>>>(in, out, n, 200);
    CHECK(cudaGetLastError());
    log_launch("ncu_templates", "block_sum", grid, BLOCK, 0, -1);
}

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int n = 1 << 22;
    float *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    CHECK(cudaMemset(in, 0, n * sizeof(float)));
    cudaStream_t s[2];
    for (auto& st : s) CHECK(cudaStreamCreate(&st));
    for (int grid : {sms - 1, 5 * sms / 2, 8 * sms}) {
        run<64>(in, out, n, grid, s[0]);
        run<128>(in, out, n, grid, s[1]);
        run<512>(in, out, n, grid, s[0]);
    }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
