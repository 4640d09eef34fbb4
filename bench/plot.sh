#!/usr/bin/env bash
# Plots of bench/results: live.png (Mpps against rules, one line per system),
# testrun.png (ns per packet against rules), masks.png (ns per packet
# against distinct masks), cp.png (the latency of a single change against
# rules, xtcam and nftables).  Reads live.dat, testrun.md, masks.md, cp.dat.
# Usage: bench/plot.sh RESULTS_DIR
set -euo pipefail
dir=${1:-bench/results}
sfx=
command -v gnuplot >/dev/null || { echo "plot: gnuplot missing (make deps)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stamp="$(uname -r), $(nproc) shared CPUs, $(date -u +%Y-%m-%d)"

# --- live -------------------------------------------------------------------
if [ -f "$dir/live$sfx.dat" ]; then
	d=$dir/live$sfx.dat
	for s in xtcam xdp-filter nft-linear nft-set; do
		awk -v s=$s '$1 == s { print $2, $3 }' "$d" >"$tmp/$s"
	done
	floor=$(awk '$1 == "floor" { print $3 }' "$d")
	pfloor=$(awk '$1 == "parse-floor" { print $3 }' "$d")
	gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output "$dir/live$sfx.png"
set title "Live drop rate through veth, threaded NAPI\\n$stamp; noisy"
set xlabel "rules"
set ylabel "Mpps (median of intervals)"
set logscale x
set logscale y
set xrange [0.7:200000]
set key outside right
set grid
plot ${floor:-1/0} title "XDP\\\\_DROP floor" lw 2 dt 2 lc rgb "black", \
     ${pfloor:-1/0} title "parser floor" lw 2 dt 3 lc rgb "gray40", \
     "$tmp/xtcam" using 1:2 with linespoints lw 2 title "xtcam (native)", \
     "$tmp/xdp-filter" using 1:2 with linespoints lw 2 title "xdp-filter", \
     "$tmp/nft-set" using 1:2 with linespoints lw 2 title "nftables set", \
     "$tmp/nft-linear" using 1:2 with linespoints lw 2 title "nftables linear chain"
EOF
	# the DUT's CPU cost per frame (NAPI thread time), less hurt by sharing
	for s in xtcam xdp-filter nft-linear nft-set; do
		awk -v s=$s '$1 == s { print $2, $4 }' "$d" >"$tmp/$s"
	done
	cfloor=$(awk '$1 == "floor" { print $4 }' "$d")
	cpfloor=$(awk '$1 == "parse-floor" { print $4 }' "$d")
	gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output "$dir/live-cost.png"
set title "Live traffic: DUT CPU time per frame (NAPI thread), veth\\n$stamp; noisy"
set xlabel "rules"
set ylabel "ns per frame"
set logscale x
set logscale y
set xrange [0.7:200000]
set key outside right
set grid
plot ${cfloor:-1/0} title "XDP\\\\_DROP floor" lw 2 dt 2 lc rgb "black", \
     ${cpfloor:-1/0} title "parser floor" lw 2 dt 3 lc rgb "gray40", \
     "$tmp/xtcam" using 1:2 with linespoints lw 2 title "xtcam (native)", \
     "$tmp/xdp-filter" using 1:2 with linespoints lw 2 title "xdp-filter", \
     "$tmp/nft-set" using 1:2 with linespoints lw 2 title "nftables set", \
     "$tmp/nft-linear" using 1:2 with linespoints lw 2 title "nftables linear chain"
EOF
fi

# --- test run: ns/pkt against rules ------------------------------------------
if [ -f "$dir/testrun$sfx.md" ]; then
	d=$dir/testrun$sfx.md
	for m in 1 8 32; do
		awk -F'|' -v m=$m '$2 ~ /xtcam/ && $4 + 0 == m && $6 + 0 > 0 { print $3 + 0, $6 + 0 }' "$d" >"$tmp/m$m"
	done
	fd=$(awk -F'|' '$2 ~ /XDP_DROP/ { print $6 + 0 }' "$d")
	fp=$(awk -F'|' '$2 ~ /parser only/ { print $6 + 0 }' "$d")
	awk -F'|' '$2 ~ /xdp-filter/ && $6 + 0 > 0 { print $3 + 0, $6 + 0 }' "$d" >"$tmp/xf"
	for f in IPv4 IPv6; do
		awk -F'|' -v f=$f '$2 ~ f && $8 + 0 > 0 { print $3 + 0, $8 + 0 }' "$d" >"$tmp/cb$f"
	done
	gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output "$dir/testrun$sfx.png"
set title "Per-packet cost, BPF\\\\_PROG\\\\_TEST\\\\_RUN, mixes of distinct frames\\n$stamp"
set xlabel "rules"
set ylabel "ns per packet (mean of the hit/miss, IPv4/IPv6 mixes)"
set logscale x
set xrange [0.7:2000000]
set yrange [0:*]
set key outside right
set grid
plot ${fd:-1/0} title "XDP\\\\_DROP floor" lw 2 dt 2 lc rgb "black", \
     ${fp:-1/0} title "parser only" lw 2 dt 3 lc rgb "gray40", \
     "$tmp/xf" using 1:2 with linespoints lw 2 title "xdp-filter (dst ports)", \
     "$tmp/m1" using 1:2 with linespoints lw 2 title "xtcam, 1 mask", \
     "$tmp/m8" using 1:2 with linespoints lw 2 title "xtcam, 8 masks", \
     "$tmp/m32" using 1:2 with linespoints lw 2 title "xtcam, 32 masks", \
     "$tmp/cbIPv4" using 1:2 with points pt 7 ps 1.5 title "xtcam, ClassBench-style ACL, IPv4", \
     "$tmp/cbIPv6" using 1:2 with points pt 9 ps 1.5 title "xtcam, ClassBench-style ACL, IPv6"
EOF
fi

# --- masks ----------------------------------------------------------------------
if [ -f "$dir/masks$sfx.md" ]; then
	d=$dir/masks$sfx.md
	plots=""
	for n in $(awk -F'|' '$2 ~ /xtcam/ { print $3 + 0 }' "$d" | sort -un); do
		awk -F'|' -v n=$n '$2 ~ /xtcam/ && $3 + 0 == n && $6 + 0 > 0 { print $4 + 0, $6 + 0, $5 + 0 }' "$d" >"$tmp/n$n"
		plots="$plots${plots:+, }\"$tmp/n$n\" using 1:2 with linespoints lw 2 title \"xtcam, $n rules\""
		plots="$plots, \"$tmp/n$n\" using 1:2:(sprintf(\"%d tuples\", \$3)) with labels offset 0,1 font \",8\" notitle"
	done
	fd=$(awk -F'|' '$2 ~ /XDP_DROP/ { print $6 + 0 }' "$d")
	gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output "$dir/masks$sfx.png"
set title "Cost against distinct masks, BPF\\\\_PROG\\\\_TEST\\\\_RUN\\n$stamp"
set xlabel "distinct masks in the rule set"
set ylabel "ns per packet"
set logscale x 2
set xrange [0.7:800]
set yrange [0:*]
set key outside right
set grid
plot ${fd:-1/0} title "XDP\\\\_DROP floor" lw 2 dt 2 lc rgb "black", $plots
EOF
fi
# --- control plane: single-change latency against rules -----------------------
if [ -s "$dir/cp.dat" ]; then
	d=$dir/cp.dat
	# columns: rules, xtcam add med p99, del med p99, nft add element med p99,
	# delete element med p99, nft add rule med p99; the bars reach the p99
	gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output "$dir/cp.png"
set title "Single change, whole process: median, bar to p99\\n$stamp"
set xlabel "rules in the block / elements in the set / rules in the chain"
set ylabel "ms"
set logscale x
set logscale y
set xrange [500:2000000]
set xtics ("1k" 1000, "10k" 10000, "100k" 100000, "1M" 1000000)
set key outside right
set grid
plot 20 title "20 ms (the target)" lw 2 dt 2 lc rgb "black", \\
     "$d" using 1:2:2:3 with yerrorlines lw 2 title "xtcam rule add", \\
     "$d" using 1:4:4:5 with yerrorlines lw 2 title "xtcam rule del", \\
     "$d" using 1:6:6:7 with yerrorlines lw 2 title "nft add element", \\
     "$d" using 1:8:8:9 with yerrorlines lw 2 title "nft delete element", \\
     "$d" using 1:10:10:11 with yerrorlines lw 2 dt 4 title "nft add rule (chain)"
EOF
fi
ls "$dir"/*.png >&2
