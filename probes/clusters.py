"""Thread-block clusters on the device: the driver's
cuOccupancyMaxActiveClusters over cluster sizes 1..16 (non-portable sizes
allowed) at several block shapes, and the GPC layout measured by launching
clusters and recording where their blocks ran (%smid per cluster).

A cluster always runs inside one GPC, so SMs that ever share a cluster are in
the same GPC; the union over many clusters of sizes 2..16 gives the layout.
The raw driver answers and records are kept, so a CPU test can replay them
against the offline model (`tuneadvise.advisor.engine.clusters`).
"""

from __future__ import annotations

import ctypes

from . import driver

CLUSTER_SIZES = tuple(range(1, 17))
LAYOUT_SIZES = (2, 4, 8, 16)
HOLD_NS = 20_000
# (block size, dynamic shared memory): different resident blocks per SM
CLUSTER_SHAPES = ((64, 0), (96, 0), (128, 0), (192, 0), (256, 0), (512, 0), (1024, 0), (256, 48 * 1024),
                  (128, 100 * 1024), (128, 200 * 1024))

# cuda.h numbers
ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class _LaunchAttribute(ctypes.Structure):
    # CUlaunchAttribute: id, padding to 8 bytes, a 64-byte value union (clusterDim is its first 3 unsigned)
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("x", ctypes.c_uint), ("y", ctypes.c_uint),
                ("z", ctypes.c_uint), ("rest", ctypes.c_char * 52)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


def _libcuda():
    return ctypes.CDLL("libcuda.so.1")


def _config(grid: int, block: int, dynamic: int, cluster: int, stream: int = 0):
    attribute = _LaunchAttribute(id=LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, x=cluster, y=1, z=1)
    attrs = (_LaunchAttribute * 1)(attribute)
    config = _LaunchConfig(grid, 1, 1, block, 1, 1, dynamic, ctypes.c_void_p(stream), attrs, 1)
    return config, attrs  # attrs kept alive beside the config


def allow_non_portable(raw_kernel) -> None:
    status = _libcuda().cuFuncSetAttribute(ctypes.c_void_p(raw_kernel.kernel.ptr),
                                           ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
    if status:
        raise RuntimeError(f"cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED) failed with CUresult {status}")


def max_active_clusters(raw_kernel, block: int, dynamic: int, cluster: int) -> tuple[int, int]:
    """(cuOccupancyMaxActiveClusters, CUresult); 0 clusters where the driver refuses."""
    config, _keep = _config(cluster, block, dynamic, cluster)
    value = ctypes.c_int()
    status = _libcuda().cuOccupancyMaxActiveClusters(ctypes.byref(value), ctypes.c_void_p(raw_kernel.kernel.ptr),
                                                     ctypes.byref(config))
    return (value.value if status == 0 else 0), status


def launch_clusters(cupy, raw_kernel, grid: int, block: int, dynamic: int, cluster: int, args: list) -> None:
    """cuLaunchKernelEx with a cluster dimension; `args` are ctypes values."""
    config, _keep = _config(grid, block, dynamic, cluster, cupy.cuda.get_current_stream().ptr)
    params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    status = _libcuda().cuLaunchKernelEx(ctypes.byref(config), ctypes.c_void_p(raw_kernel.kernel.ptr), params, None)
    if status:
        raise RuntimeError(f"cuLaunchKernelEx with clusters of {cluster} failed with CUresult {status}")


def gpc_layout(cluster_members: list[list[int]], sm_count: int) -> list[list[int]]:
    """SM groups (GPCs) from the SMs of each launched cluster: union-find over
    'ran in the same cluster'. SMs never seen stay alone."""
    parent = list(range(sm_count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in cluster_members:
        first = root(members[0])
        for sm in members[1:]:
            parent[root(sm)] = first
    groups: dict[int, list[int]] = {}
    for sm in range(sm_count):
        groups.setdefault(root(sm), []).append(sm)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def measure_clusters(cupy, module, sm_count: int, optin_bytes: int, rounds: int = 8) -> dict:
    """The raw record: per shape the driver's answers; the measured GPC layout."""
    kernel = module.get_function("cluster_where")
    attrs = driver.kernel_attributes(kernel)
    driver.set_launch_attributes(kernel, optin_bytes - attrs["static_shared_mem"], -1)
    allow_non_portable(kernel)
    shapes = []
    for block, dynamic in CLUSTER_SHAPES:
        if dynamic > optin_bytes:
            continue
        answers = {}
        for size in CLUSTER_SIZES:
            clusters, status = max_active_clusters(kernel, block, dynamic, size)
            answers[str(size)] = {"clusters": clusters, "status": status}
        shapes.append({"block_size": block, "dynamic_shared_mem": dynamic, "registers": attrs["registers"],
                       "static_shared_mem": attrs["static_shared_mem"],
                       "max_threads_per_block": attrs["max_threads_per_block"],
                       "driver_blocks_per_sm": driver.active_blocks(cupy, kernel, block, dynamic),
                       "max_active_clusters": answers})
    layout = measure_layout(cupy, kernel, sm_count, optin_bytes, rounds)
    return {"shapes": shapes, **layout}


def measure_layout(cupy, kernel, sm_count: int, optin_bytes: int, rounds: int = 8) -> dict:
    """The GPC layout: clusters of 2..16 blocks, one block per SM (most of the
    opt-in shared memory), each block recording its SM; `kernel` is
    cluster_where with the opt-in and non-portable attributes set."""
    block, dynamic = 128, optin_bytes
    members: list[list[int]] = []
    launched = {}
    for size in LAYOUT_SIZES:
        clusters, _ = max_active_clusters(kernel, block, dynamic, size)
        if not clusters:
            continue
        grid = size * clusters * 2
        records = cupy.zeros(3 * grid, dtype=cupy.uint32)
        for _ in range(rounds):
            launch_clusters(cupy, kernel, grid, block, dynamic, size,
                            [ctypes.c_void_p(records.data.ptr), ctypes.c_ulonglong(HOLD_NS)])
            host = records.get().reshape(-1, 3)
            by_cluster: dict[int, list[int]] = {}
            for sm, cluster, _rank in host.tolist():
                by_cluster.setdefault(cluster, []).append(sm)
            members.extend(by_cluster.values())
        launched[str(size)] = grid // size * rounds
    layout = gpc_layout(members, sm_count)
    return {"gpc_sms": layout, "gpc_sizes": [len(g) for g in layout], "layout_clusters_launched": launched,
            "layout_block": [block, dynamic]}


def prepared_kernel(module, optin_bytes: int):
    """cluster_where with the opt-in shared memory and non-portable sizes allowed."""
    kernel = module.get_function("cluster_where")
    attrs = driver.kernel_attributes(kernel)
    driver.set_launch_attributes(kernel, optin_bytes - attrs["static_shared_mem"], -1)
    allow_non_portable(kernel)
    return kernel


def device_layout(cupy, info) -> list[int] | None:
    """The GPC sizes of the device `info` describes, measured with clusters; None before 9.0
    (no clusters)."""
    if int(info.cc.split(".")[0]) < 9:
        return None
    from .gpu import load_module

    optin = info.attributes["shared_mem_per_block_optin"]
    kernel = prepared_kernel(load_module(cupy, "cluster"), optin)
    return measure_layout(cupy, kernel, info.sm_count, optin, rounds=4)["gpc_sizes"]
