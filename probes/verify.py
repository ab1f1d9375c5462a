"""`verify`: load a user's compiled kernels through CuPy, ask the driver's
occupancy API over a sweep, and compare every answer with the engine."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..advisor.engine.occupancy import occupancy
from ..specs.errors import InputError
from ..specs.files import MAX_CUBIN_BYTES, read_bounded

BLOCK_SIZES = tuple(range(32, 1025, 32))
CARVEOUTS = (-1, 0, 25, 50, 100)
DYNAMIC_BYTES = tuple(kib * 1024 for kib in (0, 1, 8, 16, 32, 48, 64, 100, 164, 227))


@dataclass
class KernelVerdict:
    name: str
    attributes: dict
    checked: int = 0
    disagreements: list = field(default_factory=list)  # dicts: the inputs, engine, driver
    clusters_checked: int = 0  # cuOccupancyMaxActiveClusters answers compared with the cluster model


def entry_points(path: Path) -> dict[str, int]:
    """Kernel name -> barriers per block, from one read of the file: a cubin's
    .nv.info records, or a .ptx's `.entry` lines. Where the count is unknown
    (PTX) or zero, the engine is given the one barrier the occupancy API assumes."""
    data = read_bounded(path, MAX_CUBIN_BYTES, "cubin or PTX")
    if data[:4] == b"\x7fELF":
        from ..advisor.readers.cubin import read_cubin

        return {k.name: k.barriers or 1 for k in read_cubin(data)}
    text = data.decode("utf-8", errors="replace")
    return dict.fromkeys(re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)", text), 1)


CLUSTER_BLOCKS = (64, 128, 256, 512, 1024)
CLUSTER_DYNAMIC = (0, 48 * 1024, 100 * 1024)


def verify_module(cupy, path: Path, arch, kernels: dict[str, int], gpc_sms: list[int] | None = None) -> list[KernelVerdict]:
    """kernels: entry_points(path); gpc_sms: the device's measured GPC layout, which
    adds cuOccupancyMaxActiveClusters over cluster sizes 1..16 against the model."""
    from . import driver

    module = cupy.RawModule(path=str(path))
    verdicts = []
    for name, count in kernels.items():
        kernel = module.get_function(name)
        attrs = driver.kernel_attributes(kernel)
        verdict = KernelVerdict(name, attrs)
        for carveout in CARVEOUTS:
            driver.set_launch_attributes(kernel, arch.shared_mem_per_block_optin - attrs["static_shared_mem"], carveout)
            for block in BLOCK_SIZES:
                if block > attrs["max_threads_per_block"]:
                    continue
                for dynamic in DYNAMIC_BYTES:
                    if dynamic + attrs["static_shared_mem"] > arch.shared_mem_per_block_optin:
                        continue
                    ours = occupancy(arch, driver.engine_kernel(attrs, block, dynamic, carveout, True, count)).active_blocks_per_sm
                    theirs = driver.active_blocks(cupy, kernel, block, dynamic)
                    verdict.checked += 1
                    if ours != theirs:
                        verdict.disagreements.append({"block_size": block, "dynamic_shared_mem": dynamic,
                                                      "carveout": carveout, "engine": ours, "driver": theirs})
        if gpc_sms:
            _check_clusters(kernel, attrs, count, arch, gpc_sms, verdict)
        verdicts.append(verdict)
    return verdicts


def _check_clusters(kernel, attrs: dict, barriers: int, arch, gpc_sms: list[int], verdict: KernelVerdict) -> None:
    from ..advisor.engine.clusters import cluster_occupancy
    from . import clusters, driver

    driver.set_launch_attributes(kernel, arch.shared_mem_per_block_optin - attrs["static_shared_mem"], -1)
    clusters.allow_non_portable(kernel)
    for block in CLUSTER_BLOCKS:
        if block > attrs["max_threads_per_block"]:
            continue
        for dynamic in CLUSTER_DYNAMIC:
            if dynamic + attrs["static_shared_mem"] > arch.shared_mem_per_block_optin:
                continue
            blocks = occupancy(arch, driver.engine_kernel(attrs, block, dynamic, -1, True, barriers)).active_blocks_per_sm
            for size in range(1, arch.max_cluster_size + 1):
                theirs, _ = clusters.max_active_clusters(kernel, block, dynamic, size)
                ours = cluster_occupancy(arch, gpc_sms, blocks, size).clusters if blocks else 0
                verdict.clusters_checked += 1
                if ours != theirs:
                    verdict.disagreements.append({"block_size": block, "dynamic_shared_mem": dynamic, "carveout": -1,
                                                  "cluster_size": size, "engine": ours, "driver": theirs})



class VerifyError(InputError):
    """A module or device `verify` cannot check: no spec for the device, or a module the driver refuses."""


def verify_on_device(cupy, path: Path, device: int, kernels: dict[str, int]):
    """(DeviceInfo, the shipped Arch, the measured GPC layout, the verdicts) of `path`'s kernels
    on `device`; VerifyError where the device has no spec or the driver cannot load the module."""
    from ..specs.catalog import shipped_catalog
    from .clusters import device_layout
    from .gpu import device_info

    with cupy.cuda.Device(device):
        info = device_info(cupy, device)
        arch = shipped_catalog().archs.get(info.cc)
        if arch is None:
            raise VerifyError(f"no spec for this device's compute capability {info.cc}")
        gpc_sms = device_layout(cupy, info)
        try:
            verdicts = verify_module(cupy, path, arch, kernels, gpc_sms)
        except cupy.cuda.driver.CUDADriverError as exc:
            raise VerifyError(f"{path}: the driver could not load it ({exc})") from None
    return info, arch, gpc_sms, verdicts
