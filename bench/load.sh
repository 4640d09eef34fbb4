#!/usr/bin/env bash
# Rule load time, single-rule latency and kernel memory: xtcam (`xtcam rule
# load` into a block bound native to a veth), nftables (`nft -f`, a netdev
# ingress chain and a set), xdp-filter (its CLI, one command per rule).
#
# Usage: bench/load.sh BUILD_DIR OUT_DIR [quick]
# Writes OUT_DIR/load.md, a row at a time: killed (make bench's time bound:
# SIGTERM), it adds a note saying it stopped.  Everything it makes is
# removed on exit.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mode=${3:-}
NS=xtb-load DEV=xtbl0
XT="$build/xtcam"
export XTCAM_INSTANCE=xtcam-bench-load
work=bench/work/load
mkdir -p "$work" "$out"

if [ "$mode" = quick ]; then
	# every fresh block is a verifier run of seconds: one load per size
	XT_N="10000 100000" NFT_N="10000" XF_N=50 ADDS=3 LOADS=1
else
	XT_N="10000 100000 1000000" NFT_N="10000 100000" XF_N=500 ADDS=9 LOADS=3
fi

stopped=0
cleanup() {
	"$XT" flush >/dev/null 2>&1 || true
	rm -f "/run/$XTCAM_INSTANCE.lock"
	ip netns del $NS 2>/dev/null || true
	if [ "$stopped" = 1 ] && [ -f "$out/load.md" ]; then
		printf '\n%s\n' "**Stopped early:** killed at its time bound; the rows above are complete, the rest was not measured." >>"$out/load.md"
		echo "load: stopped early; wrote $out/load.md" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'stopped=1; exit 143' TERM
cleanup

ip netns add $NS
ip -n $NS link add $DEV type veth peer name xtbl1
ip -n $NS link set $DEV up
ip -n $NS link set xtbl1 up

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# N rules with few masks (IPv4 and IPv6 exact destination + port, /24 + port range)
xt_rules() {
	awk -v n="$1" 'BEGIN {
		for (i = 1; i <= n; i++) {
			p = 10 + i % 60000
			if (i % 4 == 1)
				printf "prio %d eth_type ipv4 ip_proto udp dst_ip 172.%d.%d.%d dst_port %d action drop\n", \
					1 + i % 1000, 16 + int(i / 65536) % 16, int(i / 256) % 256, i % 256, p
			else if (i % 4 == 3)
				printf "prio %d eth_type ipv4 ip_proto tcp src_ip 10.%d.%d.0/24 dst_port %d action pass\n", \
					1 + i % 1000, int(i / 65536) % 256, int(i / 256) % 256, p
			else
				printf "prio %d eth_type ipv6 ip_proto udp dst_ip fd01::%x:%x dst_port %d action drop\n", \
					1 + i % 1000, int(i / 65536), i % 65536, p
		}
	}'
}

# once a big load's finisher has let go of the writers' lock
settled() {
	flock "/run/$XTCAM_INSTANCE.lock" true
}

# memlock of the maps pinned under a folder, bytes
memlock() {
	local f sum=0 b
	for f in "$1"/*; do
		b=$(bpftool map show pinned "$f" 2>/dev/null | grep -o 'memlock [0-9]*' | awk '{ print $2 }' || true)
		[ -n "$b" ] && sum=$((sum + b))
	done
	echo $sum
}

{
	echo "# Rule load time, single-rule latency, kernel memory"
	echo
	echo "Machine: kernel $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)); date $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Both CPUs are shared with other work (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)):"
	echo "wall times; load: median of $LOADS run(s) into a fresh block (1 at 1M), the rest one run each (adds: median of $ADDS; 3 at 1M)."
	echo "Command: \`make bench${mode:+ QUICK=1}\` (bench/load.sh)."
	echo
	echo "## xtcam"
	echo
	echo "\`xtcam rule load\` of a file into a block bound native to a veth (a quarter IPv4 exact"
	echo "address + port, a quarter IPv4 /24 + port, half IPv6 exact + port; 1000 priorities);"
	echo "check = \`rule load ... check\` (parse and compile, nothing applied); then"
	echo "\`rule add\` and \`rule del\` of one rule on the full block (whole CLI invocations)."
	echo "A load of more than 65,536 rules returns at its commit point, its second copies written"
	echo "after it by a process that holds the lock: load s is the command's, and the next"
	echo "measure starts once that process is done (bench/cp.sh times it)."
	echo "Memory: bpftool's memlock of the block's data path maps (allocated for its capacity)."
	echo
	echo "| rules | capacity | check s | load s | load runs s | rules/s | replace-load s | rule add ms | rule del ms | data path MiB | bytes/rule of capacity |"
	echo "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
} >"$out/load.md"

for n in $XT_N; do
	cap=$((n + n / 8 + 64))
	xt_rules "$n" >"$work/xt.rules"
	"$XT" block add big capacity $cap default pass >/dev/null
	"$XT" bind big dev $DEV netns $NS mode native >/dev/null
	tc0=$(now)
	timeout 300 "$XT" rule load big "$work/xt.rules" check >/dev/null
	tcheck=$(secs $tc0 $(now))
	# the load into an empty block: the median of 3 (1 at 1M) on a fresh
	# block each, since a burst of host load can double one run
	: >"$work/load"
	loads=$LOADS
	[ "$n" -ge 1000000 ] && loads=1
	for i in $(seq 2 $loads); do
		a=$(now)
		timeout 300 "$XT" rule load big "$work/xt.rules" >/dev/null
		b=$(now)
		echo "$(secs $a $b)" >>"$work/load"
		settled
		"$XT" unbind big dev $DEV netns $NS >/dev/null
		"$XT" block del big >/dev/null
		"$XT" block add big capacity $cap default pass >/dev/null
		"$XT" bind big dev $DEV netns $NS mode native >/dev/null
	done
	t0=$(now)
	timeout 300 "$XT" rule load big "$work/xt.rules" >/dev/null
	t1=$(now)
	echo "$(secs $t0 $t1)" >>"$work/load"
	tload=$(median <"$work/load")
	settled
	t1=$(now)
	timeout 300 "$XT" rule load big "$work/xt.rules" replace >/dev/null
	t2=$(now)
	: >"$work/add" ; : >"$work/del"
	adds=$ADDS
	[ "$n" -ge 1000000 ] && adds=3
	for i in $(seq 1 $adds); do
		a=$(now)
		"$XT" rule add big prio 7 handle $((4000000000 + i)) eth_type ipv4 ip_proto udp \
			dst_ip 203.0.113.$i dst_port 53 action drop >/dev/null
		b=$(now)
		"$XT" rule del big handle $((4000000000 + i)) >/dev/null
		c=$(now)
		awk -v a=$a -v b=$b 'BEGIN { print 1000 * (b - a) }' >>"$work/add"
		awk -v a=$b -v b=$c 'BEGIN { print 1000 * (b - a) }' >>"$work/del"
	done
	mem=$(memlock "/sys/fs/bpf/$XTCAM_INSTANCE/big/xdp")
	printf '| %d | %d | %s | %s | %s | %.0f | %s | %.1f | %.1f | %.1f | %.0f |\n' "$n" "$cap" "$tcheck" "$tload" \
		"$(sort -g "$work/load" | tr '\n' ' ' | sed 's/ $//; s/ /, /g')" \
		"$(awk -v n=$n -v t=$tload 'BEGIN { print n / t }')" "$(secs $t1 $t2)" \
		"$(median <"$work/add")" "$(median <"$work/del")" \
		"$(awk -v m=$mem 'BEGIN { print m / 1048576 }')" "$(awk -v m=$mem -v c=$cap 'BEGIN { print m / c }')" \
		>>"$out/load.md"
	"$XT" unbind big dev $DEV netns $NS >/dev/null
	"$XT" block del big >/dev/null
	echo "load: xtcam $n done" >&2
done
reg=$(memlock "/sys/fs/bpf/$XTCAM_INSTANCE")
"$XT" flush >/dev/null
{
	echo
	echo "The registry (pinned under /sys/fs/bpf/$XTCAM_INSTANCE, shared by all blocks) has a memlock"
	echo "of $(awk -v m=$reg 'BEGIN { printf "%.1f", m / 1048576 }') MiB."
	echo
	echo "## nftables"
	echo
	echo "\`nft -f\` of a netdev ingress chain on the veth with N rules (\`udp dport P drop\`), and"
	echo "of one rule with an N-element set (\`ipv4_addr\`); \`nft add rule\` of one more rule."
	echo
	echo "| rules | chain load s | set load s | rule add ms (chain of N) |"
	echo "|---:|---:|---:|---:|"
} >>"$out/load.md"

for n in $NFT_N; do
	{
		echo "table netdev xtb {"
		echo " chain in { type filter hook ingress device $DEV priority 0; policy accept;"
		awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "  udp dport %d drop\n", 10 + i % 60000 }'
		echo " }"
		echo "}"
	} >"$work/chain.nft"
	{
		echo "table netdev xtbs {"
		echo " set a { type ipv4_addr; elements = {"
		awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "%s  10.%d.%d.%d", (i > 1 ? ",\n" : ""), int(i / 65536) % 256, int(i / 256) % 256, i % 256; print "" }'
		echo " } }"
		echo " chain in { type filter hook ingress device $DEV priority 1; policy accept;"
		echo "  ip saddr @a drop"
		echo " }"
		echo "}"
	} >"$work/set.nft"
	t0=$(now)
	timeout 300 ip netns exec $NS nft -f "$work/chain.nft"
	t1=$(now)
	timeout 300 ip netns exec $NS nft -f "$work/set.nft"
	t2=$(now)
	: >"$work/add"
	for i in $(seq 1 $ADDS); do
		a=$(now)
		ip netns exec $NS nft add rule netdev xtb in udp dport 7 drop
		b=$(now)
		awk -v a=$a -v b=$b 'BEGIN { print 1000 * (b - a) }' >>"$work/add"
	done
	printf '| %d | %s | %s | %.1f |\n' "$n" "$(secs $t0 $t1)" "$(secs $t1 $t2)" "$(median <"$work/add")" >>"$out/load.md"
	ip netns exec $NS nft flush ruleset
	echo "load: nftables $n done" >&2
done

# xdp-filter: its CLI, one command per port (bounded: XF_N ports)
t0=$(now)
timeout 300 ip netns exec $NS sh -c "mount -t bpf bpf /sys/fs/bpf && xdp-filter load $DEV -m native -f udp,ipv4,ipv6 &&
	for p in \$(seq 10 $((XF_N + 9))); do xdp-filter port \$p || exit 1; done && xdp-filter unload $DEV" >/dev/null
t1=$(now)
{
	echo
	echo "## xdp-filter"
	echo
	echo "Its CLI, one \`xdp-filter port P\` per rule (bounded to $XF_N rules; load and unload"
	echo "included): $(secs $t0 $t1) s, $(awk -v n=$XF_N -v a=$t0 -v b=$t1 'BEGIN { printf "%.1f", 1000 * (b - a) / n }') ms a rule,"
	echo "so about $(awk -v n=$XF_N -v a=$t0 -v b=$t1 'BEGIN { printf "%.0f", 10000 * (b - a) / n }') s for 10,000 rules."
} >>"$out/load.md"
echo "load: wrote $out/load.md" >&2
