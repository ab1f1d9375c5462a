#!/usr/bin/env bash
# Records, on a machine with an NVIDIA GPU, Nsight Compute (ncu), CUDA, CuPy,
# PyTorch and Triton, the Nsight Compute exports with the sections the measured
# path reads (tests/fixtures/ncu/sections/):
#
#   <program>.csv    `ncu --csv` details page with the sections SpeedOfLight,
#                    WarpStateStats, SchedulerStats, MemoryWorkloadAnalysis,
#                    Occupancy and LaunchStats, exactly as ncu printed it
#   <program>.log    each launch's parameters as the program logged them
#                    (carveout -1: no preference set; cluster: blocks per cluster)
#   ncu_smem_config.csv  the driver's shared-memory configuration sweep with no
#                    carveout preference (Occupancy and LaunchStats only)
#   device.txt       the device, its compute capability, SMs, driver, ncu version
#
# Each step has its own time limit, so that one slow program cannot take the
# others' time. Usage: tests/gpu/record_sections.sh OUTDIR
set -uo pipefail
out=${1:?usage: record_sections.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
build=$(mktemp -d)
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats
          --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats)
TIMEFORMAT="%R s"

for p in ncu_tails ncu_smem ncu_imbalance ncu_templates ncu_sweep ncu_smem_config ncu_clusters; do
  nvcc -O2 -arch=sm_90 -o "$build/$p" "$here/$p.cu" &
done
wait
for p in ncu_tails ncu_smem ncu_imbalance ncu_templates ncu_sweep ncu_smem_config ncu_clusters; do
  [ -x "$build/$p" ] || { echo "build of $p failed"; exit 1; }
done
"$here/describe_device.sh" > "$out/device.txt" 2>&1

step() {  # step NAME SECONDS COMMAND...: one export, its log and its errors
  local name=$1 limit=$2; shift 2
  echo "== $name"
  time NCU_MANIFEST="$out/$name.log" timeout "$limit" ncu --csv --clock-control none "$@" > "$out/$name.csv" 2> "$out/$name.err"
  echo "$name: rc=$? $(grep -c '"Achieved Occupancy"' "$out/$name.csv") launches"
}
step ncu_smem_config 120 --section Occupancy --section LaunchStats "$build/ncu_smem_config"
step ncu_clusters 60 "${sections[@]}" "$build/ncu_clusters"
step ncu_torch_model 90 "${sections[@]}" python3 "$here/ncu_torch_model.py"
for p in ncu_tails ncu_smem ncu_imbalance ncu_templates; do
  step "$p" 60 "${sections[@]}" "$build/$p"
done
for p in ncu_cupy ncu_torch ncu_torch_nn ncu_triton; do
  step "$p" 60 "${sections[@]}" python3 "$here/$p.py"
done
step ncu_sweep 150 "${sections[@]}" "$build/ncu_sweep"
wc -c "$out"/*.csv
