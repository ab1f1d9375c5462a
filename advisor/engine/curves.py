"""The three occupancy graphs of NVIDIA's occupancy calculator, as data.

Each curve varies one resource of a configuration and keeps the rest:
block size (warp multiples up to the block limit), registers per thread (1 up
to the architecture's maximum), and shared memory per block (static plus
dynamic, 0 up to the per-block limit, in allocation units). Every point comes
from the exact engine, so granularity, carveout rounding, the reserved
kilobyte and launch failures (0 blocks) are all honoured.

    >>> from tuneadvise.advisor import analyze
    >>> from tuneadvise.advisor.engine.curves import occupancy_curves
    >>> curves = occupancy_curves(analyze("volta", registers=64, block_size=256))
    >>> [curve.resource for curve in curves]
    ['block_size', 'registers', 'shared_memory']
    >>> curves[1].at(32).blocks_per_sm, curves[1].at(64).blocks_per_sm
    (8, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

from .occupancy import Occupancy, shared_mem_ceiling
from .whatif import Step, block_size_table, step_at, with_total_shared_mem


@dataclass(frozen=True)
class Curve:
    resource: str  # "block_size", "registers" or "shared_memory"
    title: str  # as NVIDIA's calculator titles the graph
    x_label: str  # the varied quantity, with its unit
    points: tuple[Step, ...]  # ascending by value
    current: Step  # the configuration itself

    def format(self, value: int) -> str:
        """A value of this curve's x axis, for people: 256, 40, 20 KiB."""
        if self.resource == "shared_memory":
            return f"{value / 1024:g} KiB" if value else "0 B"
        return str(value)

    def at(self, value: int) -> Step:
        """The point at exactly `value` (KeyError if it was not sampled)."""
        for point in self.points:
            if point.value == value:
                return point
        raise KeyError(value)

    def runs(self) -> list[dict]:
        """Consecutive points with the same blocks per SM and occupancy, merged: a
        compact, exact form for JSON (every sampled value from `start` to `end`
        has these figures)."""
        merged: list[dict] = []
        for point in self.points:
            if merged and (merged[-1]["blocks_per_sm"], merged[-1]["occupancy"]) == (point.blocks_per_sm, point.occupancy):
                merged[-1]["end"] = point.value
            else:
                merged.append({"start": point.value, "end": point.value,
                               "blocks_per_sm": point.blocks_per_sm, "occupancy": point.occupancy})
        return merged


def block_size_curve(result: Occupancy) -> Curve:
    return Curve("block_size", "Impact of varying block size", "threads per block", tuple(block_size_table(result)),
                 step_at(result.arch, result.kernel, result.kernel.block_size))


def register_curve(result: Occupancy) -> Curve:
    arch, kernel = result.arch, result.kernel
    points = tuple(step_at(arch, kernel._replace(registers=regs), regs)
                   for regs in range(1, arch.max_registers_per_thread + 1))
    return Curve("registers", "Impact of varying register count per thread", "registers per thread", points,
                 step_at(arch, kernel, kernel.registers))


def shared_memory_curve(result: Occupancy) -> Curve:
    """Total shared memory per block (static + dynamic, as the kernel asks for it;
    the reserved kilobyte is the engine's to add)."""
    arch, kernel = result.arch, result.kernel
    unit = arch.shared_mem_allocation_unit
    points = tuple(step_at(arch, with_total_shared_mem(kernel, size), size)
                   for size in range(0, shared_mem_ceiling(arch, kernel.opt_in) + 1, unit))
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    return Curve("shared_memory", "Impact of varying shared memory usage per block", "shared memory per block (bytes)",
                 points, step_at(arch, kernel, total))


def occupancy_curves(result: Occupancy) -> list[Curve]:
    """Occupancy against block size, registers per thread and shared memory per block."""
    return [block_size_curve(result), register_curve(result), shared_memory_curve(result)]


def curves_document(curves: list[Curve]) -> dict:
    """JSON form: per resource, the current point and the runs (see Curve.runs)."""
    return {curve.resource: {"x_label": curve.x_label,
                             "current": {"value": curve.current.value, "blocks_per_sm": curve.current.blocks_per_sm,
                                         "occupancy": curve.current.occupancy},
                             "runs": curve.runs()}
            for curve in curves}
