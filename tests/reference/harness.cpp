// Differential-test driver for NVIDIA's cuda_occupancy.h.
//
// The header itself is not part of this repository: the test suite downloads
// NVIDIA's runtime wheel of each release at test time and compiles this file
// against the header inside it (with -DTA_VIRTUAL_RESOURCES where the header
// has CUDA 13's virtual-resource limiter).
//
// Input, one case per line on stdin:
//   O <device props> <function attrs> <state> <blockSize> <dynamicSmem>
//   P <device props> <function attrs> <state> <dynamicSmemBase> <dynamicSmemPerThread>
//   A <device props> <function attrs> <state> <numBlocks> <blockSize>
// device props: major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock
//               regsPerSM warpSize smemPerBlock smemPerSM numSms smemOptin reserved
// function attrs: maxThreadsPerBlock numRegs sharedSizeBytes shmemLimitConfig
//                 maxDynamicSharedSizeBytes numBlockBarriers virtualResourceCount
// state: cacheConfig carveoutConfig
//
// Output, one line per case:
//   O: status active limitingFactors limRegs limSmem limWarps limBlocks limBarriers allocRegs allocSmem limVirtual
//   P: status minGridSize blockSize
//   A: status bytesAvailable (cudaOccAvailableDynamicSMemPerBlock)
#include <climits>
#include <cstdio>
#include <cstring>
#include "cuda_occupancy.h"

struct Linear {
    size_t base, perThread;
    size_t operator()(int blockSize) const { return base + perThread * (size_t)blockSize; }
};

int main() {
    char mode[4];
    while (std::scanf("%3s", mode) == 1) {
        cudaOccDeviceProp p;
        cudaOccFuncAttributes a;
        cudaOccDeviceState s;
        long long smemPerBlock, smemPerSM, smemOptin, reserved, shared, maxDyn;
        int cacheConfig, shmemConfig, virtualResources;
        std::scanf("%d %d %d %d %d %d %d %lld %lld %d %lld %lld",
                   &p.computeMajor, &p.computeMinor, &p.maxThreadsPerBlock,
                   &p.maxThreadsPerMultiprocessor, &p.regsPerBlock, &p.regsPerMultiprocessor,
                   &p.warpSize, &smemPerBlock, &smemPerSM, &p.numSms, &smemOptin, &reserved);
        p.sharedMemPerBlock = (size_t)smemPerBlock;
        p.sharedMemPerMultiprocessor = (size_t)smemPerSM;
        p.sharedMemPerBlockOptin = (size_t)smemOptin;
        p.reservedSharedMemPerBlock = (size_t)reserved;
        std::scanf("%d %d %lld %d %lld %d %d", &a.maxThreadsPerBlock, &a.numRegs, &shared,
                   &shmemConfig, &maxDyn, &a.numBlockBarriers, &virtualResources);
#ifdef TA_VIRTUAL_RESOURCES
        a.virtualResourceCount = virtualResources;
#endif
        a.sharedSizeBytes = (size_t)shared;
        a.partitionedGCConfig = PARTITIONED_GC_OFF;
        a.shmemLimitConfig = (cudaOccFuncShmemConfig)shmemConfig;
        a.maxDynamicSharedSizeBytes = (size_t)maxDyn;
        std::scanf("%d %d", &cacheConfig, &s.carveoutConfig);
        s.cacheConfig = (cudaOccCacheConfig)cacheConfig;
        if (mode[0] == 'O') {
            int blockSize;
            long long dyn;
            std::scanf("%d %lld", &blockSize, &dyn);
            cudaOccResult r;
            std::memset(&r, 0, sizeof r);
            cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, blockSize, (size_t)dyn);
#ifdef TA_VIRTUAL_RESOURCES
            int limVirtual = r.blockLimitVirtual;
#else
            int limVirtual = INT_MAX;
#endif
            std::printf("%d %d %u %d %d %d %d %d %d %zu %d\n", (int)e, r.activeBlocksPerMultiprocessor,
                        r.limitingFactors, r.blockLimitRegs, r.blockLimitSharedMem, r.blockLimitWarps,
                        r.blockLimitBlocks, r.blockLimitBarriers, r.allocatedRegistersPerBlock,
                        r.allocatedSharedMemPerBlock, limVirtual);
        } else if (mode[0] == 'A') {
            int numBlocks, blockSize;
            std::scanf("%d %d", &numBlocks, &blockSize);
            size_t bytes = 0;
            cudaOccError e = cudaOccAvailableDynamicSMemPerBlock(&bytes, &p, &a, &s, numBlocks, blockSize);
            std::printf("%d %zu\n", (int)e, bytes);
        } else {
            long long base, perThread;
            std::scanf("%lld %lld", &base, &perThread);
            int minGrid = 0, block = 0;
            Linear f{(size_t)base, (size_t)perThread};
            cudaOccError e = cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(&minGrid, &block, &p, &a, &s, f);
            std::printf("%d %d %d\n", (int)e, minGrid, block);
        }
    }
    return 0;
}
