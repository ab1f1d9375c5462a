"""Probe results as plain numbers: statistics, theoretical peaks, efficiency,
flags, and the versioned JSON document. No GPU needed; the tests run this on
results recorded from real devices (tests/fixtures/)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..advisor.report import SCHEMA_VERSION
from ..advisor.roofline import ABOVE_PEAK_TOLERANCE

# A figure whose repeats disagree by more than this (see Measurement.stability_spread)
# is reported as unstable, never as a result.
UNSTABLE_SPREAD = 0.10


@dataclass
class Measurement:
    name: str  # stable identifier, e.g. "dram_triad"
    group: str  # memory, compute, latency, launch, occupancy
    unit: str
    samples: list = field(default_factory=list)  # one value per timed repeat, in `unit`
    method: str = ""
    higher_is_better: bool = True
    peak: float | None = None  # theoretical, in `unit`
    peak_basis: str | None = None  # how the peak was obtained
    details: dict = field(default_factory=dict)  # probe-specific numbers (sizes, cycles, configs)
    error: str | None = None  # set when the probe failed; the others still run

    @property
    def value(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def best(self) -> float | None:
        if not self.samples:
            return None
        return max(self.samples) if self.higher_is_better else min(self.samples)

    @property
    def spread(self) -> float | None:
        """(max - min) / median: how much the repeats disagree."""
        if len(self.samples) < 2 or not self.value:
            return None
        return (max(self.samples) - min(self.samples)) / abs(self.value)

    @property
    def stability_spread(self) -> float | None:
        """(p90 - p10) / median with ten or more repeats (one stray host-side
        outlier does not condemn 200 launches), else (max - min) / median."""
        if len(self.samples) < 10:
            return self.spread
        ordered = sorted(self.samples)
        low, high = ordered[len(ordered) // 10], ordered[-1 - len(ordered) // 10]
        return (high - low) / abs(self.value) if self.value else None

    @property
    def unstable(self) -> bool:
        s = self.stability_spread
        return self.error is None and s is not None and s > UNSTABLE_SPREAD

    @property
    def efficiency(self) -> float | None:
        if self.peak is None or self.value is None or not self.higher_is_better:
            return None
        return self.value / self.peak

    @property
    def above_peak(self) -> bool:
        return self.efficiency is not None and self.efficiency > 1 + ABOVE_PEAK_TOLERANCE

    def as_dict(self) -> dict:
        unstable = self.unstable  # an unstable figure is not a result: value, best and efficiency are null
        return {
            "name": self.name,
            "group": self.group,
            "unit": self.unit,
            "value": None if unstable else self.value,
            "best": None if unstable else self.best,
            "spread": self.spread,
            "stability_spread": self.stability_spread,
            "unstable": unstable,
            "samples": list(self.samples),
            "peak": self.peak,
            "peak_basis": self.peak_basis,
            "efficiency": None if unstable else self.efficiency,
            "above_peak": self.above_peak,
            "method": self.method,
            "details": self.details,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, doc: dict) -> Measurement:
        return cls(
            name=doc["name"], group=doc["group"], unit=doc["unit"], samples=list(doc.get("samples", [])),
            method=doc.get("method", ""), higher_is_better=doc.get("higher_is_better", doc["group"] not in ("latency", "launch")),
            peak=doc.get("peak"), peak_basis=doc.get("peak_basis"), details=doc.get("details", {}), error=doc.get("error"),
        )


# -- theoretical peaks ---------------------------------------------------------

# probe name -> product field holding its peak (TFLOP/s scale with the SM clock)
_THROUGHPUT_FIELDS = {"fp32_fma": "fp32_tflops", "fp64_fma": "fp64_tflops", "fp16x2_fma": "fp16_tflops"}


def match_product(catalog, cc: str, sm_count: int, device_name: str):
    """The catalog product this device is: same compute capability and SM count,
    and, among several, the one whose name appears in the device's name."""
    candidates = [p for p in catalog.products.values() if p.cc == cc and p.get("sm_count") == sm_count]
    flat = device_name.lower().replace(" ", "").replace("-", "")
    for product in candidates:
        for name in (product.name, *product.names):
            if name.replace("-", "") in flat:
                return product
    if len(candidates) == 1:
        return candidates[0]
    # Several with no name match (e.g. "H100 80GB HBM3" vs SXM/PCIe): prefer the base model.
    named = [p for p in candidates if p.name.split("-")[0] in flat]
    return named[0] if named else None


def apply_peaks(measurements: list[Measurement], product, sm_count: int, warp_size: int, clock_mhz: float | None) -> None:
    """Fill in each measurement's theoretical peak from the product spec.

    Arithmetic peaks are scaled from the product's boost clock to the SM clock
    observed during the run; shared memory is SMs x 32 banks x 4 bytes x clock
    (the roofline note's formula); device memory is the product's figure.
    """
    for m in measurements:
        if m.name.startswith("dram_") and product is not None:
            m.peak = float(product.get("memory_bandwidth_gbs"))
            m.peak_basis = f"{product.title}: {m.peak:g} GB/s ({product.sources.get('memory_bandwidth_gbs')})"
        elif m.name in _THROUGHPUT_FIELDS and product is not None and product.get(_THROUGHPUT_FIELDS[m.name]):
            at_boost = float(product.get(_THROUGHPUT_FIELDS[m.name]))
            boost = product.get("boost_clock_mhz")
            observed = m.details.get("sm_clock_mhz") or clock_mhz  # the clock during this very run
            if observed and boost:
                m.peak = at_boost * observed / boost
                m.peak_basis = f"{product.title}: {at_boost:g} TFLOP/s at {boost} MHz, scaled to the observed {observed:.0f} MHz"
            else:
                m.peak = at_boost
                m.peak_basis = f"{product.title}: {at_boost:g} TFLOP/s at the {boost} MHz boost clock"
        elif m.name == "shared_read" and clock_mhz:
            m.peak = sm_count * warp_size * 4 * clock_mhz * 1e6 / 1e9
            m.peak_basis = f"{sm_count} SMs x {warp_size} banks x 4 B (driver) x {clock_mhz:.0f} MHz observed"


def device_document(device: dict, product, clock_mhz: float | None, measurements: list[Measurement], quick: bool) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "device": device,
        "product": product.name if product is not None else None,
        "sm_clock_mhz": clock_mhz,
        "quick": quick,
        "results": [m.as_dict() for m in measurements],
        "failed": [m.name for m in measurements if m.error],
        "above_peak": [m.name for m in measurements if m.above_peak],
        "unstable": [m.name for m in measurements if m.unstable],
    }


def differs_most(documents: list[dict]) -> list[dict]:
    """Per figure reported by every device: the device (by its place in the
    run and its index) farthest from the median of the others, and by how much.
    Unstable or failed figures are left out."""
    rows = []
    names = [r["name"] for r in documents[0]["results"]]
    for name in names:
        values = []
        for doc in documents:
            r = next((r for r in doc["results"] if r["name"] == name), None)
            if r is None or r["value"] is None or r.get("unstable") or r["error"]:
                break
            values.append(float(r["value"]))
        else:
            if len(values) < 2:
                continue
            scored = []
            for i, value in enumerate(values):
                others = statistics.median(values[:i] + values[i + 1:])
                scored.append((abs(value - others) / abs(others) if others else 0.0, i, value, others))
            score, i, value, others = max(scored)
            unit = next(r["unit"] for r in documents[i]["results"] if r["name"] == name)
            rows.append({"name": name, "position": i, "device": documents[i]["device"]["index"], "value": value,
                         "unit": unit, "others_median": others,
                         "difference": (value - others) / others if others else 0.0})
    return rows


def measurements_from_document(doc: dict) -> list[Measurement]:
    return [Measurement.from_dict(r) for r in doc["results"]]


# -- recomputing a recorded run ------------------------------------------------------

def judge_residency(arch, config: dict) -> dict:
    """One residency configuration with today's engine answer and verdict added.

    `config` holds what the GPU run recorded: the inputs (registers, block size,
    dynamic shared memory, carveout) and the outside truth (the driver's answer,
    the blocks measured resident). The probe always opts in to the maximum, so
    the engine is told opt_in=True. Where nothing was launched, the engine and
    the driver must both say 0."""
    from ..advisor.engine.occupancy import occupancy
    from .driver import engine_kernel

    # The residency kernel has no static shared memory and no __launch_bounds__; runs recorded
    # before the rows carried these attributes did not store them.
    attributes = {"registers": config["registers"], "static_shared_mem": config.get("static_shared_mem", 0),
                  "max_threads_per_block": config.get("max_threads_per_block")}
    kernel = engine_kernel(attributes, config["block_size"], config["dynamic_shared_mem"], config["carveout"], opt_in=True)
    engine = occupancy(arch, kernel).active_blocks_per_sm
    measured = config.get("measured")
    match = measured == engine if measured is not None else engine == config["driver"] == 0
    return {**config, "engine": engine, "match": match}


def judge_clusters(arch, record: dict) -> dict:
    """Today's cluster model over a recorded cluster probe: for every block shape
    and cluster size, the model's clusters (from the measured GPC layout and the
    engine's blocks per SM) against the driver's cuOccupancyMaxActiveClusters."""
    from ..advisor.engine.clusters import cluster_occupancy
    from ..advisor.engine.occupancy import occupancy
    from .driver import engine_kernel

    gpcs = record["gpc_sizes"]
    total, mismatches = 0, []
    for shape in record["shapes"]:
        kernel = engine_kernel(shape, shape["block_size"], shape["dynamic_shared_mem"], opt_in=True)
        blocks = occupancy(arch, kernel).active_blocks_per_sm if arch is not None else shape["driver_blocks_per_sm"]
        for size, answer in shape["max_active_clusters"].items():
            model = cluster_occupancy(arch, gpcs, blocks, int(size)).clusters
            total += 1
            if model != answer["clusters"]:
                mismatches.append({"block_size": shape["block_size"], "dynamic_shared_mem": shape["dynamic_shared_mem"],
                                   "cluster_size": int(size), "model": model, "driver": answer["clusters"],
                                   "blocks_per_sm": blocks})
    return {"total": total, "matches": total - len(mismatches), "mismatches": mismatches}


def recompute_document(recorded: dict, catalog) -> dict:
    """The probe document today's code makes from a recorded run's raw output.

    `recorded` needs only what the device gave: its attributes, the SM clock,
    each probe's samples and details (for the occupancy probe, the inputs,
    the driver's answers and the measured residency). The product, the peaks,
    the efficiencies, the flags and the engine's predictions are all computed
    here, so a test of the result tests today's code against the GPU."""
    device = recorded["device"]
    attributes = device["attributes"]
    product = match_product(catalog, device["compute_capability"], attributes["sm_count"], device["name"])
    measurements = [Measurement.from_dict({**r, "peak": None, "peak_basis": None}) for r in recorded["results"]]
    apply_peaks(measurements, product, attributes["sm_count"], attributes["warp_size"], recorded.get("sm_clock_mhz"))
    arch = catalog.archs.get(device["compute_capability"])
    for m in measurements:
        if m.name == "occupancy_empirical" and arch is not None and not m.error:
            configs = [judge_residency(arch, c) for c in m.details["configs"]]
            m.details = {**m.details, "configs": configs, "total": len(configs)}
            m.samples = [sum(c["match"] for c in configs)]
        if m.name == "cluster_occupancy" and not m.error:
            judged = judge_clusters(arch, m.details)
            m.details = {**m.details, "total": judged["total"], "mismatches": judged["mismatches"]}
            m.samples = [judged["matches"]]
    return device_document(device, product, recorded.get("sm_clock_mhz"), measurements, recorded.get("quick", False))
