"""`occupancy`: one configuration's occupancy, its findings, and what the options add to it
(the calculator's three curves, cluster occupancy, DRAM parallelism)."""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import NamedTuple

from ..engine.occupancy import DynamicSharedMemBudget, Occupancy, max_dynamic_shared_mem
from ..report import occupancy_findings, resolved_document, shared_config_prediction


# NamedTuple rather than a frozen dataclass: making the dataclass's methods cost as much as a
# third of the command's own start-up (benchmarks/startup.py, -X importtime).
class OccupancyAnswer(NamedTuple):
    resolved: object  # specs' Resolved: the architecture, its product, how the name resolved
    result: Occupancy
    findings: list
    curves: list | None = None  # the three Curves, where graphs or a plot were asked for
    graphs: bool = False  # whether the curves belong in the document (--graphs) or only in a plot
    clusters: dict | None = None  # cluster occupancy, with --cluster-size on a launchable configuration
    memory_asked: bool = False  # --bytes-in-flight given
    bytes_in_flight: float | None = None
    memory: dict | None = None  # what that occupancy reaches of DRAM; None where the spec cannot say
    budget: DynamicSharedMemBudget | None = None  # dynamic shared memory that keeps the same blocks per SM
    driver_config: dict | None = None  # the shared-memory configuration the driver will pick, where known

    @property
    def launchable(self) -> bool:
        return self.result.launchable

    def to_json(self) -> dict:
        document = resolved_document(self.resolved, self.result, self.findings)
        if self.memory_asked:
            document["memory_parallelism"] = self.memory
        if self.graphs:
            from ..engine.curves import curves_document

            document["curves"] = curves_document(self.curves)
        return document


def occupancy_query(resolved, config, selection=None, graphs: bool = False, curves: bool = False,
                    bytes_in_flight: float | None = None) -> OccupancyAnswer:
    """`config` (a LaunchConfig) on `resolved`. `graphs`: the curves go into the document;
    `curves`: computed for a plot without entering it."""
    from ..engine.occupancy import occupancy

    result = occupancy(resolved.arch, config)
    drawn = None
    if graphs or curves:
        from ..engine.curves import occupancy_curves

        drawn = occupancy_curves(result)
    clusters = memory = budget = driver_config = None
    if result.launchable:
        from ..engine.clusters import cluster_document

        clusters = cluster_document(resolved, result.active_blocks_per_sm, config.cluster_size)
        if bytes_in_flight is not None:
            from ..memory_parallelism import advice

            memory = advice(resolved.product, result.active_warps_per_sm, bytes_in_flight)
        if result.active_blocks_per_sm:
            budget = max_dynamic_shared_mem(result.arch, result.kernel, result.active_blocks_per_sm)
        driver_config = shared_config_prediction(result)["shared_mem_config_prediction"]
    return OccupancyAnswer(resolved, result, occupancy_findings(resolved, result, selection), drawn, graphs, clusters,
                           bytes_in_flight is not None, bytes_in_flight, memory, budget, driver_config)
