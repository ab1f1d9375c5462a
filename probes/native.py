"""The local device as a spec: what the driver reports, plus what it cannot
report (allocation granularities, carveout sizes) from the shipped spec of the
same compute capability, each value with its source. Saved by
`probe --save FILE`, read back with `--spec-file FILE`; the same document
serves `--arch native`."""

from __future__ import annotations

# spec field -> device attribute it is read from
FROM_DEVICE = {
    "warp_size": "warp_size",
    "max_threads_per_block": "max_threads_per_block",
    "max_blocks_per_sm": "max_blocks_per_sm",
    "registers_per_sm": "registers_per_sm",
    "registers_per_block": "registers_per_block",
    "shared_mem_per_sm": "shared_mem_per_sm",
    "shared_mem_per_block": "shared_mem_per_block",
    "shared_mem_per_block_optin": "shared_mem_per_block_optin",
    "reserved_shared_mem_per_block": "reserved_shared_mem_per_block",
}
FROM_SHIPPED = (
    "max_registers_per_thread", "register_allocation_unit", "warp_allocation_granularity",
    "register_launch_check_granularity", "shared_mem_allocation_unit", "l1_shared_total",
    "barriers_per_block_slot", "max_cluster_size_portable", "max_cluster_size_nonportable",
    # How cuda_occupancy.h treats the compute capability: no device attribute reports it.
    "header_max_registers_per_thread", "shared_mem_opt_in", "reserved_shared_mem_in_block_limit",
    "virtual_resources_per_sm",
    # Whether shared memory and L1 are one array: no device attribute reports it either.
    "shared_l1_unified",
)
LAYOUT_HOW = "probe cluster: SMs that shared a launched cluster"  # how a measured GPC layout was found
MEASURED = {"memory_bandwidth_gbs": "dram_copy", "fp32_tflops": "fp32_fma", "fp64_tflops": "fp64_fma", "fp16_tflops": "fp16x2_fma"}


def native_document(device: dict, shipped_arch, measurements: dict | None = None, product=None,
                    measured_extras: dict | None = None) -> dict:
    """device: DeviceInfo.as_dict(); measurements: probe name -> median value;
    measured_extras: product fields measured beyond medians (see `extras_from_results`)."""
    attrs = device["attributes"]
    cc = device["compute_capability"]
    arch = {"cc": cc, "names": ["native"]}
    for spec_field, attribute in FROM_DEVICE.items():
        arch[spec_field] = {"value": attrs[attribute], "source": f"driver#{attribute} of {device['name']}"}
    arch["max_warps_per_sm"] = {"value": attrs["max_threads_per_sm"] // attrs["warp_size"],
                                "source": f"driver#max_threads_per_sm / warp_size of {device['name']}"}
    if shipped_arch is not None:
        for spec_field in FROM_SHIPPED:
            value = getattr(shipped_arch, spec_field)
            if value is not None:
                arch[spec_field] = {"value": value, "source": shipped_arch.sources.get(spec_field, "user")}
        arch["shared_mem_model"] = shipped_arch.shared_mem_model
        if shipped_arch.shared_mem_configs:
            arch["shared_mem_configs"] = {"value": list(shipped_arch.shared_mem_configs),
                                          "source": shipped_arch.sources.get("shared_mem_configs", "user")}
    doc = {"family": "native", "arch": [arch]}
    product_entry = _product_entry(device, measurements or {}, product)
    if product_entry:
        for spec_field, (value, how) in (measured_extras or {}).items():
            product_entry[spec_field] = {"value": value, "source": f"measured#{how}"}
    if product_entry:
        doc["product"] = [product_entry]
    return doc


def _product_entry(device: dict, measurements: dict, product) -> dict | None:
    attrs = device["attributes"]
    entry = {
        "name": "native",
        "title": f"{device['name']} (measured)" if measurements else device["name"],
        "cc": device["compute_capability"],
        "sm_count": {"value": attrs["sm_count"], "source": "driver#sm_count"},
        "boost_clock_mhz": {"value": max(1, attrs["clock_rate_khz"] // 1000), "source": "driver#clock_rate_khz"},
    }
    for spec_field, probe in MEASURED.items():
        if measurements.get(probe):
            entry[spec_field] = {"value": round(measurements[probe], 3), "source": f"measured#probe {probe}"}
        elif product is not None and product.get(spec_field):
            entry[spec_field] = {"value": product.get(spec_field), "source": product.sources.get(spec_field, "user")}
    if "memory_bandwidth_gbs" not in entry or "fp32_tflops" not in entry:
        return None  # a product entry needs both; without them the arch alone is saved
    return entry


def saved_spec(doc: dict, catalog) -> dict:
    """The spec `probe --save` writes from one device's probe document: the driver's limits, the
    shipped architecture and product it was matched to, the medians of the probes that measure a
    peak (no occupancy figure, none above the spec's peak) and the measured extras."""
    medians = {r["name"]: r["value"] for r in doc["results"] if r["value"] is not None and not r["above_peak"]
               and r["group"] != "occupancy"}
    product = catalog.products.get(doc["product"]) if doc["product"] else None
    return native_document(doc["device"], catalog.archs.get(doc["device"]["compute_capability"]), medians, product,
                           extras_from_results(doc["results"]))


def extras_from_results(results: list[dict]) -> dict:
    """Product fields from a probe document's results: the GPC layout (cluster probe),
    the DRAM latency in ns and the bandwidth-vs-occupancy curve; (value, how) each.
    Failed or unstable figures are left out."""
    usable = {r["name"]: r for r in results if not r["error"] and not r.get("unstable")}
    extras = {}
    if "cluster_occupancy" in usable:
        extras["gpc_sms"] = (list(usable["cluster_occupancy"]["details"]["gpc_sizes"]), LAYOUT_HOW)
    latency = usable.get("latency_dram", {}).get("details", {}).get("ns")
    if latency:
        extras["dram_latency_ns"] = (round(latency, 1), "probe latency_dram (cold pointer chase)")
    curve = usable.get("dram_read_vs_occupancy", {}).get("details", {}).get("curve")
    if curve:
        points = [[p["warps_per_sm"], p["bytes_in_flight_per_sm"] // (32 * p["warps_per_sm"]), round(p["gbs"], 1)]
                  for p in curve if p["ilp"] != "once"]
        extras["read_bandwidth_curve"] = (points, "probe dram_read_vs_occupancy")
    return extras


def to_toml(doc: dict) -> str:
    """The small TOML subset spec files use: scalars, lists, inline tables, arrays of tables."""
    lines = [f"family = {_scalar(doc['family'])}", ""]
    for table in ("arch", "product"):
        for entry in doc.get(table, []):
            lines.append(f"[[{table}]]")
            lines.extend(f"{key} = {_scalar(value)}" for key, value in entry.items())
            lines.append("")
    return "\n".join(lines)


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_scalar(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def native_catalog(device: dict, measured_extras: dict | None = None):
    """The shipped catalog plus this device as architecture and product 'native': the driver's
    limits; the product's figures from the shipped product it is (same compute capability and SM
    count, its name in the device's), with their sources; `measured_extras` (a GPC layout measured
    for clusters) over them. A device that matches no product has no product entry."""
    from ..specs.catalog import catalog_with, shipped_catalog
    from .results import match_product

    shipped = shipped_catalog()
    cc = device["compute_capability"]
    product = match_product(shipped, cc, device["attributes"]["sm_count"], device["name"])
    doc = native_document(device, shipped.archs.get(cc), None, product, measured_extras)
    return catalog_with(doc, origin=f"driver ({device['name']})")[0]


def native_resolved(what: str = "--arch native", clusters: bool = False):
    """The local GPU as a Resolved spec: the limits its driver reports (GpuUnavailable without
    one); with `clusters`, its GPC layout measured (a harvested chip's differs from the
    product's nominal one). The `native` hook of specs/resolve.py."""
    from .gpu import device_info, load_cupy

    cupy = load_cupy(what)
    info = device_info(cupy, cupy.cuda.runtime.getDevice())
    extras = None
    if clusters:
        from .clusters import device_layout

        layout = device_layout(cupy, info)
        extras = {"gpc_sms": (layout, LAYOUT_HOW)} if layout else None
    return native_catalog(info.as_dict(), extras).resolve("native")
