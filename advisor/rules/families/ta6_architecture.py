"""TA6xx: what one architecture does differently."""

from __future__ import annotations

from ...engine.occupancy import Occupancy, cluster_errors
from ...text import percent
from .. import rule


@rule(
    code="TA601", name="turing-smaller-sm", severity="info", source="turing-guide#4.1.3",
    summary="Turing's 32-warp and 16-block limits bind where Volta's would not",
    explanation="""Turing (7.5) keeps at most 32 warps and 16 blocks per SM, half of Volta's 64 and 32; block sizes
    tuned for Volta may reach a lower occupancy ceiling, or be limited by the block count with small blocks.
    Information: the limits are the hardware's; it explains an occupancy ceiling carried over from Volta.""",
    trigger={"arch": "turing", "registers": 16, "block_size": 32},
    clean={"arch": "turing", "registers": 32, "block_size": 256, "shared_mem": "20K"},
)
def turing_smaller_sm(result: Occupancy, params: dict):
    arch = result.arch
    if arch.cc == "7.5" and result.launchable and "blocks" in result.limiters and result.occupancy < 1:
        need = -(-arch.max_threads_per_sm // arch.max_blocks_per_sm)
        yield (f"Turing holds at most {arch.max_blocks_per_sm} blocks per SM: blocks of {result.kernel.block_size} "
               f"threads reach {percent(result.occupancy)}; use at least {need} threads per block"), {"min_block_size": need}


@rule(
    code="TA602", name="volta-binary-on-turing", severity="warning", source="turing-guide#4.2",
    summary="Code compiled for sm_70 runs on Turing at half its tensor-core peak",
    explanation="""Any binary compiled for Volta runs on Turing, but Volta binaries using tensor cores reach only
    half of Turing's tensor-core peak. Recompile for sm_75 (add -gencode arch=compute_75,code=sm_75). A warning: the
    binary runs, at half the tensor-core rate, and a rebuild fixes it.""",
    trigger={"arch": "turing", "registers": 32, "block_size": 256, "compiled_for": "sm_70"},
    clean={"arch": "turing", "registers": 32, "block_size": 256, "compiled_for": "sm_75"},
)
def volta_binary_on_turing(result: Occupancy, params: dict):
    compiled_for = result.kernel.compiled_for
    if result.arch.cc == "7.5" and compiled_for and compiled_for.lower().startswith("sm_70"):
        # The guide's figure is about tensor-core code; other code is not said to lose anything.
        yield ("code compiled for sm_70 runs on Turing, but if it uses tensor cores (WMMA, mma.sync) it reaches "
               "only half of Turing's tensor-core peak; add -gencode arch=compute_75,code=sm_75"), {}


@rule(
    code="TA603", name="cluster-size", severity="error", source="blackwell-guide#4.1.2",
    summary="Thread-block cluster larger than the architecture allows",
    explanation="""Clusters exist from 9.0 on. The portable maximum is 8 blocks; larger clusters (16 on H100 and
    B200) need cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), and larger clusters
    may reduce the number of active blocks: size launches with cudaOccupancyMaxActiveClusters. An error: the cluster
    launch fails.""",
    trigger={"arch": "hopper", "registers": 32, "block_size": 128, "cluster_size": 32},
    clean={"arch": "hopper", "registers": 32, "block_size": 128, "cluster_size": 8},
)
def cluster_size(result: Occupancy, params: dict):
    for error in cluster_errors(result.arch, result.kernel):  # the engine's launch check, one home
        yield error.message, {"cluster_size": result.kernel.cluster_size}


@rule(
    code="TA604", name="cluster-non-portable", severity="warning", source="blackwell-guide#4.1.2",
    summary="Cluster larger than the portable size of 8",
    explanation="""Clusters above 8 blocks are non-portable: they need the
    cudaFuncAttributeNonPortableClusterSizeAllowed attribute and are not guaranteed on every GPU of the
    architecture. A warning: the launch fails without the non-portable attribute and may fail on other GPUs of the
    architecture, though it can be made to work.""",
    trigger={"arch": "blackwell", "registers": 32, "block_size": 128, "cluster_size": 16},
    clean={"arch": "blackwell", "registers": 32, "block_size": 128, "cluster_size": 4},
)
def cluster_non_portable(result: Occupancy, params: dict):
    size, arch = result.kernel.cluster_size, result.arch
    portable = arch.max_cluster_size_portable
    if size and portable and portable < size <= arch.max_cluster_size:
        yield (f"cluster of {size} blocks exceeds the portable {portable}: set "
               "cudaFuncAttributeNonPortableClusterSizeAllowed and size the launch with cudaOccupancyMaxActiveClusters"), \
            {"cluster_size": size}
