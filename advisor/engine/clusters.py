"""Cluster occupancy: how many thread-block clusters of a size run at once.

A cluster's blocks are co-scheduled inside one GPC (graphics processing
cluster), so the answer depends on how many SMs each GPC of the very chip has,
not only on the SM count. The model: a GPC with S SMs, each holding B blocks
of the kernel (the occupancy engine's answer), holds floor(S x B / C) clusters
of C blocks; the device holds the sum over its GPCs. This is what
cuOccupancyMaxActiveClusters answers, checked by replaying the driver's
answers recorded on a real H100 over cluster sizes 1..16 at several block
shapes (tests/test_clusters.py).

Offline, the layout is a product's nominal one (labelled nominal: harvested
chips of one product differ); `probe --only cluster` measures the real one.
"""

from __future__ import annotations

from typing import NamedTuple

PORTABLE_CLUSTER_SIZE = 8  # larger clusters need cudaFuncAttributeNonPortableClusterSizeAllowed
MAX_CLUSTER_SIZE = 16  # the non-portable limit on compute capability 9.0 and 10.0


class ClusterOccupancy(NamedTuple):
    cluster_size: int
    blocks_per_sm: int
    per_gpc: tuple[int, ...]  # clusters each GPC holds, in the layout's order
    clusters: int  # on the whole device
    non_portable: bool

    @property
    def active_blocks(self) -> int:
        return self.clusters * self.cluster_size


def cluster_occupancy(gpc_sms: list[int], blocks_per_sm: int, cluster_size: int) -> ClusterOccupancy:
    """Clusters of `cluster_size` blocks resident at once over GPCs of `gpc_sms` SMs each."""
    if not 1 <= cluster_size <= MAX_CLUSTER_SIZE:
        raise ValueError(f"cluster size must be 1..{MAX_CLUSTER_SIZE}, not {cluster_size}")
    per_gpc = tuple(sms * blocks_per_sm // cluster_size for sms in gpc_sms)
    return ClusterOccupancy(cluster_size, blocks_per_sm, per_gpc, sum(per_gpc), cluster_size > PORTABLE_CLUSTER_SIZE)
