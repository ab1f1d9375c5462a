#!/usr/bin/env bash
# Prints, for the device.txt beside a recording, the GPU, its compute capability,
# clocks and driver, the ncu and nvcc releases, and the device properties the
# engine needs (through CuPy). Usage: tests/gpu/describe_device.sh > OUTDIR/device.txt
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem --format=csv
ncu --version | tail -1
nvcc --version | tail -1
python3 - <<'PY'
import cupy as cp
a = cp.cuda.Device(0).attributes
for k in ("MultiProcessorCount", "ComputeCapabilityMajor", "ComputeCapabilityMinor",
          "MaxSharedMemoryPerMultiprocessor", "MaxSharedMemoryPerBlockOptin",
          "ReservedSharedMemoryPerBlock", "MaxThreadsPerMultiProcessor", "MaxRegistersPerMultiprocessor",
          "L2CacheSize", "ClockRate", "MemoryClockRate", "GlobalMemoryBusWidth"):
    print(k, a.get(k))
print("DriverVersion", cp.cuda.runtime.driverGetVersion(), "RuntimeVersion", cp.cuda.runtime.runtimeGetVersion())
PY
