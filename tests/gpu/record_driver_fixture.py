"""Record, on a machine with an NVIDIA GPU and the CUDA toolkit, what the CUDA
driver's occupancy API answers for real compiled kernels, plus real ptxas -v
and cuobjdump output. Writes into the directory given as the first argument:

  driver_occupancy.json.gz   device attributes, each kernel's attributes, and
                             cuOccupancyMaxActiveBlocksPerMultiprocessor over a
                             sweep of block sizes, dynamic shared memory,
                             carveouts and opt-in
  ptxas_<arch>.log           nvcc -Xptxas -v of lint_kernels.cu per architecture
  cuobjdump_resource_usage.txt  cuobjdump --dump-resource-usage of a multi-arch object

Uses the driver API through ctypes only (no CuPy needed).
"""

import ctypes
import gzip
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile

from cuda_driver import check, cuda, function_attributes, occupancy, open_device  # this directory

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)

device = open_device(0)

DEVICE_ATTRIBUTES = {
    "max_threads_per_block": 1, "shared_mem_per_block": 8, "warp_size": 10, "registers_per_block": 12,
    "clock_rate_khz": 13, "multiprocessor_count": 16, "memory_clock_rate_khz": 36, "memory_bus_width": 37,
    "l2_cache_size": 38, "max_threads_per_multiprocessor": 39, "major": 75, "minor": 76,
    "shared_mem_per_multiprocessor": 81, "registers_per_multiprocessor": 82, "shared_mem_per_block_optin": 97,
    "max_blocks_per_multiprocessor": 106, "reserved_shared_mem_per_block": 111,
}
props = {}
for name, code in DEVICE_ATTRIBUTES.items():
    value = ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(value), code, device), f"attribute {name}")
    props[name] = value.value
name_buf = ctypes.create_string_buffer(256)
cuda.cuDeviceGetName(name_buf, 256, device)
props["name"] = name_buf.value.decode()
driver_version = ctypes.c_int()
cuda.cuDriverGetVersion(ctypes.byref(driver_version))
props["driver_version"] = driver_version.value
sm = f"sm_{props['major']}{props['minor']}"
print("device:", props, flush=True)

MAX_DYNAMIC = 8
CARVEOUT = 9


def set_attr(func, code, value):
    return cuda.cuFuncSetAttribute(func, code, value)


BLOCKS = [1, 31, 32, 33, 64, 96, 100, 128, 160, 192, 250, 256, 288, 384, 416, 512, 640, 768, 800, 1024]
DYNAMIC = [0, 1, 1000, 4096, 10000, 24576, 32768, 48128, 49152, 49153, 65536, 100000, 101376, 166912, 200000,
           231424, 232448, 232449]
CARVEOUTS = [-1, 0, 8, 25, 50, 60, 75, 100]
CAPS = [16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 255]
STATICS = [0, 1000, 4096, 12288, 20000, 40960, 49152]
BARRIERS = [0, 1, 4, 16]

kernels = []
work = tempfile.mkdtemp()
variants = [(cap, static, 1) for cap in CAPS for static in STATICS]
variants += [(64, 0, b) for b in BARRIERS] + [(32, 12288, b) for b in (2, 8, 16)]
for cap, static, barriers in variants:
    cubin = os.path.join(work, f"k_{cap}_{static}_{barriers}.cubin")
    proc = subprocess.run(
        ["nvcc", "-cubin", f"-arch={sm}", f"-maxrregcount={cap}", f"-DSTATIC_BYTES={static}",
         f"-DNAMED_BARRIERS={barriers}", "-Xptxas", "-v", "-o", cubin, os.path.join(HERE, "occupancy_kernels.cu")],
        capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        raise SystemExit("nvcc failed")
    used = re.search(r"used (\d+) barriers", proc.stderr)
    module = ctypes.c_void_p()
    check(cuda.cuModuleLoad(ctypes.byref(module), cubin.encode()), "cuModuleLoad")
    func = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(func), module, b"pressure"), "cuModuleGetFunction")
    attrs = function_attributes(func)
    attrs["ptxas_barriers"] = int(used.group(1)) if used else None
    attrs["ptxas"] = [line for line in proc.stderr.splitlines() if "Used" in line or "spill" in line]
    rows = []
    for optin, carveout in itertools.product((False, True), CARVEOUTS):
        max_dynamic = (props["shared_mem_per_block_optin"] if optin else props["shared_mem_per_block"]) - attrs["shared_size_bytes"]
        set_status = set_attr(func, MAX_DYNAMIC, max(max_dynamic, 0))
        carve_status = set_attr(func, CARVEOUT, carveout)
        for block, dynamic in itertools.product(BLOCKS, DYNAMIC):
            status, blocks = occupancy(func, block, dynamic)
            rows.append([int(optin), carveout, block, dynamic, status, blocks])
    potential = []
    for dynamic in (0, 4096, 32768):
        set_attr(func, MAX_DYNAMIC, props["shared_mem_per_block"] - attrs["shared_size_bytes"])
        set_attr(func, CARVEOUT, -1)
        min_grid, block = ctypes.c_int(), ctypes.c_int()
        status = cuda.cuOccupancyMaxPotentialBlockSize(ctypes.byref(min_grid), ctypes.byref(block), func, None,
                                                       ctypes.c_size_t(dynamic), 0)
        potential.append([dynamic, status, min_grid.value, block.value])
    kernels.append({"maxrregcount": cap, "static_bytes_requested": static, "named_barriers": barriers,
                    "attributes": attrs, "columns": ["opt_in", "carveout", "block_size", "dynamic_shared_mem", "status", "blocks"],
                    "rows": rows, "max_potential_block_size": potential})
    print(f"kernel cap={cap} static={static} barriers={barriers}: {attrs['num_regs']} regs, "
          f"{attrs['shared_size_bytes']} B static, {attrs['ptxas_barriers']} barriers, {len(rows)} queries", flush=True)

with gzip.open(os.path.join(OUT, "driver_occupancy.json.gz"), "wt") as handle:
    json.dump({"device": props, "kernels": kernels}, handle, separators=(",", ":"))

# Real compiler output for lint fixtures, several architectures.
nvcc_version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
archs = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
for arch in archs:
    proc = subprocess.run(["nvcc", "-c", f"-arch={arch}", "-Xptxas", "-v", "-o", os.path.join(work, f"lint_{arch}.o"),
                           os.path.join(HERE, "lint_kernels.cu")], capture_output=True, text=True)
    with open(os.path.join(OUT, f"ptxas_{arch}.log"), "w") as handle:
        handle.write(proc.stderr)
    print(arch, "ptxas rc", proc.returncode, flush=True)
gencode = sum((["-gencode", f"arch=compute_{a[3:]},code={a}"] for a in ("sm_80", "sm_90", "sm_120")), [])
fat = os.path.join(work, "lint_fat.o")
proc = subprocess.run(["nvcc", "-c", *gencode, "-Xptxas", "-v", "-o", fat, os.path.join(HERE, "lint_kernels.cu")],
                      capture_output=True, text=True)
with open(os.path.join(OUT, "ptxas_multi.log"), "w") as handle:
    handle.write(proc.stderr)
dump = subprocess.run(["cuobjdump", "--dump-resource-usage", fat], capture_output=True, text=True)
with open(os.path.join(OUT, "cuobjdump_resource_usage.txt"), "w") as handle:
    handle.write(dump.stdout)
with open(os.path.join(OUT, "toolchain.txt"), "w") as handle:
    handle.write(f"{nvcc_version}\ndriver {props['driver_version']}\n{props['name']}\n")
print("done", flush=True)
