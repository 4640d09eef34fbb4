#!/usr/bin/env bash
# The library API for controllers (bench/api.c) on a bound block of N
# rules: single changes each committed and atomic batches of 1000, for /32
# addresses and for a ClassBench-style set, with the latency of a change;
# then `xtcam -batch` of 10,000 single `rule add` lines on the same block.
#
# Usage: bench/api.sh BUILD_DIR OUT_DIR [quick]
# Environment:
#   XTCAM_BENCH_CP_MAX   the rules in the block (default 1000000; quick:
#                        10000), as bench/cp.sh
#   XTCAM_BENCH_CP_BIND  the XDP mode of the binding: native (default) or
#                        generic
#   XTCAM_BENCH_API_SINGLES  single changes of each kind (default 2000;
#                        quick: 500), half adds, half their deletes
#   XTCAM_BENCH_API_BATCHES  batches of 1000 of each kind (default 20;
#                        quick: 4)
# Writes OUT_DIR/api.md.  Everything it makes (the namespace with its
# veths, the xtcam instance, the rule files) is removed on exit.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mode=${3:-}
NS=xtb-api
XT="$build/xtcam"
API="$build/bench/api"
export XTCAM_INSTANCE=xtcam-bench-api
work=bench/work/api
[ -x "$API" ] || { echo "api: $API missing (make all)" >&2; exit 1; }
if [ "$mode" = quick ]; then
	max=${XTCAM_BENCH_CP_MAX:-10000} singles=${XTCAM_BENCH_API_SINGLES:-500}
	batches=${XTCAM_BENCH_API_BATCHES:-4}
else
	max=${XTCAM_BENCH_CP_MAX:-1000000} singles=${XTCAM_BENCH_API_SINGLES:-2000}
	batches=${XTCAM_BENCH_API_BATCHES:-20}
fi
bmode=${XTCAM_BENCH_CP_BIND:-native}
case $bmode in native|generic) ;; *) echo "api: XTCAM_BENCH_CP_BIND: native or generic" >&2; exit 2 ;; esac
case $max in ''|*[!0-9]*) echo "api: XTCAM_BENCH_CP_MAX: a number" >&2; exit 2 ;; esac

cleanup() {
	"$XT" flush >/dev/null 2>&1 || true
	ip netns del $NS 2>/dev/null || true
	[ -d "/sys/fs/bpf/$XTCAM_INSTANCE" ] && rm -rf "/sys/fs/bpf/$XTCAM_INSTANCE"
	rm -rf "$work"
	rm -f "/run/$XTCAM_INSTANCE.lock"
}
trap cleanup EXIT
trap 'exit 130' INT HUP
trap 'exit 143' TERM
cleanup
mkdir -p "$work" "$out"

ip netns add $NS
ip -n $NS link add xtba0 type veth peer name xtba1
ip -n $NS link set xtba0 up
ip -n $NS link set xtba1 up

# the block's rules: N /32 sources in 10.0.0.0/8, 1000 priorities
awk -v n="$max" 'BEGIN { for (i = 1; i <= n; i++) printf "prio %d eth_type ipv4 src_ip 10.%d.%d.%d action drop\n", 1 + i % 1000, int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$work/big.rules"
cap=$((max + max / 8 + 65536))
"$XT" block add big capacity $cap default pass >/dev/null
"$XT" bind big dev xtba0 netns $NS mode "$bmode" >/dev/null
t0=$(date +%s.%N)
"$XT" rule load big "$work/big.rules" >/dev/null
t1=$(date +%s.%N)
echo "api: loaded $max rules in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s" >&2

{
	echo "# Library API for controllers"
	echo
	echo "Machine: kernel $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)); date $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Both CPUs are shared with other work (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "A block of $max rules (/32 sources, 1000 priorities, capacity $cap) bound $bmode to a veth in a namespace."
	echo "bench/api.c, one context (\`xtcam_ctl_open\`) for all of it: $singles single changes of each kind"
	echo "(half adds, each committed, then their deletes) and $batches batches of 1000 adds then as many of"
	echo "deletes, each batch one commit.  /32: \`src_ip 198.18.x.y\` rules given as text; ClassBench-style:"
	echo "rules of the generator in tests/lib/classbench.c (IPv4 5-tuples with port ranges, several masks,"
	echo "new tuples made and filled) given as struct xtcam_rule.  The rate counts adds and deletes; the"
	echo "latency of a change is the time to its commit (of a batch's change: its batch's commit)."
	echo "Command: \`make bench${mode:+ QUICK=1}\` (bench/api.sh; \`XTCAM_BENCH_CP_MAX\` sets the block's size)."
	echo
	echo "| set | mode | changes | s | changes/s | p50 ms | p99 ms |"
	echo "|---|---|---:|---:|---:|---:|---:|"
} >"$out/api.md"
"$API" -b big -n "$singles" -B "$batches" -s 1000 -o "$out/api.md"

# xtcam -batch: 10,000 lines, each one `rule add`, each its own commit
awk 'BEGIN { for (i = 1; i <= 10000; i++) printf "rule add big prio 9 handle %d src_ip 198.20.%d.%d action drop\n", 2000000000 + i, int(i / 256) % 256, i % 256 }' >"$work/batch.txt"
t0=$(date +%s.%N)
"$XT" -batch "$work/batch.txt" >/dev/null
t1=$(date +%s.%N)
bt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
{
	echo
	echo "| command | lines | s | lines/s |"
	echo "|---|---:|---:|---:|"
	echo "| \`xtcam -batch\` of single \`rule add\` lines, block of $max | 10000 | $bt | $(awk -v t="$bt" 'BEGIN { printf "%.0f", 10000 / t }') |"
} >>"$out/api.md"
echo "api: xtcam -batch of 10000 lines: $bt s" >&2
echo "api: wrote $out/api.md" >&2
