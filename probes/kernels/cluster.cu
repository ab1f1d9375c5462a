// Where the blocks of a thread-block cluster run: each block records its SM
// (%smid), its cluster's index in the grid (%clusterid.x) and its rank in the
// cluster (%cluster_ctarank). A cluster always runs inside one GPC, so SMs that
// ever share a cluster belong to the same GPC. Block 0's thread 0 of each block
// holds the SM for `hold_ns`, so clusters spread over every GPC.
#include "common.cuh"

extern "C" __global__ void cluster_where(unsigned* __restrict__ records, unsigned long long hold_ns) {
    extern __shared__ float dynamic_smem[];
    if (threadIdx.x == 0) {
        unsigned cluster, rank;
        asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
        asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
        const unsigned long long start = global_timer_ns();
        while (global_timer_ns() - start < hold_ns) {
        }
        records[3 * blockIdx.x] = sm_id();
        records[3 * blockIdx.x + 1] = cluster;
        records[3 * blockIdx.x + 2] = rank;
    }
}
