#!/usr/bin/env bash
# Records, on a machine with an NVIDIA GPU, the CUDA toolkit and CuPy, the
# device output the CPU tests replay, and runs the probe benchmark:
#
#   lint/        real compiler output of lint_kernels.cu: cubins, ptxas -v logs,
#                cuobjdump --dump-resource-usage and -elf listings, a fatbin
#                object, and toolchain.txt
#   probe*.json  `tuneadvise probe` results (default and --quick)
#   verify.json  `tuneadvise verify` of a real cubin
#   native.toml  `tuneadvise probe --save`
#   checks.txt   compute-sanitizer memcheck/racecheck of every probe kernel,
#                `--arch native`, the no-GPU message, and benchmarks/probes.py
#
# Usage: tests/gpu/record_probe_run.sh OUTDIR [BABELSTREAM_BINARY]
set -uo pipefail
out=${1:?usage: record_probe_run.sh OUTDIR [BABELSTREAM_BINARY]}
babelstream=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
lint="$work/lint"
mkdir -p "$lint"
ta() { python3 -m tuneadvise.cli "$@"; }
TIMEFORMAT="wall %R s"

{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -2
  python3 -c "import cupy; print('cupy', cupy.__version__)"
} > "$lint/toolchain.txt" 2>&1

cd "$lint"
for sm in 75 80 86 89 90 100 120; do
  nvcc -cubin -arch=sm_$sm -Xptxas -v "$here/lint_kernels.cu" -o lint_sm_$sm.cubin 2> ptxas_sm_$sm.log
  cuobjdump --dump-resource-usage lint_sm_$sm.cubin > cuobjdump_sm_$sm.txt 2>&1
  cuobjdump -elf lint_sm_$sm.cubin 2>&1 | grep -v "^\s*/\*[0-9a-f]*\*/" > elf_sm_$sm.txt
done
nvcc -c -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_120,code=sm_120 -Xptxas -v "$here/lint_kernels.cu" -o lint_multi.o 2> ptxas_multi.log
cuobjdump --dump-resource-usage lint_multi.o > cuobjdump_multi.txt 2>&1
nvcc -cubin -arch=sm_90 -maxrregcount=40 -DNAMED_BARRIERS=5 -DSTATIC_BYTES=8448 -Xptxas -v \
  "$here/occupancy_kernels.cu" -o barriers_sm_90.cubin 2> ptxas_barriers_sm_90.log
cuobjdump --dump-resource-usage barriers_sm_90.cubin > cuobjdump_barriers_sm_90.txt 2>&1
cuobjdump -elf barriers_sm_90.cubin 2>&1 | grep -v "^\s*/\*[0-9a-f]*\*/" > elf_barriers_sm_90.txt
cd "$repo"
tar -czf "$out/lint.tgz" -C "$work" lint

{
  echo "== no GPU visible"; CUDA_VISIBLE_DEVICES= python3 -m tuneadvise.cli probe; echo "exit $?"
  echo "== default suite"; time python3 -m tuneadvise.cli probe --format json > "$out/probe.json"; echo "exit $?"
  echo "== quick suite"; time python3 -m tuneadvise.cli probe --quick --format json > "$out/probe_quick.json"; echo "exit $?"
  echo "== save"; ta probe --only compute,dram --save "$out/native.toml" --format json > /dev/null; echo "exit $?"
  ta occupancy --arch native --registers 64 --block-size 256 --shared-mem 12K --format json; echo "exit $?"
  ta occupancy --spec-file "$out/native.toml" --arch native --registers 64 --block-size 256 --format json; echo "exit $?"
  echo "== verify"; ta verify "$lint/lint_sm_90.cubin" --format json > "$out/verify.json"; echo "exit $?"
  ta verify "$lint/barriers_sm_90.cubin" --format table; echo "exit $?"
  echo "== benchmark"
  python3 benchmarks/probes.py --cold ${babelstream:+--babelstream "$babelstream"}
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer $tool"
    compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 python3 -m tuneadvise.cli probe --tiny --format json > /dev/null
    echo "exit $?"
  done
} > "$out/checks.txt" 2>&1
rm -rf "$work"
