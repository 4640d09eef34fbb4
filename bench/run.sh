#!/usr/bin/env bash
# make bench: runs the benchmarks and writes bench/results/*.md.
# Usage: bench/run.sh BUILD_DIR [quick]
set -euo pipefail
build=${1:-build}
mode=${2:-}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (loads BPF programs)" >&2; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mkdir -p bench/results
args=(-b "$build")
[ "$mode" = quick ] && args+=(-q)
out=bench/results/testrun${mode:+-$mode}.md
"$build/bench/bench_tr" "${args[@]}" -o "$out"
cat "$out"
