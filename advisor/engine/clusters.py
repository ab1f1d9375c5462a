"""Cluster occupancy: how many thread-block clusters of a size run at once.

A cluster's blocks are co-scheduled inside one GPC (graphics processing
cluster), so the answer depends on how many SMs each GPC of the very chip has,
not only on the SM count. The model: a GPC with S SMs, each holding B blocks
of the kernel (the occupancy engine's answer, at most CLUSTER_BLOCKS_PER_SM),
holds floor(S x B / C) clusters of C blocks when it has at least C SMs, none
otherwise; the device holds the sum over its GPCs. This is what
cuOccupancyMaxActiveClusters answers: tests/engine/test_clusters.py replays the
driver's answers recorded on an H100 over cluster sizes 1..16 at several
block shapes.

Offline, the layout is a product's nominal one (labelled nominal: harvested
chips of one product differ); `probe --only cluster` measures the real one.
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import NamedTuple

# Measured, not documented: on the H100 (driver 580, CUDA 13) a kernel the driver
# fits 16 times per SM alone (128 threads) counts 8 per SM in every cluster answer,
# sizes 1..16 alike; see tests/fixtures/h100/clusters.json.
CLUSTER_BLOCKS_PER_SM = 8


class ClusterOccupancy(NamedTuple):
    cluster_size: int
    blocks_per_sm: int
    per_gpc: tuple[int, ...]  # clusters each GPC holds, in the layout's order
    clusters: int  # on the whole device
    non_portable: bool

    @property
    def active_blocks(self) -> int:
        return self.clusters * self.cluster_size


def cluster_occupancy(arch, gpc_sms: list[int], blocks_per_sm: int, cluster_size: int) -> ClusterOccupancy:
    """Clusters of `cluster_size` blocks resident at once over GPCs of `gpc_sms` SMs each, within
    `arch`'s cluster sizes (its portable and non-portable limits). `arch` None: a device no spec
    describes, whose driver took the size; nothing is checked and nothing is called non-portable."""
    largest = arch.max_cluster_size if arch is not None else None
    if arch is not None and not 1 <= cluster_size <= (largest or 1):
        raise ValueError(f"cluster size must be 1..{largest or 1} on {arch.sm}, not {cluster_size}")
    blocks = min(blocks_per_sm, CLUSTER_BLOCKS_PER_SM)
    per_gpc = tuple(sms * blocks // cluster_size if sms >= cluster_size else 0 for sms in gpc_sms)
    non_portable = arch is not None and cluster_size > (arch.max_cluster_size_portable or 1)
    return ClusterOccupancy(cluster_size, blocks_per_sm, per_gpc, sum(per_gpc), non_portable)


def cluster_document(resolved, blocks_per_sm: int, cluster_size: int | None) -> dict | None:
    """The `clusters` entry of an occupancy document for a Resolved arch: None without
    --cluster-size; the model over the product's nominal GPC layout, labelled so; or why not."""
    product = resolved.product
    if cluster_size is None:
        return None
    layout = product.get("gpc_sms") if product is not None else None
    if not layout:
        return {"cluster_size": cluster_size, "max_active_clusters": None,
                "why_not": "no GPC layout for this --arch: name a product that carries one (h100-sxm) or measure "
                           "the device with 'tuneadvise probe --only cluster'"}
    result = cluster_occupancy(resolved.arch, list(layout), blocks_per_sm, cluster_size)
    return {"cluster_size": cluster_size, "max_active_clusters": result.clusters,
            "per_gpc": list(result.per_gpc), "gpc_sms": list(layout),
            "blocks_per_sm_in_clusters": min(blocks_per_sm, CLUSTER_BLOCKS_PER_SM),
            "non_portable": result.non_portable,
            "layout_basis": _basis(product)}


def _basis(product) -> str:
    source = product.sources.get("gpc_sms", "user")
    if source.startswith("measured#"):
        return f"measured on this device ({source})"
    return (f"nominal: {product.title}'s GPC layout ({source}); harvested chips differ, "
            "'probe --only cluster' measures yours")
