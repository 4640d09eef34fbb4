#!/usr/bin/env bash
# make bench: every benchmark, bounded in time, results in bench/results/
# (bench/results/quick/ with QUICK=1):
#   testrun.md  per-packet cost, BPF_PROG_TEST_RUN (bench_tr)
#   masks.md    cost against the number of distinct masks (bench_tr -s)
#   live.md     live traffic through veth: xtcam, xdp-filter, nftables, floor
#               (live.csv every interval, live.dat for the plot)
#   load.md     rule load time, single-rule latency, kernel memory
#   cp.md       the control plane: a single change against rules, xtcam and
#               nftables (cp.dat for the plot); load, show, del of a big block
#   api.md      the library API for controllers: single changes and batches
#               on a big bound block; xtcam -batch of 10,000 lines
#   apply.md    xtcam apply of a 100k-rule file: unchanged, and 1% changed
#   *.png       plots (gnuplot)
# Usage: bench/run.sh BUILD_DIR [quick]
#
# Each part has a time bound, and the whole a budget (31.5 minutes; quick: 4.5);
# a part never runs past the budget.  A part learns its bound from
# BENCH_SECS (bench_tr sizes its plan to it).  A part that runs out of time
# writes what it has measured with a note saying so (killed at its bound:
# SIGTERM, then SIGKILL 10 s later), and the next part still runs.  Exit
# status: 0 when every part ran to its end, 1 otherwise (see the summary).
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
# the bounds of the parts, seconds: per-packet cost, masks, live, load,
# control plane, apply
if [ "$mode" = quick ]; then
	budget=270 b_tr=45 b_masks=30 b_live=60 b_load=35 b_cp=60 b_apply=40
else
	budget=1890 b_tr=360 b_masks=180 b_live=330 b_load=270 b_cp=600 b_apply=150
fi
# the library API for controllers (api.md), after the rest, with a budget
# of its own on top
if [ "$mode" = quick ]; then
	b_api=60
else
	b_api=420
fi
budget=$((budget + b_api))
# a file older than this was not written by this run
marker=$(mktemp)
trap 'rm -f "$marker"' EXIT
summary=() status=0
step() { echo "bench: $1 ($(($(date +%s) - start)) s so far)" >&2; }

# part NAME FILE SECS CMD...: run CMD for at most SECS, never past the
# budget.  FILE is the part's result: when CMD did not write it (killed
# before its first line, or not run), it says so instead of holding the
# figures of an earlier run.
part() {
	local name=$1 file=$2 t=$3 left rc=0 what
	shift 3
	left=$((budget - ($(date +%s) - start)))
	[ $left -lt "$t" ] && t=$left
	step "$name (bound $t s)"
	if [ "$t" -gt 0 ]; then
		BENCH_SECS=$t timeout -k 10 "$t" "$@" || rc=$?
	else
		rc=124
	fi
	case $rc in
	0) what="done" ;;
	124|137) what="stopped at its bound of $t s"; status=1 ;;
	*) what="failed (exit $rc)"; status=1 ;;
	esac
	if ! [ "$file" -nt "$marker" ]; then
		printf '# %s\n\n**Not measured:** the part %s before it wrote anything.\n' \
			"$name" "$what" >"$file"
	elif [ $rc = 0 ] && grep -q '^\*\*Stopped early' "$file"; then
		what="stopped early (its own time plan)"
	fi
	summary+=("$name: $what after $(($(date +%s) - start)) s in all; $file")
}

part "per-packet cost (BPF_PROG_TEST_RUN)" "$out/testrun.md" $b_tr \
	"$build/bench/bench_tr" "${q[@]}" -b "$build" -o "$out/testrun.md"
part "mask scaling" "$out/masks.md" $b_masks \
	"$build/bench/bench_tr" "${q[@]}" -s -b "$build" -o "$out/masks.md"
part "live traffic" "$out/live.md" $b_live bench/live.sh "$build" "$out" $mode
part "load time and memory" "$out/load.md" $b_load bench/load.sh "$build" "$out" $mode
rm -f "$out/cp.dat"
part "control plane" "$out/cp.md" $b_cp bench/cp.sh "$build" "$out" $mode
part "apply" "$out/apply.md" $b_apply bench/apply.sh "$build" "$out" $mode
part "library API" "$out/api.md" $b_api bench/api.sh "$build" "$out" $mode
step "plots"
bench/plot.sh "$out" || { summary+=("plots: failed"); status=1; }
for f in testrun masks live load cp apply api; do
	echo
	cat "$out/$f.md"
done
echo
for l in "${summary[@]}"; do
	echo "bench: $l" >&2
done
step "done"
# the machine and date of this run beside its results, then the page of
# figures from them (docs/performance.md; a quick run's stays beside it)
{ echo "date=$(date -u -d "@$start" '+%Y-%m-%d %H:%M UTC')"; echo "kernel=$(uname -r)"
  echo "cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"; echo "cores=$(nproc)"
  echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"; echo "duration_s=$(($(date +%s) - start))"; } >"$out/meta"
bench/report.sh "$out" "$([ "$mode" = quick ] && echo "$out/performance.md" || echo docs/performance.md)" || status=1
exit $status
