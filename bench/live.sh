#!/usr/bin/env bash
# Live traffic benchmark: bench/gen_live (BPF_PROG_TEST_RUN live frames) in
# namespace xtb-gen sends IPv4+IPv6 UDP over 2048 flows into a veth whose
# peer, in namespace xtb-dut, runs the system under test on threaded NAPI.
# The generator is pinned to CPU 0, the NAPI thread to CPU 1.
#
# Usage: bench/live.sh BUILD_DIR OUT_DIR [quick]
#        bench/live.sh --table SUMMARY META   (the table again, from a run's work files)
# Writes OUT_DIR/live.csv (every interval), OUT_DIR/live.md (medians and
# ratios to the XDP_DROP floor of the same run), OUT_DIR/live.dat (for the
# plot).  Everything it makes is removed on exit, error or not.  Killed
# (make bench's time bound: SIGTERM), it writes the rows it has measured and
# a note saying it stopped.
set -euo pipefail
GEN=xtb-gen DUT=xtb-dut

# live_table SUMMARY META: the Markdown table of a run's summary lines
live_table() {
	local date load0 secs k mode floor
	IFS='|' read -r date load0 secs k mode <"$2"
	floor=$(awk '$1 == "floor" { print $3 }' "$1")
	echo "# Live traffic through veth (BPF_PROG_TEST_RUN live frames generator)"
	echo
	echo "Machine: kernel $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)); date $date."
	echo "Method: bench/gen_live in namespace $GEN (CPU 0) sends 64-byte UDP frames, IPv4 and IPv6,"
	echo "2048 flows, into a veth; its peer in $DUT runs the system on threaded NAPI (CPU 1)."
	echo "Rate = frames the DUT's NAPI consumed per second (all of them dropped), median of $k"
	echo "intervals of ${secs} s; DUT ns/frame = NAPI thread CPU time / frames.  A row is noisy when"
	echo "in one of its intervals others used > 10% of the machine or steal > 2% (see live.csv)."
	echo "Command: \`make bench${mode:+ QUICK=1}\` (bench/live.sh)."
	echo
	echo "NAPI busy = the NAPI thread's CPU time / wall time: below ~90% the DUT was not the"
	echo "bottleneck (the generator was, or NAPI waited for its CPU) and the rate is a lower bound."
	echo "Mpps/core = 1000 / DUT ns/frame: the rate the DUT's CPU cost allows on a core of its own,"
	echo "derived, not measured (it carries the cost of small batches when NAPI is starved)."
	echo "Dropped = share of the frames the DUT consumed that it dropped (XDP drops, or the nft"
	echo "rule's counter).  Others % = CPU time others used, share of the whole machine (median of"
	echo "the intervals).  Load average when the live part started: $load0."
	echo
	echo "| system | rules | Mpps | x floor | DUT ns/frame | Mpps/core | x floor/core | NAPI busy % | dropped % | others % | noisy intervals | generator Mpps |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk -v f="$floor" 'NR == 1 { fc = 1000 / $5 }
		{ printf "| %s | %s | %.3f | %.3f | %.0f | %.2f | %.3f | %s | %s | %s | %s | %.2f |\n",
		  $1, $2, $3, $3 / f, $5, 1000 / $5, 1000 / $5 / fc, $8, $10, $9, $6, $7 }' "$1"
}

if [ "${1:-}" = --table ]; then
	live_table "$2" "$3"
	exit
fi
build=${1:-build}
out=${2:-bench/results}
mode=${3:-}
GEN=xtb-gen DUT=xtb-dut GDEV=xtbgen0 DDEV=xtbdut0 DMAC=02:00:00:00:00:02
XT="$build/xtcam"
export XTCAM_INSTANCE=xtcam-bench
work=bench/work/live
mkdir -p "$work" "$out"

if [ "$mode" = quick ]; then
	SECS=1 K=3 WARM=0.5
	XT_N="1 100000" NFT_LIN="1 1000" NFT_SET="1000" XF_N="1000"
else
	SECS=2 K=5 WARM=1
	XT_N="1 1000 10000 100000" NFT_LIN="1 100 1000 10000" NFT_SET="1 1000 10000"
	XF_N="1 1000 10000"
fi

csv=$out/live.csv
load0=$(cut -d' ' -f1-3 /proc/loadavg)
stopped=0

# write_results [NOTE]: live.md (the table of the rows measured, NOTE below
# it), live.dat
write_results() {
	echo "$(date -u '+%Y-%m-%d %H:%M UTC')|$load0|$SECS|$K|$mode" >"$work/meta"
	if grep -q '^floor ' "$work/summary" 2>/dev/null; then
		live_table "$work/summary" "$work/meta" >"$out/live.md"
	else
		echo "# Live traffic through veth (BPF_PROG_TEST_RUN live frames generator)" >"$out/live.md"
	fi
	[ -z "${1:-}" ] || printf '\n%s\n' "$1" >>"$out/live.md"
	awk '{ print $1, ($2 == "-" ? 0 : $2), $3, $5 }' "$work/summary" >"$out/live.dat" 2>/dev/null || true
}

cleanup() {
	# the results first: the bound's SIGKILL follows in a few seconds
	if [ "$stopped" = 1 ]; then
		write_results "**Stopped early:** killed at its time bound; the rows above are complete, the rest was not measured." || true
		echo "live: stopped early; wrote $out/live.md" >&2
	fi
	ip netns del $GEN 2>/dev/null || true
	ip netns del $DUT 2>/dev/null || true
	"$XT" flush >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'stopped=1; exit 143' TERM
cleanup

rm -f "$csv" "$work/summary"
touch "$work/summary"

# a fresh veth pair: GDEV in GEN, DDEV (GRO on for NAPI without XDP, threaded) in DUT
pair() {
	ip netns del $GEN 2>/dev/null || true
	ip netns del $DUT 2>/dev/null || true
	ip netns add $GEN
	ip netns add $DUT
	ip link add $GDEV netns $GEN type veth peer name $DDEV netns $DUT address $DMAC
	ip -n $GEN link set $GDEV up
	ip -n $DUT link set $DDEV up
	ip netns exec $DUT ethtool -K $DDEV gro on >/dev/null
	ip netns exec $DUT sh -c "echo 1 > /sys/class/net/$DDEV/threaded"
}

napi_pid() {
	ps -eo pid,comm | awk -v d="napi/$DDEV-" 'index($2, d) == 1 { print $1; exit }'
}

# measure SYSTEM RULES: one gen_live run, summary appended to $work/summary
measure() {
	local pid c0 d0 c1 d1 line
	pid=$(napi_pid)
	[ -n "$pid" ] || { echo "live: no NAPI thread for $DDEV" >&2; return 1; }
	taskset -pc 1 "$pid" >/dev/null
	read -r c0 d0 < <(dut_counts)
	line=$(timeout 120 ip netns exec $GEN "$build/bench/gen_live" -b "$build" -i $GDEV -n $DUT \
		-d $DDEV -m $DMAC -c 0 -p "$pid" -t $SECS -k $K -w $WARM -s "$1" -r "$2" -o "$csv")
	read -r c1 d1 < <(dut_counts)
	# the share of consumed frames that were dropped, warm-up included
	line="$line $(awk -v c=$((c1 - c0)) -v d=$((d1 - d0)) 'BEGIN { printf "%.1f", c ? 100 * d / c : 0 }')"
	echo "$line" | tee -a "$work/summary"
}

# xtcam rule file: N rules, decoys first (prio 10, IPv4 and IPv6 exact
# destination + port, never matched), the two that match the traffic last
xt_rules() {
	awk -v n="$1" 'BEGIN {
		for (i = 1; i <= n - 2; i++) {
			p = 10 + i % 60000
			if (i % 2)
				printf "prio 10 eth_type ipv4 ip_proto udp dst_ip 172.%d.%d.%d dst_port %d action drop\n", \
					16 + int(i / 65536) % 16, int(i / 256) % 256, i % 256, p
			else
				printf "prio 10 eth_type ipv6 ip_proto udp dst_ip fd01::%x:%x dst_port %d action drop\n", \
					int(i / 65536), i % 65536, p
		}
		if (n == 1) {
			print "prio 100 ip_proto udp dst_port 9 action drop"
			exit
		}
		print "prio 100 eth_type ipv4 ip_proto udp dst_ip 198.18.0.1 dst_port 9 action drop"
		print "prio 100 eth_type ipv6 ip_proto udp dst_ip fd00::1 dst_port 9 action drop"
	}'
}

# nftables netdev ingress chain with N rules, only the last matches
nft_linear() {
	{
		echo "table netdev xtb {"
		echo " chain in { type filter hook ingress device $DDEV priority 0; policy accept;"
		awk -v n="$1" 'BEGIN { for (i = 1; i < n; i++) printf "  udp dport %d drop\n", 10 + i % 60000 }'
		echo "  udp dport 9 counter drop"
		echo " }"
		echo "}"
	} >"$work/nft.conf"
}

# nftables: one rule and an N-element set (9 and N-1 others)
nft_set() {
	{
		echo "table netdev xtb {"
		echo " set ports { type inet_service;"
		awk -v n="$1" 'BEGIN { printf "  elements = { 9"; for (i = 1; i < n; i++) printf ", %d", 10 + i; print " }" }'
		echo " }"
		echo " chain in { type filter hook ingress device $DDEV priority 0; policy accept;"
		echo "  udp dport @ports counter drop"
		echo " }"
		echo "}"
	} >"$work/nft.conf"
}

# "CONSUMED DROPPED" so far on the DUT's veth: frames its NAPI took, and
# frames dropped by XDP plus those counted by the nftables rule that drops
dut_counts() {
	local c d n
	read -r c d < <(ip netns exec $DUT ethtool -S $DDEV |
		awk '$1 == "rx_queue_0_xdp_packets:" { c = $2 } $1 == "rx_queue_0_xdp_drops:" { d = $2 }
		     END { print c + 0, d + 0 }')
	n=$(ip netns exec $DUT nft list table netdev xtb 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") { print $(i + 1); exit } }' || true)
	echo "$c $((d + ${n:-0}))"
}

echo "live: $(nproc) CPUs, ${SECS}s x $K intervals per row, load average $load0" >&2

# 1. the floors: XDP_DROP only
pair
ip -n $DUT link set $DDEV xdpdrv obj "$build/bench/floor_drop.bpf.o" sec xdp
measure floor -
# the parser floor: xtcam's parser (reads every header), then drop
ip -n $DUT link set $DDEV xdpdrv off
ip -n $DUT link set $DDEV xdpdrv obj "$build/bench/floor_parse.bpf.o" sec xdp
measure parse-floor -

# 2. xtcam, native, one block, rule sets swapped in with `rule load replace`
pair
cap=131072
"$XT" block add bench capacity $cap default pass >/dev/null
for n in $XT_N; do
	xt_rules "$n" >"$work/xt.rules"
	if [ "$n" = "$(echo $XT_N | cut -d' ' -f1)" ]; then
		"$XT" rule load bench "$work/xt.rules" >/dev/null
		"$XT" bind bench dev $DDEV netns $DUT mode native >/dev/null
	else
		"$XT" rule load bench "$work/xt.rules" replace >/dev/null
	fi
	measure xtcam "$n"
done
"$XT" flush >/dev/null

# 3. xdp-filter, native, udp only, N destination ports (9 and N-1 others);
# the CLI adds the first (port 9), bench/xf_fill the rest in one batch
pair
ip netns exec $DUT sh -c "mount -t bpf bpf /sys/fs/bpf && xdp-filter load $DDEV -m native -f udp,ipv4,ipv6 && xdp-filter port 9" >/dev/null
for n in $XF_N; do
	"$build/bench/xf_fill" $DUT $DDEV "$n"
	measure xdp-filter "$n"
done

# 4. nftables, no XDP program (NAPI through GRO), linear chain, then set
for kind in linear set; do
	list=$NFT_LIN
	[ $kind = set ] && list=$NFT_SET
	for n in $list; do
		pair
		nft_$kind "$n"
		ip netns exec $DUT nft -f "$work/nft.conf"
		measure "nft-$kind" "$n"
	done
done
ip netns del $GEN
ip netns del $DUT

# the table: medians, ratio to the floor of this run
write_results
echo "live: wrote $out/live.md" >&2
