"""How long `tuneadvise.prune` takes over an autotuner's space of configurations, against
the nearest peer (calling `tuneadvise.advisor.analyze` once per configuration, which is what
a tuner would otherwise write) and the floor (a loop that only calls `resources` on each).

    python benchmarks/prune.py [--configs 10000] [--repeat 5] [--arch h100-sxm]

The space is a Triton matmul's: BLOCK_M x BLOCK_N x BLOCK_K tiles, num_warps, num_stages,
with shared memory estimated as Triton's Hopper pipeline allocates it (one A and one B tile
per stage, fp16) and registers estimated from the accumulator tile, then varied so that most
configurations have distinct resources (the worst case for any cache). Printed: the number
of configurations, how many distinct resource sets, how many can launch, the best of
--repeat timings for each of prune, analyze-per-config and the floor, and the ratios.
Caches are cleared before each prune timing, so each one starts cold.
"""

import argparse
import itertools
import time

from tuneadvise import prune
from tuneadvise.advisor import analyze
from tuneadvise.advisor.engine import cached_limits


def space(count: int) -> list[dict]:
    tiles = (16, 32, 64, 128, 256)
    out = []
    for i, (m, n, k, warps, stages) in enumerate(itertools.cycle(itertools.product(tiles, tiles, tiles[:4], (1, 2, 4, 8, 16),
                                                                                   (1, 2, 3, 4, 5, 6)))):
        if i == count:
            break
        out.append({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "num_warps": warps, "num_stages": stages, "salt": i % 97})
    return out


def resources(c: dict) -> dict:
    threads = 32 * c["num_warps"]
    accumulator = c["BLOCK_M"] * c["BLOCK_N"] // threads  # fp32 values each thread holds
    return {"registers": min(255, 32 + accumulator + c["salt"] % 24), "num_warps": c["num_warps"],
            "dynamic_shared_mem": (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * 2 * c["num_stages"] + 16 * (c["salt"] % 8)}


def best(fn, repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        cached_limits.shape_limits.cache_clear()
        cached_limits.shared_mem_limits.cache_clear()
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def per_config(configs, arch):
    kept = []
    for c in configs:
        r = resources(c)
        total = r["dynamic_shared_mem"]
        result = analyze(arch, registers=r["registers"], block_size=32 * r["num_warps"], dynamic_shared_mem=total,
                         opt_in=total > 49152)
        if result.launchable and result.active_blocks_per_sm:
            kept.append((c, result.occupancy))
    return kept


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--arch", default="h100-sxm")
    args = parser.parse_args()
    configs = space(args.configs)
    distinct = len({tuple(sorted(resources(c).items())) for c in configs})
    analyze(args.arch, registers=32, block_size=128)  # load the catalog outside the timings
    t_prune, kept = best(lambda: prune(configs, args.arch, resources), args.repeat)
    t_peer, peer = best(lambda: per_config(configs, args.arch), max(1, args.repeat // 2))
    t_floor, _ = best(lambda: [resources(c) for c in configs], args.repeat)
    agree = [(p.config, p.occupancy) for p in kept] == peer
    print(f"{len(configs)} configurations, {distinct} distinct resource sets, {len(kept)} can launch "
          f"(analyze per config agrees: {agree})")
    print(f"prune:              {t_prune * 1e3:8.1f} ms  ({t_prune / len(configs) * 1e6:.2f} us per config)")
    print(f"analyze per config: {t_peer * 1e3:8.1f} ms  (prune is {t_peer / t_prune:.1f}x faster)")
    print(f"floor (resources):  {t_floor * 1e3:8.1f} ms  (prune is {t_prune / t_floor:.1f}x the floor)")


if __name__ == "__main__":
    main()
