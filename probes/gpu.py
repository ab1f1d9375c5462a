"""Where CuPy is loaded (or, without it, the driver asked which CuPy build fits), the device
described, the probe kernels compiled and launches timed.

Everything else in `tuneadvise.probes` works on plain numbers, so the
reporting logic runs (and is tested) without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KERNEL_DIR = Path(__file__).parent / "kernels"
# The CuPy wheel for each CUDA major the driver supports, and the extra that installs it.
CUPY_EXTRAS = {12: ("gpu", "cupy-cuda12x"), 13: ("gpu-cuda13", "cupy-cuda13x")}
DRIVER_LIBRARIES = ("libcuda.so.1", "nvcuda.dll")  # Linux, Windows


class GpuUnavailable(RuntimeError):
    """No driver, no CuPy or no device: the command exits with code 3."""


def driver_cuda_version() -> tuple[int, int] | None:
    """The newest CUDA the installed NVIDIA driver runs (cuDriverGetVersion: 13000 -> (13, 0));
    None where no driver library loads."""
    import ctypes

    for name in DRIVER_LIBRARIES:
        try:
            library = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        if library.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
            return None
        return version.value // 1000, version.value % 1000 // 10
    return None


def has_cuda_python() -> bool:
    """Whether NVIDIA's cuda-python bindings (`cuda.bindings`) are installed, without importing them."""
    from importlib.util import find_spec

    try:
        return find_spec("cuda.bindings") is not None
    except (ImportError, ValueError):  # no `cuda` package at all, or a broken one
        return False


def cuda_python_device_name(index: int, what: str = "tune") -> str:
    """Device `index`'s name through the cuda-python bindings; GpuUnavailable (one sentence) where
    the runtime finds no usable GPU."""
    from cuda.bindings import runtime

    try:
        error, count = runtime.cudaGetDeviceCount()
        if error == runtime.cudaError_t.cudaSuccess and count > index:
            error, properties = runtime.cudaGetDeviceProperties(index)
    except Exception as exc:  # noqa: BLE001  a missing driver or runtime library surfaces as several types
        raise GpuUnavailable(f"{what} found no usable NVIDIA GPU (cuda-python said: {_first_line(exc)})") from None
    if error != runtime.cudaError_t.cudaSuccess:
        raise GpuUnavailable(f"{what} found no usable NVIDIA GPU (CUDA said: {error.name})")
    if count <= index:
        raise GpuUnavailable(f"{what} found no NVIDIA GPU on this machine")
    return properties.name.split(b"\0", 1)[0].decode(errors="replace")


def cupy_hint(what: str, driver: tuple[int, int] | None) -> str:
    """What to do when CuPy is missing, decided by the driver: none, one too old for any CuPy
    wheel, or the extra whose CuPy build matches the CUDA it runs."""
    if driver is None:
        return f"{what} needs an NVIDIA GPU and its driver; no NVIDIA driver (libcuda) was found on this machine."
    cuda = f"{driver[0]}.{driver[1]}"
    if driver[0] < min(CUPY_EXTRAS):
        return (f"{what} needs CuPy, whose builds need a driver for CUDA {min(CUPY_EXTRAS)} or later; this driver "
                f"runs CUDA {cuda}: update the NVIDIA driver.")
    extra, wheel = CUPY_EXTRAS.get(driver[0], CUPY_EXTRAS[max(CUPY_EXTRAS)])
    return (f"{what} needs CuPy, which is not installed; for this driver (CUDA {cuda}) install "
            f"pip install 'tuneadvise[{extra}]' (from a source checkout: pip install '.[{extra}]'), which brings {wheel}.")


def load_cupy(what: str = "probe"):
    """Import CuPy and check that a device answers; one sentence on failure, which looks for the
    driver before it suggests installing CuPy."""
    try:
        import cupy
    except ImportError:
        raise GpuUnavailable(cupy_hint(what, driver_cuda_version())) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError, or a missing libcuda
        raise GpuUnavailable(f"{what} found no usable NVIDIA GPU (CUDA said: {_first_line(exc)}).") from None
    if count == 0:
        raise GpuUnavailable(f"{what} found no NVIDIA GPU on this machine.")
    return cupy


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


# cudaDeviceAttr numbers (driver_types.h); names as the spec fields read them.
DEVICE_ATTRIBUTES = {
    "max_threads_per_block": 1,
    "shared_mem_per_block": 8,
    "warp_size": 10,
    "registers_per_block": 12,
    "clock_rate_khz": 13,
    "sm_count": 16,
    "memory_clock_rate_khz": 36,
    "memory_bus_width": 37,
    "l2_bytes": 38,
    "max_threads_per_sm": 39,
    "major": 75,
    "minor": 76,
    "shared_mem_per_sm": 81,
    "registers_per_sm": 82,
    "shared_mem_per_block_optin": 97,
    "max_blocks_per_sm": 106,
    "reserved_shared_mem_per_block": 111,
}


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    cc: str
    attributes: dict  # DEVICE_ATTRIBUTES name -> value, as the driver reports it
    total_memory: int
    free_memory: int
    driver_version: int
    runtime_version: int

    @property
    def sm_count(self) -> int:
        return self.attributes["sm_count"]

    def as_dict(self) -> dict:
        return {
            "index": self.index,
            "name": self.name,
            "compute_capability": self.cc,
            "attributes": dict(self.attributes),
            "total_memory_bytes": self.total_memory,
            "free_memory_bytes": self.free_memory,
            "driver_version": self.driver_version,
            "runtime_version": self.runtime_version,
        }


def device_info(cupy, index: int) -> DeviceInfo:
    runtime = cupy.cuda.runtime
    with cupy.cuda.Device(index):
        attributes = {name: runtime.deviceGetAttribute(code, index) for name, code in DEVICE_ATTRIBUTES.items()}
        free, total = runtime.memGetInfo()
        name = runtime.getDeviceProperties(index)["name"]
        if isinstance(name, bytes):
            name = name.decode()
        return DeviceInfo(
            index=index,
            name=name,
            cc=f"{attributes['major']}.{attributes['minor']}",
            attributes=attributes,
            total_memory=total,
            free_memory=free,
            driver_version=runtime.driverGetVersion(),
            runtime_version=runtime.runtimeGetVersion(),
        )


def device_count(cupy) -> int:
    return cupy.cuda.runtime.getDeviceCount()


def load_module(cupy, name: str, options: tuple = ()):
    """Compile probes/kernels/NAME.cu with NVRTC. CuPy caches the binary on
    disk (~/.cupy/kernel_cache), so only the first run pays for compilation."""
    source = (KERNEL_DIR / f"{name}.cu").read_text()
    return cupy.RawModule(code=source, options=("-std=c++17", f"-I{KERNEL_DIR}", *options))


def time_launches(cupy, launch, repeats: int, warmup: int = 2) -> list[float]:
    """Seconds per launch, from CUDA events around each one, after warm-up."""
    for _ in range(warmup):
        launch()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    samples = []
    for _ in range(repeats):
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return samples
