// Thread-block cluster launches (cudaLaunchKernelEx with a cluster dimension of
// 1, 2, 4 and 8) with grids below, at and above one wave of clusters, for the
// grid rules that count clusters. Each launch's parameters (cluster= the
// cluster size) go to the NCU_MANIFEST log; the export's LaunchStats section
// shows the cluster size and Occupancy the cluster-limited occupancy. The
// driver's cudaOccupancyMaxActiveClusters for each shape goes to stderr.
#include "ncu_common.cuh"

__global__ void clustered(float* out, int iters) {
    extern __shared__ float tile[];
    float a = threadIdx.x;
    for (int i = 0; i < iters; ++i) a = a * 0.999f + 1.0f;
    tile[threadIdx.x] = a;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

// A launch of `grid` blocks of `block` threads in clusters of `cluster` blocks along x. The
// configuration points to `attr` (the cluster dimension): the caller keeps it alive.
static cudaLaunchConfig_t cluster_config(int grid, int block, int dyn, int cluster, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.dynamicSmemBytes = dyn;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cluster;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

static void launch(float* out, int grid, int block, int dyn, int cluster) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_config(grid, block, dyn, cluster, &attr);
    CHECK(cudaLaunchKernelEx(&cfg, clustered, out, 2000));
    CHECK(cudaGetLastError());
    log_launch("ncu_clusters", "clustered", grid, block, dyn, -1, cluster);
}

int main() {
    float* out;
    CHECK(cudaMalloc(&out, size_t(64) << 20));
    CHECK(cudaFuncSetAttribute(clustered, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int shapes[][2] = {{256, 4096}, {256, 65536}, {1024, 4096}, {128, 100 * 1024}};
    for (auto& s : shapes)
        for (int cluster : {1, 2, 4, 8}) {
            int block = s[0], dyn = s[1];
            cudaLaunchAttribute attr;
            cudaLaunchConfig_t cfg = cluster_config(cluster * sms, block, dyn, cluster, &attr);
            int clusters = 0;  // resident clusters at once: one wave
            CHECK(cudaOccupancyMaxActiveClusters(&clusters, clustered, &cfg));
            fprintf(stderr, "block=%d dynamic=%d cluster=%d max_active_clusters=%d\n", block, dyn, cluster, clusters);
            if (clusters < 1) continue;
            for (int wave : {clusters / 2, clusters - 1, clusters, clusters + 1, 2 * clusters})
                if (wave > 0) launch(out, wave * cluster, block, dyn, cluster);
        }
    CHECK(cudaDeviceSynchronize());
    return 0;
}
