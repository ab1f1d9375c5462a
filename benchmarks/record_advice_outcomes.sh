#!/usr/bin/env bash
# Runs the GPU half of benchmarks/advice_outcomes.py on a machine with an NVIDIA GPU,
# ncu and CuPy: times every variant of BUILD_DIR's plan (built beforehand with
# `advice_outcomes.py build`), then profiles each baseline once with Nsight Compute.
#   OUT/advice-outcomes.json        the timings, with each build's ptxas figures
#   OUT/advice-own.csv, OUT/advice-polybench.csv   `ncu --csv` of the baselines
# Usage: benchmarks/record_advice_outcomes.sh BUILD_DIR OUT
set -uo pipefail
build=${1:?usage: record_advice_outcomes.sh BUILD_DIR OUT}
out=${2:?usage: record_advice_outcomes.sh BUILD_DIR OUT}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
TIMEFORMAT="%R s"
echo "== timing"
time timeout 240 python3 "$here/advice_outcomes.py" time "$build" "$out/advice-outcomes.json"
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis
          --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats)
for suite in own polybench; do
  echo "== ncu $suite"
  time timeout 120 ncu --csv --clock-control none "${sections[@]}" \
    python3 "$here/advice_outcomes.py" launch "$build" --suite "$suite" > "$out/advice-$suite.csv" 2> "$out/advice-$suite.err"
  echo "ncu $suite: rc=$? $(grep -c '"Achieved Occupancy"' "$out/advice-$suite.csv") launches"
done
