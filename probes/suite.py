"""The probe suite: each probe runs its kernels on one device and returns
Measurements. A probe that fails (out of memory, a compile error) becomes a
Measurement with `error` set; the others still run.

Sizes come from the device: streaming arrays far larger than L2, L2 working
sets inside it, and never more than MEMORY_SHARE of the free device memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .gpu import DeviceInfo, load_module, time_launches
from .results import Measurement

MEMORY_SHARE = 0.4  # the most of the free device memory any probe allocates
MiB = 1 << 20


@dataclass
class ProbeContext:
    cupy: object
    device: DeviceInfo
    quick: bool = False
    tiny: bool = False  # smallest sizes, for running under compute-sanitizer
    observed_clock_mhz: float | None = None  # SM clock seen during an FMA run
    _modules: dict = field(default_factory=dict)

    @property
    def repeats(self) -> int:
        return 1 if self.tiny else 5 if self.quick else 20

    def module(self, name: str, options: tuple = ()):
        key = (name, options)
        if key not in self._modules:
            self._modules[key] = load_module(self.cupy, name, options)
        return self._modules[key]

    def clock_mhz(self) -> float | None:
        """SM clock observed during an FP32 FMA run (measured once, then reused)."""
        if self.observed_clock_mhz is None:
            launch, clock = _fma_launcher(self, "fp32_fma")
            launch(2000)
            self.observed_clock_mhz = clock()
        return self.observed_clock_mhz

    def memory_budget(self) -> int:
        free, _ = self.cupy.cuda.runtime.memGetInfo()
        return int(free * MEMORY_SHARE)

    def full_wave(self, block: int) -> int:
        """Blocks of `block` threads that fill every SM's thread slots once."""
        return self.device.sm_count * max(1, self.device.attributes["max_threads_per_sm"] // block)


# -- device memory ---------------------------------------------------------------

STREAM_UNROLL = 4  # as in bandwidth.cu
STREAM_KERNELS = {  # name -> (arrays read, arrays written)
    "read": (1, 0),
    "write": (0, 1),
    "copy": (1, 1),
    "triad": (2, 1),
}


BABELSTREAM_ELEMENTS = 1 << 28  # doubles per array: the size BabelStream users quote (its default is 2^25)
# Shapes tried for copy and triad: kernel suffix -> (doubles per thread per
# pass, how it covers the array). The fastest in a short trial is the one
# measured, and the result names it.
STREAM_SHAPES = {
    "": (2 * STREAM_UNROLL, "grid-stride loop, double2, 4 in flight"),
    "_d": (1, "one double per thread"),
    "_g": (STREAM_UNROLL, "grid-stride loop over doubles, 4 per thread (BabelStream's shape)"),
    "_v2": (2, "one double2 per thread"),
    "_v4": (4, "two double2 per thread"),
    "_cs": (2, "one double2 per thread, streaming loads and stores (evict first)"),
}
DOUBLE_ELEMENT_SHAPES = ("_d", "_g")  # the kernels whose `n` counts doubles (the others count double2)
SHAPE_BLOCKS = (256, 1024)


def stream_elements(ctx: ProbeContext) -> int:
    """Doubles per array: BabelStream's 2^28 where three arrays fit the budget,
    else the largest power of two that does."""
    if ctx.tiny:
        return 1 << 20
    fits = ctx.memory_budget() // (3 * 8)
    return min(BABELSTREAM_ELEMENTS, 1 << (fits.bit_length() - 1))


def _stream_candidates(ctx: ProbeContext, name: str, doubles: int) -> list[tuple[str, int, int, int]]:
    """(kernel suffix, block, grid, elements of the kernel's type) for one stream kernel."""
    pairs = doubles // 2
    loop = [("", 256, g, pairs) for g in sorted({ctx.full_wave(256), 4 * ctx.full_wave(256),
                                                  max(1, -(-pairs // (STREAM_UNROLL * 256)))})]
    if name not in ("copy", "triad"):
        return loop
    one_pass = []
    for suffix, (per_thread, _) in STREAM_SHAPES.items():
        if suffix:
            elements = doubles if suffix in DOUBLE_ELEMENT_SHAPES else pairs
            for block in SHAPE_BLOCKS:
                threads = -(-doubles // per_thread)
                one_pass.append((suffix, block, -(-threads // block), elements))
    return loop + one_pass


def dram_bandwidth(ctx: ProbeContext, doubles: int | None = None) -> list[Measurement]:
    cp = ctx.cupy
    doubles = (doubles or stream_elements(ctx)) // 4 * 4
    per_array = doubles * 8
    a = cp.full(doubles, 1.0, dtype=cp.float64)
    b = cp.full(doubles, 2.0, dtype=cp.float64)
    c = cp.zeros(doubles, dtype=cp.float64)
    sink = cp.zeros(max(ctx.full_wave(256) * 4, -(-doubles // (2 * STREAM_UNROLL * 256))), dtype=cp.float64)
    module = ctx.module("bandwidth")
    scalar = cp.float64(0.4)
    results = []
    for name, (reads, writes) in STREAM_KERNELS.items():
        moved = (reads + writes) * per_array

        def launcher(suffix, block, grid, elements, name=name):
            kernel = module.get_function(f"stream_{name}{suffix}")
            size = cp.uint64(elements)
            args = {"read": (a, size, sink), "write": (c, size, scalar), "copy": (a, c, size),
                    "triad": (a, b, c, size, scalar)}[name]
            return lambda: kernel((grid,), (block,), args)

        candidates = _stream_candidates(ctx, name, doubles)
        trials = {cand: min(time_launches(cp, launcher(*cand), 1 if ctx.tiny else 3, warmup=1)) for cand in candidates}
        best = min(trials, key=trials.get)
        suffix, block, grid, _ = best
        seconds = time_launches(cp, launcher(*best), ctx.repeats, warmup=3)
        results.append(Measurement(
            name=f"dram_{name}", group="memory", unit="GB/s",
            samples=[moved / s / 1e9 for s in seconds],
            method=f"{name} over {per_array // MiB} MiB arrays ({doubles:,} doubles), bytes read + written "
                   f"(BabelStream's count), CUDA events; fastest shape: {STREAM_SHAPES[suffix][1]}",
            details={"array_bytes": per_array, "elements": doubles, "bytes_moved": moved, "grid": grid,
                     "block": block, "shape": f"stream_{name}{suffix}",
                     "shapes_tried": {f"stream_{name}{s}/{bl}x{g}": round(moved / t / 1e9, 1)
                                      for (s, bl, g, _), t in trials.items()}},
        ))
    return results


CURVE_WARPS = (2, 4, 8, 16, 24, 32, 48, 64)  # resident warps per SM (64 = 100% on 9.0)
CURVE_ILP = (1, 2, 4)  # independent 8-byte loads in flight per thread
ONE_PASS = "once"  # gpu-stream's shape: one double per thread, blocks retire and are replaced


def _dynamic_for(cupy, kernel, block: int, per_sm: int, optin: int) -> int | None:
    """Least dynamic shared memory that leaves at most `per_sm` blocks per SM
    (the driver's answer), as gpu-benches' gpu-stream limits occupancy."""
    from . import driver

    if driver.active_blocks(cupy, kernel, block, 0) <= per_sm:
        return 0
    low, high = 0, optin  # active(low) > per_sm, search the least dynamic with active <= per_sm
    if driver.active_blocks(cupy, kernel, block, high) > per_sm:
        return None
    while high - low > 256:
        middle = (low + high) // 2
        if driver.active_blocks(cupy, kernel, block, middle) <= per_sm:
            high = middle
        else:
            low = middle
    return high if driver.active_blocks(cupy, kernel, block, high) == per_sm else None


def bandwidth_vs_occupancy(ctx: ProbeContext) -> list[Measurement]:
    """DRAM read bandwidth against resident warps per SM and loads in flight
    per thread: one wave of blocks, residency capped with dynamic shared memory."""
    from . import driver

    cp = ctx.cupy
    max_warps = ctx.device.attributes["max_threads_per_sm"] // ctx.device.attributes["warp_size"]
    optin = ctx.device.attributes["shared_mem_per_block_optin"]
    doubles = (1 << 20) if ctx.tiny else min(1 << 27, stream_elements(ctx))
    a = cp.full(doubles, 1.0, dtype=cp.float64)
    sink = cp.zeros(ctx.full_wave(32), dtype=cp.float64)
    module = ctx.module("bandwidth")
    curve = []
    warps_list = [w for w in CURVE_WARPS if w <= max_warps] if not ctx.tiny else [4]
    for ilp in (*CURVE_ILP, ONE_PASS):
        kernel = module.get_function(f"occ_read_ilp{ilp}" if ilp != ONE_PASS else "occ_read_once")
        driver.set_launch_attributes(kernel, optin, -1)
        for warps in warps_list:
            per_sm = 1 if warps <= 2 else 2
            block = warps * 32 // per_sm
            dynamic = _dynamic_for(cp, kernel, block, per_sm, optin)
            if dynamic is None:
                continue
            grid = per_sm * ctx.device.sm_count if ilp != ONE_PASS else -(-doubles // block)
            seconds = time_launches(cp, lambda k=kernel, g=grid, b=block, d=dynamic: k(
                (g,), (b,), (a, cp.uint64(doubles), sink), shared_mem=d), 1 if ctx.tiny else 3, warmup=1)
            curve.append({"ilp": ilp, "warps_per_sm": warps, "occupancy": warps / max_warps, "block": block,
                          "blocks_per_sm": per_sm, "dynamic_shared_mem": dynamic,
                          "bytes_in_flight_per_sm": warps * 32 * 8 * (1 if ilp == ONE_PASS else ilp),
                          "gbs": doubles * 8 / min(seconds) / 1e9})
    best = max(p["gbs"] for p in curve if p["ilp"] != ONE_PASS)
    return [Measurement(
        name="dram_read_vs_occupancy", group="memory", unit="GB/s", samples=[best],
        method=f"read of {doubles * 8 // MiB} MiB, one wave, warps per SM capped with dynamic shared memory, "
               f"ILP {'/'.join(map(str, CURVE_ILP))} loads of 8 B in flight per thread (and gpu-stream's one double "
               "per thread, ilp 'once'); value: the looping curve's best",
        details={"curve": curve, "elements": doubles},
    )]


L2_CHUNK_VECTORS = 32 * 1024  # float4 per chunk: 512 KiB, gpu-l2-cache's block data volume


def l2_bandwidth(ctx: ProbeContext) -> list[Measurement]:
    """Two shapes, the faster one reported: every SM sweeping the whole working
    set (grid-stride), and gpu-l2-cache's (each block re-reads one 512 KiB chunk)."""
    cp = ctx.cupy
    l2 = ctx.device.attributes["l2_bytes"]
    working_set = (MiB if ctx.tiny else l2 // 4)  # well inside L2, also inside one partition of a split L2
    n = working_set // 16
    data = cp.ones(4 * n, dtype=cp.float32)
    passes = 1 if ctx.tiny else 200  # the same in --quick: short launches read low (clock ramp, launch cost)
    module = ctx.module("bandwidth")
    sweep, chunked = module.get_function("l2_read"), module.get_function("l2_read_chunks")
    chunks = max(1, n // L2_CHUNK_VECTORS)
    chunk_grid = chunks * (1 if ctx.tiny else max(1, 200 * ctx.full_wave(1024) // chunks))
    sink = cp.zeros(max(ctx.full_wave(256), chunk_grid), dtype=cp.float32)
    shapes = {
        "grid-stride sweep": (lambda: sweep((ctx.full_wave(256),), (256,), (data, cp.uint64(n), cp.int32(passes), sink)),
                              n * 16 * passes),
        "512 KiB chunk per block": (lambda: chunked((chunk_grid,), (1024,), (data, cp.uint32(L2_CHUNK_VECTORS),
                                                                            cp.uint32(chunks), sink)),
                                    chunk_grid * L2_CHUNK_VECTORS * 16),
    }
    trials = {name: moved / min(time_launches(cp, launch, 1 if ctx.tiny else 3, warmup=1))
              for name, (launch, moved) in shapes.items()}
    shape = max(trials, key=trials.get)
    launch, moved = shapes[shape]
    seconds = time_launches(cp, launch, ctx.repeats, warmup=3)
    return [Measurement(
        name="l2_read", group="memory", unit="GB/s", samples=[moved / s / 1e9 for s in seconds],
        method=f"ld.global.cg re-reads of a {working_set // MiB} MiB working set, CUDA events; fastest shape: {shape}",
        details={"working_set_bytes": working_set, "passes": passes, "shape": shape,
                 "shapes_tried": {k: round(v / 1e9, 1) for k, v in trials.items()}},
    )]


def shared_bandwidth(ctx: ProbeContext) -> list[Measurement]:
    cp = ctx.cupy
    block = 1024
    blocks = ctx.device.sm_count * 2
    iterations = 10 if ctx.tiny else 8000
    kernel = ctx.module("bandwidth").get_function("shared_read")
    sink = cp.zeros(blocks, dtype=cp.float32)
    seconds = time_launches(cp, lambda: kernel((blocks,), (block,), (cp.int32(iterations), sink)), ctx.repeats)
    moved = blocks * block * iterations * 16 * 16  # 16 loads of 16 bytes per iteration
    return [Measurement(
        name="shared_read", group="memory", unit="GB/s", samples=[moved / s / 1e9 for s in seconds],
        method="conflict-free 16-byte shared loads, 2 blocks of 1024 threads per SM, CUDA events",
        details={"blocks": blocks, "iterations": iterations},
    )]


# -- arithmetic ------------------------------------------------------------------

FMA_KERNELS = {  # probe name -> (kernel, FLOPs per FMA instruction, its x and y as the kernel's types)
    "fp32_fma": ("fma_fp32", 2, lambda cp: (cp.float32(0.999), cp.float32(0.001))),
    "fp64_fma": ("fma_fp64", 2, lambda cp: (cp.float64(0.999), cp.float64(0.001))),
    "fp16x2_fma": ("fma_fp16x2", 4, lambda cp: (cp.uint32(0x3BFF3BFF), cp.uint32(0x14001400))),
}
CHAINS, UNROLL = 8, 16  # as in compute.cu
FMA_BLOCK = 256


def _fma_launcher(ctx: ProbeContext, probe: str):
    """(launch(iterations), clock()) for an FMA kernel over one full wave;
    clock() is the SM clock in MHz that block 0 saw during the last launch."""
    cp = ctx.cupy
    kernel_name, _, arguments = FMA_KERNELS[probe]
    kernel = ctx.module("compute").get_function(kernel_name)
    grid = ctx.full_wave(FMA_BLOCK)
    sink = cp.zeros(grid, dtype=cp.float64)
    cycles_and_ns = cp.zeros(2, dtype=cp.uint64)
    x, y = arguments(cp)

    def launch(iterations: int) -> None:
        kernel((grid,), (FMA_BLOCK,), (cp.int32(iterations), x, y, sink, cycles_and_ns))

    def clock() -> float | None:
        cycles, ns = (int(v) for v in cycles_and_ns.get())
        return cycles / ns * 1e3 if ns else None

    return launch, clock


def _calibrate(cp, launch, first: int, target_s: float) -> int:
    """Iterations that make one launch take about target_s."""
    (elapsed,) = time_launches(cp, lambda: launch(first), 1, warmup=1)
    return max(first, int(first * target_s / max(elapsed, 1e-6)))


def arithmetic(ctx: ProbeContext) -> list[Measurement]:
    cp = ctx.cupy
    grid = ctx.full_wave(FMA_BLOCK)
    results = []
    for name, (_, flops_per_fma, _) in FMA_KERNELS.items():
        launch, clock = _fma_launcher(ctx, name)
        iterations = 16 if ctx.tiny else _calibrate(cp, launch, 16, 0.02)
        seconds = time_launches(cp, lambda launch=launch, iterations=iterations: launch(iterations), ctx.repeats, warmup=1)
        clock_mhz = clock()  # block 0's view of the last timed launch
        flops = grid * FMA_BLOCK * iterations * UNROLL * CHAINS * flops_per_fma
        results.append(Measurement(
            name=name, group="compute", unit="TFLOP/s", samples=[flops / s / 1e12 for s in seconds],
            method=f"{CHAINS} independent FMA chains per thread, one full wave, CUDA events",
            details={"iterations": iterations, "sm_clock_mhz": clock_mhz},
        ))
    clocks = [m.details["sm_clock_mhz"] for m in results if m.details.get("sm_clock_mhz")]
    if clocks:
        ctx.observed_clock_mhz = max(clocks)
    return results


# -- latency ---------------------------------------------------------------------

def _random_cycle(entries: int, seed: int):
    """next[i] for one random cycle through all entries, so a chase from any
    start visits every entry before repeating (no short loops)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    perm = rng.permutation(entries)
    nxt = np.empty(entries, dtype=np.int64)
    nxt[perm[:-1]] = perm[1:]
    nxt[perm[-1]] = perm[0]
    return nxt


def _chase_table(cp, entries: int, stride: int, seed: int):
    """A single random cycle through `entries` slots `stride` words apart, as a
    device array where each slot holds the index of the next. The table is made
    on the device: only the cycle (one number per slot) passes through host
    memory, never the table itself (for the DRAM level, 32 x L2: gigabytes)."""
    import numpy as np

    nxt = _random_cycle(entries, seed)
    nxt *= stride
    table = cp.zeros(entries * stride, dtype=cp.uint32)
    table[::stride] = cp.asarray(nxt.astype(np.uint32))
    return table


def latency(ctx: ProbeContext) -> list[Measurement]:
    cp = ctx.cupy
    clock_mhz = ctx.clock_mhz()
    module = ctx.module("latency")
    out = cp.zeros(2, dtype=cp.uint64)
    steps = 100 if ctx.tiny else 2000 if ctx.quick else 10000
    repeats = 1 if ctx.tiny else 3 if ctx.quick else 7
    l2 = ctx.device.attributes["l2_bytes"]
    line_words = 32  # one 128-byte line per slot
    levels = [  # name, slots, cached loads, warm pass
        ("l1", 16 * 1024 // 128, 1, True),
        ("l2", (l2 // 8) // 128, 0, True),
        ("dram", (4 * MiB if ctx.tiny else min(32 * l2, ctx.memory_budget() // 2)) // 128, 0, False),
    ]
    results = []
    shared_table = cp.asarray(_random_cycle(4096, 1).astype("uint32"))
    samples = []
    for _ in range(repeats):
        module.get_function("chase_shared")((1,), (256,), (shared_table, cp.int32(steps), out))
        samples.append(int(out[0].get()) / steps)
    results.append(_latency_measurement("shared", samples, clock_mhz, "4,096-entry random cycle in shared memory"))
    for name, slots, cached, warm in levels:
        table = _chase_table(cp, slots, line_words, seed=len(name))
        warm_steps = slots if warm else 0
        samples = []
        for r in range(repeats):
            start = (r * 7919 % slots) * line_words
            module.get_function("chase_global")((1,), (1,), (table, cp.uint32(start), cp.int32(warm_steps),
                                                             cp.int32(steps), cp.int32(cached), out))
            samples.append(int(out[0].get()) / steps)
        load = "ld.global.ca" if cached else "ld.global.cg"
        results.append(_latency_measurement(
            name, samples, clock_mhz,
            f"random cycle over {slots * 128 // 1024:,} KiB, one 128-byte line per step, {load}"
            + ("" if warm else ", cold (TLB misses included)")))
        del table
    return results


def _latency_measurement(level: str, cycles: list[float], clock_mhz: float | None, how: str) -> Measurement:
    m = Measurement(name=f"latency_{level}", group="latency", unit="cycles", samples=cycles, higher_is_better=False,
                    method=f"one-thread pointer chase timed with clock64(): {how}")
    m.details["ns"] = m.value / clock_mhz * 1e3 if clock_mhz else None
    return m


# -- launch overhead -------------------------------------------------------------

def launch_overhead(ctx: ProbeContext) -> list[Measurement]:
    cp = ctx.cupy
    kernel = ctx.module("residency").get_function("empty_kernel")
    batch = 10 if ctx.tiny else 1000  # the same in --quick: a smaller batch reads differently

    def many():
        for _ in range(batch):
            kernel((1,), (32,), ())

    per_launch = [s / batch * 1e6 for s in time_launches(cp, many, 5 if ctx.quick else 10, warmup=1)]
    round_trips = []
    stream = cp.cuda.get_current_stream()
    for _ in range(5 if ctx.tiny else 50 if ctx.quick else 200):
        t0 = time.perf_counter()
        kernel((1,), (32,), ())
        stream.synchronize()
        round_trips.append((time.perf_counter() - t0) * 1e6)
    return [
        Measurement(name="launch_graph", group="launch", unit="us", samples=_graph_launches(ctx, kernel, batch),
                    higher_is_better=False,
                    method=f"GPU-side: {batch} back-to-back empty kernels captured in one CUDA graph, graph launch "
                           "between CUDA events, per kernel (no host call cost)"),
        Measurement(name="launch_async", group="launch", unit="us", samples=per_launch, higher_is_better=False,
                    method=f"host-call: {batch} back-to-back empty launches between CUDA events "
                           "(CuPy's Python launch path included)"),
        Measurement(name="launch_sync", group="launch", unit="us", samples=round_trips, higher_is_better=False,
                    method="host-call: launch of an empty kernel plus stream synchronize, host clock"),
    ]


def _graph_launches(ctx: ProbeContext, kernel, batch: int) -> list[float]:
    """Microseconds per kernel when `batch` empty launches replay from one CUDA
    graph: the GPU's own launch-to-launch cost, without any host call per kernel."""
    cp = ctx.cupy
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for _ in range(batch):
            kernel((1,), (32,), ())
        graph = stream.end_capture()
        if hasattr(graph, "upload"):
            graph.upload(stream)
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        samples = []
        for repeat in range(2 + (5 if ctx.quick or ctx.tiny else 10)):
            start.record(stream)
            graph.launch(stream)
            stop.record(stream)
            stop.synchronize()
            if repeat >= 2:  # the first two replays warm up
                samples.append(cp.cuda.get_elapsed_time(start, stop) * 1e3 / batch)
    return samples


# -- occupancy, empirically ----------------------------------------------------------

REGISTER_VARIANTS = ((), ("--maxrregcount=64",), ("--maxrregcount=32",))
HOLD_NS = 200_000  # long enough that every block of a wave is resident at once


def residency_configs(quick: bool, opt_in_max: int) -> list[tuple]:
    """(nvrtc options, block size, dynamic shared memory, carveout) to try."""
    blocks = (128, 512) if quick else (64, 128, 256, 512, 768, 1024)
    dynamics = (0, 40 * 1024) if quick else (0, 16 * 1024, 40 * 1024, 100 * 1024)
    variants = REGISTER_VARIANTS[:2] if quick else REGISTER_VARIANTS
    configs = [(v, b, d, -1) for v in variants for b in blocks for d in dynamics if d <= opt_in_max]
    if not quick:  # carveout preferences change the shared-memory split, so the answer
        configs += [((), 256, 16 * 1024, c) for c in (0, 25, 50)]
    return configs


def empirical_occupancy(ctx: ProbeContext) -> list[Measurement]:
    from ..advisor.engine.occupancy import occupancy
    from ..specs.catalog import shipped_catalog
    from . import driver
    from .residency import max_resident_per_sm, summarize

    cp = ctx.cupy
    arch = shipped_catalog().archs.get(ctx.device.cc)
    if arch is None:
        raise RuntimeError(f"no spec for compute capability {ctx.device.cc}")
    sms = ctx.device.sm_count
    seed = cp.ones(256, dtype=cp.float32)
    rows = []
    configs = residency_configs(ctx.quick or ctx.tiny, arch.shared_mem_per_block_optin)
    for options, block, dynamic, carveout in configs[:2] if ctx.tiny else configs:
        kernel = ctx.module("residency", options).get_function("resident")
        attrs = driver.kernel_attributes(kernel)
        # Always opted in to the maximum, so the engine is told opt_in=True.
        driver.set_launch_attributes(kernel, arch.shared_mem_per_block_optin - attrs["static_shared_mem"], carveout)
        predicted = occupancy(arch, driver.engine_kernel(attrs, block, dynamic, carveout, opt_in=True))
        row = {"registers": attrs["registers"], "block_size": block, "dynamic_shared_mem": dynamic,
               "carveout": carveout, "engine": predicted.active_blocks_per_sm,
               "driver": driver.active_blocks(cp, kernel, block, dynamic)}
        if predicted.launchable and predicted.active_blocks_per_sm:
            grid = max(2 * predicted.active_blocks_per_sm * sms, 2 * sms)
            records = cp.zeros(3 * grid, dtype=cp.uint64)
            sink = cp.zeros(grid, dtype=cp.float32)
            kernel((grid,), (block,), (records, cp.uint64(HOLD_NS), cp.int32(96), cp.int32(dynamic // 4), seed, sink),
                   shared_mem=dynamic)
            host = records.get().reshape(-1, 3)
            summary = summarize(max_resident_per_sm(host, margin_ns=HOLD_NS // 10))
            row.update(measured=summary["max"], measured_min=summary["min"], sms_seen=summary["sms"])
        else:
            row.update(measured=None, measured_min=None, sms_seen=0)
        row["match"] = row["measured"] == row["engine"] if row["measured"] is not None else row["driver"] == 0
        rows.append(row)
    matches = sum(r["match"] for r in rows)
    return [Measurement(
        name="occupancy_empirical", group="occupancy", unit="configs equal to the engine", samples=[matches],
        method="blocks record %smid and %globaltimer; most blocks resident on one SM at once vs the engine's prediction",
        details={"configs": rows, "total": len(rows)},
    )]


def probe_cluster_occupancy(ctx: ProbeContext) -> list[Measurement]:
    """The driver's cuOccupancyMaxActiveClusters over cluster sizes 1..16 at
    several block shapes and the measured GPC layout, judged against the
    offline model fed with the measured layout and the engine's blocks per SM."""
    from ..specs.catalog import shipped_catalog
    from .clusters import measure_clusters
    from .results import judge_clusters

    if int(ctx.device.cc.split(".")[0]) < 9:
        raise RuntimeError(f"thread-block clusters need compute capability 9.0 or later, not {ctx.device.cc}")
    record = measure_clusters(ctx.cupy, ctx.module("cluster"), ctx.device.sm_count,
                     ctx.device.attributes["shared_mem_per_block_optin"], rounds=1 if ctx.tiny else 4 if ctx.quick else 8)
    judged = judge_clusters(shipped_catalog().archs.get(ctx.device.cc), record)
    return [Measurement(
        name="cluster_occupancy", group="occupancy", unit="answers equal to the driver",
        samples=[judged["matches"]],
        method="cuOccupancyMaxActiveClusters over cluster sizes 1..16 (non-portable allowed) at "
               f"{len(record['shapes'])} block shapes vs the model over the GPC layout measured with %smid per cluster",
        details={**record, "total": judged["total"], "mismatches": judged["mismatches"]},
    )]


PROBES = {  # name -> (function, what it measures); the order is the run order
    "compute": (arithmetic, "FP32, FP64 and FP16 (half2) FMA throughput, and the SM clock"),
    "dram": (dram_bandwidth, "device-memory read, write, copy and triad bandwidth"),
    "curve": (bandwidth_vs_occupancy, "device-memory read bandwidth against warps per SM and ILP"),
    "l2": (l2_bandwidth, "L2 read bandwidth"),
    "shared": (shared_bandwidth, "shared-memory read bandwidth"),
    "latency": (latency, "pointer-chase latency of shared memory, L1, L2 and device memory"),
    "launch": (launch_overhead, "kernel launch overhead"),
    "occupancy": (empirical_occupancy, "resident blocks per SM, measured, against the engine and the driver"),
    "cluster": (probe_cluster_occupancy, "cluster occupancy (cuOccupancyMaxActiveClusters) and the GPC layout, measured"),
}


def run_probes(ctx: ProbeContext, names: list[str], progress=None) -> list[Measurement]:
    """Run the named probes in order; a failing probe is reported, not raised."""
    results = []
    for name in names:
        function, _ = PROBES[name]
        try:
            results.extend(function(ctx))
        except Exception as exc:  # out of memory, compile errors, driver errors: name it, go on
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            results.append(Measurement(name=name, group="failed", unit="", error=f"{type(exc).__name__}: {message}"))
        finally:
            ctx.cupy.get_default_memory_pool().free_all_blocks()
        if progress is not None:
            progress(name)
    return results


def measure_device(cupy, index: int, names: list[str], quick: bool = False, tiny: bool = False,
                   run=run_probes) -> tuple[dict, object]:
    """(the `probe` document of device `index`, the shipped product it matches or None): the
    probes `names` run there through `run(ctx, names)` (run_probes, or one that shows progress)."""
    from ..specs.catalog import shipped_catalog
    from .gpu import device_info
    from .results import apply_peaks, device_document, match_product

    with cupy.cuda.Device(index):
        info = device_info(cupy, index)
        ctx = ProbeContext(cupy, info, quick=quick, tiny=tiny)
        results = run(ctx, names)
        clock = ctx.observed_clock_mhz
    product = match_product(shipped_catalog(), info.cc, info.sm_count, info.name)
    apply_peaks(results, product, info.sm_count, info.attributes["warp_size"], clock)
    return device_document(info.as_dict(), product, clock, results, quick), product
