"""The CUDA driver API through ctypes, for the recording scripts in this
directory (run on a GPU machine; they need no CuPy): a current context on
device 0, function attributes, and the occupancy API."""

import ctypes

cuda = ctypes.CDLL("libcuda.so.1")

# CUfunction_attribute numbers (cuda.h)
FUNC_ATTR = {"max_threads_per_block": 0, "shared_size_bytes": 1, "local_size_bytes": 3, "num_regs": 4}


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what} failed with CUresult {status}")


def open_device(index: int = 0) -> ctypes.c_int:
    """cuInit and make device `index`'s primary context current; returns the device."""
    check(cuda.cuInit(0), "cuInit")
    device = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(device), index), "cuDeviceGet")
    context = ctypes.c_void_p()
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    return device


def func_attr(func, code):
    value = ctypes.c_int()
    check(cuda.cuFuncGetAttribute(ctypes.byref(value), code, func), "cuFuncGetAttribute")
    return value.value


def function_attributes(func) -> dict:
    return {name: func_attr(func, code) for name, code in FUNC_ATTR.items()}


def occupancy(func, block, dynamic):
    """(CUresult, blocks) of cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, default flags."""
    blocks = ctypes.c_int(-1)
    status = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        ctypes.byref(blocks), func, block, ctypes.c_size_t(dynamic), 0)
    return status, blocks.value
