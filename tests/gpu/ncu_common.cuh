// Shared by the ncu_*.cu programs: a launch log (one line per launch, to the
// file named by NCU_MANIFEST) that records what the Nsight Compute export does
// not show, the carveout preference set on the function before the launch.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static FILE* manifest() {
    static FILE* f = nullptr;
    if (!f) { const char* p = getenv("NCU_MANIFEST"); f = fopen(p ? p : "/dev/null", "a"); }
    return f;
}

// kernel name, grid, block, dynamic shared bytes, carveout percent (-1: none set)
static void log_launch(const char* program, const char* kernel, int grid, int block, int dyn, int carveout, int cluster = 1) {
    fprintf(manifest(), "%s %s grid=%d block=%d dynamic=%d carveout=%d cluster=%d\n",
            program, kernel, grid, block, dyn, carveout, cluster);
    fflush(manifest());
}

template <typename K>
static void set_carveout(K kernel, int carveout) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
}
