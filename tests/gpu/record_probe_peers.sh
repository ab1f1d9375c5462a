#!/usr/bin/env bash
# Builds the peers (BabelStream's CUDA backend, gpu-benches' gpu-stream and
# gpu-l2-cache) from their sources, runs benchmarks/probes.py beside them on
# this GPU, records the cluster probe for tests/fixtures/h100/clusters.json,
# and runs compute-sanitizer memcheck and racecheck over the probe kernels.
#
# Usage: tests/gpu/record_probe_peers.sh OUTDIR PEERS_DIR
#   PEERS_DIR holds babelstream/src (main.cpp, Stream.h, StreamModels.h,
#   Unit.h, cuda/CUDAStream.{cu,h}) and gpu-benches (its top-level headers,
#   gpu-metrics/, gpu-stream/main.cu, gpu-l2-cache/main.cu), as the projects
#   publish them.
set -uo pipefail
out=${1:?usage: record_probe_peers.sh OUTDIR PEERS_DIR}
peers=$(cd "${2:?usage: record_probe_peers.sh OUTDIR PEERS_DIR}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(mktemp -d)
mkdir -p "$out"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
cuda=$(dirname "$(dirname "$(command -v nvcc)")")

( cd "$peers/babelstream/src" && nvcc -O3 -std=c++17 -arch=sm_$arch --extended-lambda -DCUDA -DGRID_STRIDE \
    -DUNROLL_FACTOR=4 -I. -Icuda main.cpp cuda/CUDAStream.cu -lnvidia-ml -o "$bin/babelstream" ) > "$out/build_babelstream.log" 2>&1 &
( cd "$peers/gpu-benches/gpu-stream" && nvcc -std=c++20 -O3 -arch=sm_$arch main.cu -o "$bin/cuda-stream" -lcuda -lnvidia-ml ) \
    > "$out/build_gpu_stream.log" 2>&1 &
( cd "$peers/gpu-benches/gpu-l2-cache" && nvcc -std=c++17 -O3 -arch=sm_$arch -I"$cuda/extras/CUPTI/include" main.cu \
    -o "$bin/cuda-l2-cache" -L"$cuda/extras/CUPTI/lib64" -lcupti -lcuda -lnvidia-ml -lnvperf_host -lnvperf_target \
    -Xlinker -rpath -Xlinker "$cuda/extras/CUPTI/lib64" ) > "$out/build_gpu_l2_cache.log" 2>&1 &
wait
ls -l "$bin" > "$out/binaries.txt"

peer_args=()
[ -x "$bin/babelstream" ] && peer_args+=(--babelstream "$bin/babelstream")
[ -x "$bin/cuda-stream" ] && peer_args+=(--gpu-stream "$bin/cuda-stream")
[ -x "$bin/cuda-l2-cache" ] && peer_args+=(--gpu-l2-cache "$bin/cuda-l2-cache")
( cd "$repo" && timeout 420 python3 benchmarks/probes.py "${peer_args[@]}" --json "$out/benchmark.json" ) \
    > "$out/benchmark.txt" 2>&1
python3 -m tuneadvise.cli probe --only cluster --format json > "$out/cluster.json" 2> "$out/cluster.err"

for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 -m tuneadvise.cli probe --tiny --only compute,dram,curve,l2,shared,latency,launch,cluster --format json \
    > "$out/sanitizer_$tool.json" 2> "$out/sanitizer_$tool.txt"
  echo "$tool exit $?" >> "$out/sanitizer_$tool.txt"
done

# Several devices: the multi-device path with this GPU listed twice, and verify on a named device.
python3 -m tuneadvise.cli probe --device 0,0 --only shared,launch --format json > "$out/device_twice.json" 2> "$out/device_twice.err"
echo "exit $?" >> "$out/device_twice.err"
nvcc -cubin -arch=sm_$arch "$repo/tests/gpu/occupancy_kernels.cu" -o "$bin/occupancy_kernels.cubin" > /dev/null 2>&1 \
  && python3 -m tuneadvise.cli verify --device 0 --format json "$bin/occupancy_kernels.cubin" > "$out/verify_device0.json" 2>&1
echo "verify exit $?" >> "$out/verify_device0.json"
nvcc -cubin -arch=sm_$arch -I"$repo/probes/kernels" "$repo/probes/kernels/cluster.cu" -o "$bin/cluster.cubin" > /dev/null 2>&1 \
  && python3 -m tuneadvise.cli verify --device 0 --format table "$bin/cluster.cubin" > "$out/verify_cluster.txt" 2>&1
echo "verify exit $?" >> "$out/verify_cluster.txt"
python3 -m tuneadvise.cli probe --only compute,latency,curve,cluster --save "$out/native.toml" --format json \
  > "$out/save.json" 2> "$out/save.err"
python3 -m tuneadvise.cli occupancy --spec-file "$out/native.toml" --arch native -r 32 -b 256 --bytes-in-flight 8 \
  --cluster-size 16 --format table > "$out/native_advice.txt" 2>&1
tar -czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
