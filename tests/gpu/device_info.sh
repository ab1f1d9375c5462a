#!/usr/bin/env bash
# Prints, for the recording scripts' device.txt, the GPU that recorded: its name,
# compute capability, driver and clocks, the ncu and nvcc that ran, and the
# device attributes the engine reads, as CuPy reports them.
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem --format=csv
ncu --version | tail -1
nvcc --version | tail -1
python3 - <<'PY'
import cupy as cp
device = cp.cuda.Device(0)
a = device.attributes
print("ComputeCapability", device.compute_capability)  # the attributes hold no ComputeCapabilityMajor/Minor
for k in ("MultiProcessorCount", "MaxSharedMemoryPerMultiprocessor", "MaxSharedMemoryPerBlockOptin",
          "ReservedSharedMemoryPerBlock", "MaxThreadsPerMultiProcessor", "MaxRegistersPerMultiprocessor",
          "L2CacheSize", "ClockRate", "MemoryClockRate", "GlobalMemoryBusWidth"):
    print(k, a.get(k))
print("DriverVersion", cp.cuda.runtime.driverGetVersion(), "RuntimeVersion", cp.cuda.runtime.runtimeGetVersion())
PY
