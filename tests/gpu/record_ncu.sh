#!/usr/bin/env bash
# Records, on a machine with an NVIDIA GPU, Nsight Compute (ncu) and CUDA,
# CuPy, PyTorch and Triton, the Nsight Compute exports that the CPU tests of
# the ncu reader replay (tests/fixtures/ncu/):
#
#   <program>.csv        `ncu --csv` details page (Occupancy, LaunchStats,
#                        SpeedOfLight sections) exactly as ncu printed it
#   <program>.log        each launch's carveout preference, as the program
#                        set it (the export does not show it)
#   processes.csv        one export holding launches of two processes
#   smem_import*.csv     a saved .ncu-rep converted by `ncu --import --csv`
#                        (default units, and --print-units base)
#   device.txt           the device's properties the engine needs
#   ncu_sweep.csv        the shared-memory configuration sweep (LaunchStats only)
#
# Usage: tests/gpu/record_ncu.sh OUTDIR [sweep]   (sweep: only ncu_sweep.csv)
set -uo pipefail
out=${1:?usage: record_ncu.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
build=$(mktemp -d)
sections=(--section Occupancy --section LaunchStats --section SpeedOfLight)
prof() { ncu --csv --clock-control none "${sections[@]}" "$@"; }

for p in ncu_tails ncu_smem ncu_imbalance ncu_templates ncu_sweep; do
  nvcc -O2 -arch=sm_90 -o "$build/$p" "$here/$p.cu" || exit 1
done
TIMEFORMAT="%R s"
echo "== ncu_sweep"
time NCU_MANIFEST="$out/ncu_sweep.log" ncu --csv --clock-control none --section LaunchStats --section Occupancy \
  "$build/ncu_sweep" > "$out/ncu_sweep.csv" 2> "$out/ncu_sweep.err"
[ "${2:-}" = sweep ] && exit 0
"$here/describe_device.sh" > "$out/device.txt" 2>&1

for p in ncu_tails ncu_smem ncu_imbalance ncu_templates; do
  echo "== $p"; time NCU_MANIFEST="$out/$p.log" prof "$build/$p" > "$out/$p.csv" 2> "$out/$p.err"
done
for p in ncu_cupy ncu_torch ncu_torch_nn ncu_triton; do
  echo "== $p"; time NCU_MANIFEST="$out/$p.log" prof python3 "$here/$p.py" > "$out/$p.csv" 2> "$out/$p.err"
done
echo "== processes"
time NCU_MANIFEST="$out/processes.log" prof --target-processes all \
  python3 "$here/ncu_processes.py" "$build/ncu_templates" "python3 $here/ncu_cupy.py" > "$out/processes.csv" 2> "$out/processes.err"
echo "== import"
NCU_MANIFEST="$out/smem_import.log" ncu --clock-control none "${sections[@]}" -o "$out/smem" "$build/ncu_smem" > "$out/smem_record.txt" 2>&1
ncu --import "$out/smem.ncu-rep" --csv > "$out/smem_import.csv" 2> "$out/smem_import.err"
ncu --import "$out/smem.ncu-rep" --csv --print-units base > "$out/smem_import_base.csv" 2>> "$out/smem_import.err"
wc -l "$out"/*.csv
for f in "$out"/*.csv; do echo "$f $(grep -c '"Achieved Occupancy"' "$f") launches"; done
