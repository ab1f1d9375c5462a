"""The CUDA driver's own view of a loaded kernel: its attributes and what
cuOccupancyMaxActiveBlocksPerMultiprocessor answers, through CuPy; and the current
device's compute capability through the driver library alone (no CuPy needed)."""

from __future__ import annotations

import ctypes

from ..advisor.engine.occupancy import CARVEOUT_DEFAULT
from ..advisor.launch import LaunchConfig


def kernel_attributes(raw_kernel) -> dict:
    return {
        "registers": raw_kernel.num_regs,
        "static_shared_mem": raw_kernel.shared_size_bytes,
        "local_bytes": raw_kernel.local_size_bytes,
        "max_threads_per_block": raw_kernel.max_threads_per_block,
    }


def _handle(raw_kernel) -> int:
    return raw_kernel.kernel.ptr


def set_launch_attributes(raw_kernel, opt_in_bytes: int, carveout: int) -> None:
    """Raise the dynamic shared memory limit (opt-in) and set the carveout
    preference; carveout -1 leaves the driver's default."""
    raw_kernel.max_dynamic_shared_size_bytes = opt_in_bytes
    raw_kernel.preferred_shared_memory_carveout = carveout


def active_blocks(cupy, raw_kernel, block: int, dynamic: int) -> int:
    """cuOccupancyMaxActiveBlocksPerMultiprocessor: 0 where the driver refuses."""
    query = getattr(cupy.cuda.driver, "occupancyMaxActiveBlocksPerMultiprocessor", None)
    if query is not None:
        try:
            return int(query(_handle(raw_kernel), block, dynamic))
        except cupy.cuda.driver.CUDADriverError:
            return 0
    libcuda = ctypes.CDLL("libcuda.so.1")
    value = ctypes.c_int()
    status = libcuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(value), ctypes.c_void_p(_handle(raw_kernel)), ctypes.c_int(block), ctypes.c_size_t(dynamic))
    return value.value if status == 0 else 0


def engine_kernel(attributes: dict, block: int, dynamic: int, carveout: int = CARVEOUT_DEFAULT,
                  opt_in: bool = False, barriers: int = 1) -> LaunchConfig:
    return LaunchConfig(
        registers=attributes["registers"], block_size=block, static_shared_mem=attributes["static_shared_mem"],
        dynamic_shared_mem=dynamic, carveout=carveout, opt_in=opt_in,
        max_threads_per_block=attributes["max_threads_per_block"], barriers=barriers,
    )


def current_device_arch() -> str | None:
    """sm_XX of the current CUDA context's device (device 0 without one), through the driver
    library; None where there is no driver or no device."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    if cuda.cuInit(0) != 0:
        return None
    device = ctypes.c_int(0)
    if cuda.cuCtxGetDevice(ctypes.byref(device)) != 0:
        device = ctypes.c_int(0)
        count = ctypes.c_int(0)
        if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
            return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    if cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device) != 0 or \
            cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device) != 0:
        return None
    return f"sm_{major.value}{minor.value}"
