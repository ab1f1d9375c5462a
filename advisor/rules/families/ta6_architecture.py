"""TA6xx: what one architecture does differently."""

from __future__ import annotations

import os

from ...engine.occupancy import Occupancy, cluster_errors
from ...text import percent, plural
from .. import LintContext, rule


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
    needs=("compiled_for",),
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
    needs=("cluster_size",),
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
    needs=("cluster_size",),
)
def cluster_non_portable(result: Occupancy, params: dict):
    size, arch = result.kernel.cluster_size, result.arch
    portable = arch.max_cluster_size_portable
    if size and portable and portable < size <= arch.max_cluster_size:
        yield (f"cluster of {size} blocks exceeds the portable {portable}: set "
               "cudaFuncAttributeNonPortableClusterSizeAllowed and size the launch with cudaOccupancyMaxActiveClusters"), \
            {"cluster_size": size}


# A kernel that does its arithmetic in double precision (a double multiply-add on line 3), as
# a rule example: lint compiles it with -lineinfo for the target and reads its machine code.
_FP64_SOURCE = """__global__ void scale(double *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 2.5 + 1.0;
}
"""


@rule(
    code="TA605", name="fp64-on-consumer-part", severity="warning", source="pg#arithmetic-instructions",
    summary="Double-precision arithmetic on an architecture whose FP64 rate is a small fraction of FP32's",
    explanation="""The kernel's machine code holds FP64 add, multiply or fused multiply-add instructions (DADD,
    DMUL, DFMA, DMNMX), and the architecture it is built for does those at a small fraction of its FP32 rate: the
    Programming Guide's throughput table gives 2 FP64 results per clock per SM against 128 FP32 on compute
    capability 8.6, 8.9, 12.0 and 12.1 (1/64), 4 against 128 on 5.x, 6.1 and 6.2, and 2 against 64 on 7.5 (1/32),
    where 6.0, 7.0, 7.2, 8.0, 9.0 and 10.0 do half as many FP64 results as FP32. Read only where nvdisasm read the kernel's machine
    code; the lines are the instructions' own (build with -lineinfo). A double literal (1.0 rather than 1.0f) or a
    double-precision math function (sin rather than sinf) is enough to bring them in. Use float where its precision
    suffices, or run the kernel on a datacenter part. A warning, not an error: a kernel may need the precision, and
    a few FP64 instructions outside its loops cost little; the count is static, not how often they run.""",
    params={"max_fp64_share": 1 / 32},
    trigger={"cuda": _FP64_SOURCE, "target": "sm_86"},
    clean={"cuda": _FP64_SOURCE, "target": "sm_80"},
    related=("fp64_lines", "FP64 arithmetic here"),
)
def fp64_on_consumer_part(kernel: LintContext, params: dict):
    sass, arch = dict(kernel.reader_figures).get("sass"), kernel.result.arch
    count = sass.instructions.get("fp64", 0) if sass is not None else 0
    fp32, fp64 = arch.fp32_results_per_clock, arch.fp64_results_per_clock
    if not count or not fp32 or not fp64 or fp64 > fp32 * params["max_fp64_share"]:
        return
    lines = [{"file": file, "line": line} for file, line in sass.fp64_lines]
    shown = ", ".join(f"{os.path.basename(p['file'])}:{p['line']}" for p in lines[:5])
    more = f" and {len(lines) - 5} more" if len(lines) > 5 else ""
    where = f" at {shown}{more}" if lines else ""
    yield (f"{plural(count, 'FP64 arithmetic instruction')}{where}: compute capability {arch.cc} does FP64 add, multiply "
           f"and FMA at 1/{fp32 // fp64} of its FP32 rate ({fp64} against {fp32} results per clock per SM); "
           "use float where its precision suffices, or run the kernel on a datacenter part "
           "(FP64 at 1/2 of FP32 on compute capability 6.0, 7.0, 8.0, 9.0 and 10.0)"), \
        {"fp64_instructions": count, "fp64_results_per_clock": fp64, "fp32_results_per_clock": fp32,
         "fp64_lines": lines}
