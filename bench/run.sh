#!/usr/bin/env bash
# make bench: every benchmark, bounded in time, results in bench/results/
# (bench/results/quick/ with QUICK=1):
#   testrun.md  per-packet cost, BPF_PROG_TEST_RUN (bench_tr)
#   masks.md    cost against the number of distinct masks (bench_tr -s)
#   live.md     live traffic through veth: xtcam, xdp-filter, nftables, floor
#               (live.csv every interval, live.dat for the plot)
#   load.md     rule load time, single-rule latency, kernel memory
#   *.png       plots (gnuplot)
# Usage: bench/run.sh BUILD_DIR [quick]
set -euo pipefail
build=${1:-build}
mode=${2:-}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (loads BPF programs)" >&2; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
out=bench/results
[ "$mode" = quick ] && out=bench/results/quick
mkdir -p "$out"
q=()
[ "$mode" = quick ] && q=(-q)
start=$(date +%s)
budget=1140
[ "$mode" = quick ] && budget=170
step() { echo "bench: $1 ($(($(date +%s) - start)) s so far)" >&2; }
# bound SECS CMD...: run CMD for at most SECS, and never past the budget
bound() {
	local left=$((budget - ($(date +%s) - start))) t=$1
	shift
	[ $left -lt $t ] && t=$left
	[ $t -gt 0 ] || { echo "bench: out of time before: $*" >&2; return 1; }
	timeout "$t" "$@"
}

# each part has its own bound, the whole under 19 minutes (quick: 3)
step "per-packet cost (BPF_PROG_TEST_RUN)"
bound 480 "$build/bench/bench_tr" "${q[@]}" -b "$build" -o "$out/testrun.md"
step "mask scaling"
bound 240 "$build/bench/bench_tr" "${q[@]}" -s -b "$build" -o "$out/masks.md"
step "live traffic"
bound 420 bench/live.sh "$build" "$out" $mode
step "load time and memory"
bound 300 bench/load.sh "$build" "$out" $mode
step "plots"
bench/plot.sh "$out"
for f in testrun masks live load; do
	echo
	cat "$out/$f.md"
done
step "done"
# the machine and date of this run beside its results, then the page of
# figures from them (docs/performance.md; a quick run's stays beside it)
{ echo "date=$(date -u -d "@$start" '+%Y-%m-%d %H:%M UTC')"; echo "kernel=$(uname -r)"
  echo "cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"; echo "cores=$(nproc)"
  echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"; echo "duration_s=$(($(date +%s) - start))"; } >"$out/meta"
bench/report.sh "$out" "$([ "$mode" = quick ] && echo "$out/performance.md" || echo docs/performance.md)"
