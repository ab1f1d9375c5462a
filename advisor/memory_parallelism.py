"""Is this occupancy enough to feed device memory? Little's law with numbers.

To sustain bandwidth BW against latency L, a GPU needs BW x L bytes in flight;
a kernel supplies warps/SM x 32 x (bytes each thread has in flight) x SMs.
With a measured bandwidth-vs-occupancy curve (`probe` records one; `probe
--save` keeps it in the spec as the product's `read_bandwidth_curve`), the
answer is read from the curve and labelled measured; without one, Little's
law over the product's bandwidth and DRAM latency gives it, labelled as a model.
"""

from __future__ import annotations

import math

TARGET = 0.9  # "enough": 90% of the best bandwidth


def model_fraction(warps_per_sm: float, bytes_per_thread: float, sm_count: int, latency_ns: float,
                   bandwidth_gbs: float, warp_size: int = 32) -> float:
    """Little's law: bytes in flight over bytes needed in flight, at most 1."""
    needed = bandwidth_gbs * latency_ns  # GB/s x ns = bytes
    return min(1.0, warps_per_sm * warp_size * bytes_per_thread * sm_count / needed)


def model_warps_for(fraction: float, bytes_per_thread: float, sm_count: int, latency_ns: float,
                    bandwidth_gbs: float, warp_size: int = 32) -> int:
    return math.ceil(fraction * bandwidth_gbs * latency_ns / (warp_size * bytes_per_thread * sm_count))


def _interpolate(points: list[tuple[float, float]], x: float) -> float:
    points = sorted(points)
    if x <= points[0][0]:
        return points[0][1] * x / points[0][0]  # through the origin below the first point
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def curve_answer(curve, warps_per_sm: float, bytes_per_thread: float) -> dict:
    """From measured (warps_per_sm, bytes_per_thread, GB/s) points: the bandwidth at this
    configuration (the curve with the most bytes per thread not above the given), its
    fraction of the best measured, and the fewest warps (same bytes) or bytes (same
    warps) that reach TARGET of the best."""
    best = max(p[2] for p in curve)
    widths = sorted({p[1] for p in curve})
    width = max([w for w in widths if w <= bytes_per_thread] or [widths[0]])
    line = [(p[0], p[2]) for p in curve if p[1] == width]
    gbs = _interpolate(line, warps_per_sm)
    enough_warps = next((w for w, g in sorted(line) if g >= TARGET * best), None)
    enough_width = next((w for w in widths if _interpolate([(p[0], p[2]) for p in curve if p[1] == w], warps_per_sm)
                         >= TARGET * best), None)
    return {"basis": "measured", "gbs": gbs, "fraction": gbs / best, "best_gbs": best, "curve_bytes_per_thread": width,
            "warps_for_target": enough_warps, "bytes_per_thread_for_target": enough_width, "target": TARGET}


def advice(product, warps_per_sm: float, bytes_per_thread: float) -> dict | None:
    """The measured answer where the product carries a curve, else the model where it
    carries a DRAM latency; None where it has neither."""
    if product is None:
        return None
    curve = product.get("read_bandwidth_curve")
    if curve:
        return {**curve_answer(curve, warps_per_sm, bytes_per_thread), "source": product.sources.get("read_bandwidth_curve")}
    latency, bandwidth, sms = product.get("dram_latency_ns"), product.get("memory_bandwidth_gbs"), product.get("sm_count")
    if not (latency and bandwidth and sms):
        return None
    fraction = model_fraction(warps_per_sm, bytes_per_thread, sms, latency, bandwidth)
    return {"basis": "model (Little's law over the spec's bandwidth and DRAM latency)", "gbs": fraction * bandwidth,
            "fraction": fraction, "best_gbs": bandwidth, "target": TARGET,
            "warps_for_target": model_warps_for(TARGET, bytes_per_thread, sms, latency, bandwidth),
            "bytes_per_thread_for_target": math.ceil(TARGET * bandwidth * latency / (warps_per_sm * 32 * sms)),
            "source": f"{product.sources.get('memory_bandwidth_gbs')}; {product.sources.get('dram_latency_ns')}"}


def sentence(answer: dict, warps_per_sm: float, bytes_per_thread: float) -> str:
    head = (f"At {warps_per_sm:g} warps/SM with {bytes_per_thread:g} B in flight per thread this GPU reaches "
            f"{answer['fraction']:.0%} of its DRAM bandwidth ({answer['gbs']:,.0f} of {answer['best_gbs']:,.0f} GB/s, "
            f"{answer['basis']})")
    ways = []
    if answer["warps_for_target"]:
        ways.append(f"{answer['warps_for_target']:g} warps/SM")
    if answer["bytes_per_thread_for_target"]:
        ways.append(f"{answer['bytes_per_thread_for_target']:g} B in flight per thread")
    return head + (f"; {' or '.join(ways)} reach {answer['target']:.0%}." if ways else ".")
