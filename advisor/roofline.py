"""Roofline and the shared-memory performance pyramid, from a product spec or
from measured probe results.

Classic roofline: attainable = min(peak FLOP/s, intensity x memory bandwidth);
the ridge point is peak / bandwidth. Pyramid (the Rough-n-Ready Roofline note,
V100 edition): combined shared-memory + L1 bandwidth is SMs x 32 lanes x 4
bytes x clock, and a kernel moving B bytes of shared/L1 traffic per FLOP is
capped at that bandwidth / B. The note uses the base clock, so the pyramid
does too when the product has one. Where shared memory and L1 are separate
caches (the architecture's `shared_l1_unified` is false: Maxwell, Pascal, as
the note says of the P100), the same figure is shared memory's bandwidth alone
and only shared-memory traffic counts against it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..specs.errors import InputError
from .text import quoted

PRECISIONS = {"fp64": "fp64_tflops", "fp32": "fp32_tflops", "fp16": "fp16_tflops"}
PROBE_FOR = {"fp64": "fp64_fma", "fp32": "fp32_fma", "fp16": "fp16x2_fma"}
# A figure more than this far above its theoretical peak (a measured result, a kernel's achieved
# FLOP/s) is flagged, not reported as fact.
ABOVE_PEAK_TOLERANCE = 0.03


class RooflineError(InputError):
    """A machine that lacks a figure the roofline needs, or a figure out of range; the message names it."""


# Every figure the roofline takes (FLOP per byte, FLOP/s, bytes per FLOP, a probe's median) lies
# in this range, so each one derived from them (ceilings, headroom, the chart's window) is a
# finite float: 1e308 FLOP/byte would make the chart's edge and the JSON infinite.
FIGURE_RANGE = (1e-100, 1e100)


def in_figure_range(value, what: str) -> float:
    """`value` as a float within FIGURE_RANGE; RooflineError naming `what` otherwise."""
    low, high = FIGURE_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RooflineError(f"{what}: expected a number from {low:g} to {high:g}, got {_described(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not low <= number <= high:  # NaN is neither
        raise RooflineError(f"{what}: must be a number from {low:g} to {high:g}, got {_described(value)}")
    return number


def _described(value) -> str:
    """A scalar as quoted() repeats it; anything else by its JSON type (never the whole structure)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return quoted(value)
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


def probe_ceilings(probe) -> tuple[str, dict[str, float]]:
    """(the device's name, {probe name: median}) from a `probe --format json` document: the
    results a roofline may use (a value, not flagged above its peak). Every result is checked:
    an object with a string name, `value` null or a number (within FIGURE_RANGE for the probes
    the roofline reads), `above_peak` true or false; RooflineError naming the field otherwise."""
    if not isinstance(probe, dict):
        raise RooflineError(f"--probe: expected a probe document (an object), got {_described(probe)}")
    device, results = probe.get("device"), probe.get("results")
    if not isinstance(device, dict) or not isinstance(device.get("name"), str):
        raise RooflineError("--probe: device.name: expected the device's name (a string), got "
                            f"{_described(device.get('name') if isinstance(device, dict) else device)}")
    if not isinstance(results, list):
        raise RooflineError(f"--probe: results: expected a list of probe results, got {_described(results)}")
    used = {"dram_copy", *PROBE_FOR.values()}
    values: dict[str, float] = {}
    for index, result in enumerate(results):
        where = f"--probe: results[{index}]"
        if not isinstance(result, dict):
            raise RooflineError(f"{where}: expected an object with name and value, got {_described(result)}")
        name, value, above = result.get("name"), result.get("value"), result.get("above_peak", False)
        if not isinstance(name, str):
            raise RooflineError(f"{where}.name: expected a probe's name (a string), got {_described(name)}")
        if not isinstance(above, bool):
            raise RooflineError(f"{where}.above_peak ({quoted(name)}): expected true or false, got {_described(above)}")
        if value is None:
            continue  # the probe failed or did not run
        if name in used:
            value = in_figure_range(value, f"{where}.value ({quoted(name)})")
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RooflineError(f"{where}.value ({quoted(name)}): expected a number or null, got {_described(value)}")
        if not above:
            values[name] = value
    return device["name"], values


@dataclass(frozen=True)
class Ceiling:
    value: float  # FLOP/s or bytes/s
    basis: str  # where it comes from


@dataclass(frozen=True)
class Machine:
    name: str
    precision: str
    peak: Ceiling  # FLOP/s
    memory: Ceiling  # bytes/s, the one the verdict uses
    memory_theoretical: Ceiling | None
    shared_l1: Ceiling | None  # bytes/s
    shared_l1_unified: bool = True  # False: shared_l1 is shared memory's bandwidth alone

    @property
    def shared_name(self) -> str:
        """What the pyramid's bandwidth is of: 'shared + L1' (one array) or 'shared memory' alone."""
        return "shared + L1" if self.shared_l1_unified else "shared memory"

    @property
    def ridge(self) -> float:
        """FLOP/byte where the memory roof meets the compute roof."""
        return self.peak.value / self.memory.value


def machine_from_product(product, warp_size: int, precision: str, probe: dict | None = None,
                         shared_l1_unified: bool = True) -> Machine:
    """Ceilings of a product; measured ones from a probe document where given,
    else the product's measured copy bandwidth, else its theoretical figures.
    `shared_l1_unified`: the architecture's (False: the pyramid is shared memory's alone)."""
    field = PRECISIONS[precision]
    peak_tflops = product.get(field)
    if not peak_tflops:
        raise RooflineError(f"--precision: {product.name} has no {precision} peak in its spec")
    peak = Ceiling(peak_tflops * 1e12, f"{product.title}: {peak_tflops:g} TFLOP/s {precision} ({product.sources.get(field)})")
    theoretical = Ceiling(product.get("memory_bandwidth_gbs") * 1e9,
                          f"{product.title}: {product.get('memory_bandwidth_gbs'):g} GB/s theoretical "
                          f"({product.sources.get('memory_bandwidth_gbs')})")
    memory = theoretical
    if product.get("measured_copy_bandwidth_gbs"):
        measured = product.get("measured_copy_bandwidth_gbs")
        memory = Ceiling(measured * 1e9, f"{product.title}: {measured:g} GB/s measured copy "
                                         f"({product.sources.get('measured_copy_bandwidth_gbs')})")
    if probe is not None:
        device, results = probe_ceilings(probe)
        device = device if len(device) <= 80 else device[:77] + "..."
        if "dram_copy" in results:
            memory = Ceiling(results["dram_copy"] * 1e9, f"measured: probe dram_copy on {device}, median")
        if PROBE_FOR[precision] in results:
            peak = Ceiling(results[PROBE_FOR[precision]] * 1e12,
                           f"measured: probe {PROBE_FOR[precision]} on {device}, median")
    clock_field = "base_clock_mhz" if product.get("base_clock_mhz") else "boost_clock_mhz"
    clock, sms = product.get(clock_field), product.get("sm_count")
    shared = None
    if clock and sms:
        what = "" if shared_l1_unified else "shared memory alone (L1 is a separate cache): "
        shared = Ceiling(sms * warp_size * 4 * clock * 1e6,
                         f"{what}{sms} SMs ({product.sources.get('sm_count')}) x {warp_size} lanes x 4 B x {clock} MHz "
                         f"{clock_field.split('_')[0]} clock ({product.sources.get(clock_field)})")
    return Machine(product.name, precision, peak, memory, theoretical, shared, shared_l1_unified)


@dataclass(frozen=True)
class Placement:
    intensity: float  # FLOP/byte of device-memory traffic
    attainable: float  # FLOP/s under the roofline
    bound: str  # "memory" or "compute"
    pyramid_cap: float | None  # FLOP/s cap from shared/L1 traffic
    ceiling: float  # the lower of the two
    achieved: float | None
    headroom: float | None  # ceiling / achieved

    @property
    def achieved_above_ceiling(self) -> bool:
        """Further above the ceiling than a probe result may be above its peak: the inputs (FLOPs,
        bytes, time) deserve a second look."""
        return bool(self.achieved and self.achieved > self.ceiling * (1 + ABOVE_PEAK_TOLERANCE))


def place(machine: Machine, intensity: float, shared_bytes_per_flop: float | None = None,
          achieved: float | None = None, where: str = "", intensity_name: str = "--intensity") -> Placement:
    """The kernel's place under the machine's roofs; each figure within FIGURE_RANGE (RooflineError
    naming it, after `where`, otherwise)."""
    intensity = in_figure_range(intensity, f"{where}{intensity_name} (FLOP per byte)")
    if shared_bytes_per_flop is not None:
        shared_bytes_per_flop = in_figure_range(shared_bytes_per_flop, f"{where}--shared-bytes-per-flop")
    if achieved is not None:
        achieved = in_figure_range(achieved, f"{where}--achieved")
    attainable = min(machine.peak.value, intensity * machine.memory.value)
    bound = "memory" if intensity < machine.ridge else "compute"
    cap = None
    if shared_bytes_per_flop:
        if machine.shared_l1 is None:
            raise RooflineError("--shared-bytes-per-flop: this machine's spec has no SM count or clock")
        cap = min(machine.peak.value, machine.shared_l1.value / shared_bytes_per_flop)
    ceiling = min(attainable, cap) if cap is not None else attainable
    if cap is not None and cap < attainable:
        bound = "shared-memory/L1" if machine.shared_l1_unified else "shared-memory"
    headroom = ceiling / achieved if achieved else None
    return Placement(intensity, attainable, bound, cap, ceiling, achieved, headroom)


def pyramid(machine: Machine, bytes_per_flop=(0.5, 1, 2, 4, 6, 8, 16)) -> list[tuple[float, float]]:
    """(shared/L1 bytes per FLOP, attainable FLOP/s) bands."""
    if machine.shared_l1 is None:
        return []
    return [(b, min(machine.peak.value, machine.shared_l1.value / b)) for b in bytes_per_flop]


# On a log axis a factor is a fixed distance: this one keeps a kernel's mark clear of the edge.
CHART_MARGIN = 3.0


@dataclass(frozen=True, slots=True)
class ChartRange:
    """The log-log window a roofline is drawn in (FLOP/byte across, FLOP/s up)."""

    x_low: float
    x_high: float
    y_low: float
    y_high: float


def chart_range(machine: Machine, placements) -> ChartRange:
    """A window showing the ridge and both roofs, and every kernel's point (its achieved
    FLOP/s, or its ceiling where none was given) CHART_MARGIN inside the edge: a kernel far
    below the memory roof or above the compute roof stays whole on the chart."""
    intensities = [p.intensity for p in placements]
    heights = [p.achieved or p.ceiling for p in placements]
    x_low = min([machine.ridge / 64, *[i / CHART_MARGIN for i in intensities]])
    x_high = max([machine.ridge * 16, *[i * CHART_MARGIN for i in intensities]])
    y_low = min([machine.memory.value * x_low / 2, *[h / CHART_MARGIN for h in heights]])
    y_high = max([machine.peak.value * 2, *[h * CHART_MARGIN for h in heights]])
    return ChartRange(x_low, x_high, y_low, y_high)


def placement_document(placement: Placement) -> dict:
    return {
        "intensity_flop_per_byte": placement.intensity,
        "bound": placement.bound,
        "roofline_flop_per_s": placement.attainable,
        "pyramid_cap_flop_per_s": placement.pyramid_cap,
        "ceiling_flop_per_s": placement.ceiling,
        "achieved_flop_per_s": placement.achieved,
        "headroom_ratio": placement.headroom,
        "achieved_above_ceiling": placement.achieved_above_ceiling,
    }


def roofline_document(machine: Machine, placement: Placement | None, schema_version: int,
             kernels: list[tuple[str, Placement]] = ()) -> dict:
    """The machine's ceilings; `kernel`: the one kernel given by flags (or null);
    `kernels`: the named kernels of a --kernels file, in file order."""
    return {
        "schema_version": schema_version,
        "machine": machine.name,
        "precision": machine.precision,
        "peak_flop_per_s": machine.peak.value,
        "peak_basis": machine.peak.basis,
        "memory_bandwidth_bytes_per_s": machine.memory.value,
        "memory_bandwidth_basis": machine.memory.basis,
        "theoretical_memory_bandwidth_bytes_per_s": machine.memory_theoretical.value if machine.memory_theoretical else None,
        "shared_l1_bandwidth_bytes_per_s": machine.shared_l1.value if machine.shared_l1 else None,
        "shared_l1_bandwidth_basis": machine.shared_l1.basis if machine.shared_l1 else None,
        "shared_l1_unified": machine.shared_l1_unified,
        "ridge_intensity_flop_per_byte": machine.ridge,
        "pyramid": [{"shared_bytes_per_flop": b, "attainable_flop_per_s": f} for b, f in pyramid(machine)],
        "kernel": None if placement is None else placement_document(placement),
        "kernels": [{"name": name, **placement_document(p)} for name, p in kernels],
    }
