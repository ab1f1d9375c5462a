"""Records, on a machine with an NVIDIA GPU and the CUDA toolkit, what the CUDA
driver reports for the kernels `tuneadvise lint` reads from real build output,
so the CPU tests can hold lint to the driver:

  python tests/gpu/record_lint_driver.py OUTDIR

Two code bases are compiled for the local GPU's architecture with nvcc
-Xptxas -v: tests/gpu/lint_kernels.cu and the project's own probe kernels
(probes/kernels/*.cu). For every kernel the cubin holds, the driver's
cuFuncGetAttribute figures (registers, static shared memory, local bytes,
max threads) and cuOccupancyMaxActiveBlocksPerMultiprocessor are recorded for
the launch tests/fixtures/lint/driver_lint.toml configures and for a sweep of
block sizes and dynamic shared memory. Also written: compressed fatbin objects
(-Xfatbin -compress-all, and --compress-mode=size where nvcc has it) and a
shared library, with cuobjdump's listing of each, for the fatbin reader.

Output: OUTDIR/lint_driver.json, OUTDIR/probe_kernels_<sm>.log,
OUTDIR/probe_kernels_<sm>_<file>.cubin, OUTDIR/lint_lz4.o, OUTDIR/lint_zstd.o,
OUTDIR/liblint.so and their cuobjdump listings.
"""

import ctypes
import glob
import json
import os
import subprocess
import sys

from cuda_driver import check, cuda, function_attributes, occupancy, open_device  # this directory

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
device = open_device(0)
major, minor = ctypes.c_int(), ctypes.c_int()
cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device)
cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)
SM = f"sm_{major.value}{minor.value}"
SWEEP_BLOCKS = list(range(32, 1025, 32)) + [1, 33, 100, 250]
SWEEP_DYNAMIC = [0, 1000, 4096, 12288, 40000]


def sh(*args, **kw):
    proc = subprocess.run(list(args), capture_output=True, text=True, **kw)
    return proc.returncode, proc.stdout + proc.stderr


def active_blocks(func, block, dynamic):
    status, blocks = occupancy(func, block, dynamic)
    return blocks if status == 0 else 0


def function_names(cubin):
    from tuneadvise.advisor.readers.cubin import read_cubin

    with open(cubin, "rb") as handle:
        return [k.name for k in read_cubin(handle.read())]


def record_cubin(cubin, label, launches):
    module = ctypes.c_void_p()
    check(cuda.cuModuleLoad(ctypes.byref(module), cubin.encode()), f"cuModuleLoad {cubin}")
    rows = []
    for name in function_names(cubin):
        func = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(func), module, name.encode()), f"cuModuleGetFunction {name}")
        attrs = function_attributes(func)
        block, dynamic = launches.get(name, (256, 0))
        rows.append({
            "code_base": label, "cubin": os.path.basename(cubin), "name": name, "arch": SM, "attributes": attrs,
            "configured": {"block": block, "dynamic": dynamic, "driver_blocks": active_blocks(func, block, dynamic)},
            "sweep": [[b, d, active_blocks(func, b, d)] for b in SWEEP_BLOCKS for d in SWEEP_DYNAMIC
                      if b <= attrs["max_threads_per_block"]],
        })
    return rows


def configured_launches(cubin, config):
    """What `tuneadvise lint` decides each kernel's launch is (from the config), by mangled name."""
    from tuneadvise.advisor.lint.config import load_config
    from tuneadvise.advisor.lint.run import LintOptions, lint_paths

    report = lint_paths([cubin], LintOptions(config=load_config(config)))
    return {k.name: (k.result.kernel.block_size, k.result.kernel.dynamic_shared_mem) for k in report.kernels}


config = os.path.join(REPO, "tests", "fixtures", "lint", "driver_lint.toml")
rows = []
lint_cubin = os.path.join(OUT, f"lint_kernels_{SM}.cubin")
status, log = sh("nvcc", "-cubin", f"-arch={SM}", "-Xptxas", "-v", os.path.join(HERE, "lint_kernels.cu"), "-o", lint_cubin)
open(os.path.join(OUT, f"lint_kernels_{SM}.log"), "w").write(log)
rows += record_cubin(lint_cubin, "lint_kernels.cu", configured_launches(lint_cubin, config))
probe_log = []
for source in sorted(glob.glob(os.path.join(REPO, "probes", "kernels", "*.cu"))):
    stem = os.path.splitext(os.path.basename(source))[0]
    cubin = os.path.join(OUT, f"probe_kernels_{SM}_{stem}.cubin")
    status, log = sh("nvcc", "-cubin", f"-arch={SM}", "-std=c++17", "-Xptxas", "-v",
                     "-I", os.path.join(REPO, "probes", "kernels"), source, "-o", cubin)
    probe_log.append(log)
    if status == 0 and function_names(cubin):
        rows += record_cubin(cubin, "probes/kernels", configured_launches(cubin, config))
open(os.path.join(OUT, f"probe_kernels_{SM}.log"), "w").write("".join(probe_log))

arches = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
          "-gencode", "arch=compute_120,code=sm_120"]
builds = {
    "lint_lz4.o": ["nvcc", "-c", *arches, "-Xfatbin", "-compress-all"],
    "lint_zstd.o": ["nvcc", "-c", *arches, "--compress-mode=size"],
    "liblint.so": ["nvcc", "-shared", "-Xcompiler", "-fPIC", *arches],
}
notes = {}
for name, command in builds.items():
    status, log = sh(*command, os.path.join(HERE, "lint_kernels.cu"), "-o", os.path.join(OUT, name))
    notes[name] = {"status": status, "log": log[-2000:]}
    if status == 0:
        _, listing = sh("cuobjdump", "--dump-resource-usage", os.path.join(OUT, name))
        open(os.path.join(OUT, f"cuobjdump_{name}.txt"), "w").write(listing)
_, version = sh("nvcc", "--version")
with open(os.path.join(OUT, "lint_driver.json"), "w") as handle:
    json.dump({"toolchain": version.strip().splitlines()[-2:], "arch": SM, "builds": notes, "kernels": rows},
              handle, indent=0)
print(f"{len(rows)} kernels recorded on {SM}; builds: " + ", ".join(f"{k}={v['status']}" for k, v in notes.items()))
