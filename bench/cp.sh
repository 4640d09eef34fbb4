#!/usr/bin/env bash
# The control plane: the cost of a single change against the number of
# rules, for xtcam and nftables timed the same way (bench/ptime: whole
# processes, wall time and peak RSS from wait4), and the big operations on
# a block of the largest size: rule load, rule show, block del.
#
# Usage: bench/cp.sh BUILD_DIR OUT_DIR [quick]
# Environment:
#   XTCAM_BENCH_CP_MAX   the largest size (default 1000000; quick: 10000);
#                        sizes are 1k, 10k, 100k, 1M up to it
#   XTCAM_BENCH_CP_BIND  the XDP mode of the bindings: native (default) or
#                        generic
#   XTCAM_BENCH_CP_RUNS  the most runs of a single change, 3-254 (default 25;
#                        quick: 9); fewer when they take more than the
#                        budget of a measure (30 s; quick: 3 s), never
#                        fewer than 3
#   XTCAM_BENCH_CP_LOADS the loads of the largest block, 1-9 (default 3;
#                        quick: 1), each into a block made anew once the
#                        last one is deleted and the machine is quiet; the
#                        median is reported
# A load is timed with ptime -d: what it leaves behind (the finisher of a
# load of more than 65,536 rules, which writes its second copies holding
# the lock) is waited for, reported (when it was done, from the command's
# end) and counted in the peak RSS.
# Writes OUT_DIR/cp.md (a row at a time; killed by make bench's time bound,
# it adds a note saying it stopped) and OUT_DIR/cp.dat (for bench/plot.sh).
# Everything it makes (the namespace with its veths and nftables tables,
# the xtcam instance, the rule files) is removed on exit, error or not.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mode=${3:-}
NS=xtb-cp
XT="$build/xtcam"
PT="$build/bench/ptime"
export XTCAM_INSTANCE=xtcam-bench-cp
work=bench/work/cp
[ -x "$PT" ] || { echo "cp: $PT missing (make all)" >&2; exit 1; }

if [ "$mode" = quick ]; then
	max=${XTCAM_BENCH_CP_MAX:-10000} runs=${XTCAM_BENCH_CP_RUNS:-9} tb=3
else
	max=${XTCAM_BENCH_CP_MAX:-1000000} runs=${XTCAM_BENCH_CP_RUNS:-25} tb=30
fi
loads=${XTCAM_BENCH_CP_LOADS:-$([ "$mode" = quick ] && echo 1 || echo 3)}
case $loads in [1-9]) ;; *) echo "cp: XTCAM_BENCH_CP_LOADS: 1 to 9" >&2; exit 2 ;; esac
# run i adds 198.51.100.i
case $runs in ''|*[!0-9]*) runs=0 ;; esac
[ "$runs" -ge 3 ] && [ "$runs" -le 254 ] || { echo "cp: XTCAM_BENCH_CP_RUNS: 3 to 254" >&2; exit 2; }
bmode=${XTCAM_BENCH_CP_BIND:-native}
case $bmode in native|generic) ;; *) echo "cp: XTCAM_BENCH_CP_BIND: native or generic" >&2; exit 2 ;; esac
sizes=
for n in 1000 10000 100000 1000000; do
	[ "$n" -le "$max" ] && sizes="$sizes $n"
done
[ -n "$sizes" ] || { echo "cp: XTCAM_BENCH_CP_MAX must be at least 1000" >&2; exit 2; }
max=${sizes##* }

# rest: the tables of the loads and of the big block, from what has been
# measured ("-" for the rest); at the end, or when the part is stopped
first=1000
rest() {
	local r_add r_del n
	rest_done=1
	[ -f "$out/cp.dat" ] || return 0
	r_add=$(awk -v n="$max" -v f="$first" '$1 == n { a = $2 } $1 == f { b = $2 } END { if (a > 0 && b > 0) printf "%.1fx", a / b; else print "-" }' "$out/cp.dat")
	r_del=$(awk -v n="$max" -v f="$first" '$1 == n { a = $4 } $1 == f { b = $4 } END { if (a > 0 && b > 0) printf "%.1fx", a / b; else print "-" }' "$out/cp.dat")
	{
		echo
		echo "## Loads at each size"
		echo
		echo "\`xtcam rule load\` of the N rules into an empty bound block (below the largest size, with the"
		echo "block of $max rules beside it) and \`nft -f\` of the N-element set (its table, chain and rule"
		echo "included) and of the chain of N rules, one run each (the largest block: the median of its loads).  A load of more than 65,536 rules returns"
		echo "at its commit point and leaves its registry's copy and its data path's catch-up to a detached"
		echo "process that holds the lock until it is done: when it was done (from the command's end) is"
		echo "the finisher column, and the peak RSS is the largest of the command's and the finisher's."
		echo
		echo "| rules | xtcam rule load s | its finisher done after s | load peak RSS MiB | nft -f set s | nft -f chain s |"
		echo "|---:|---:|---:|---:|---:|---:|"
		for n in $sizes; do
			echo "| $n | $(ms2s "${XLOAD[$n]:-}") | $(ms2s "${XLFIN[$n]:-}") | $(mib "${XLRSS[$n]:-}") | $(ms2s "${NSET[$n]:-}") | $(ms2s "${NCHAIN[$n]:-}") |"
		done
		echo
		echo "## The block of $max rules"
		echo
		echo "| measure | value |"
		echo "|---|---:|"
		echo "| rules | $max |"
		echo "| rule add, against ${first} rules (medians) | $r_add |"
		echo "| rule del, against ${first} rules (medians) | $r_del |"
		echo "| rule load into an empty bound block, s | $(ms2s "$big_load") |"
		echo "| rule load, its runs (the median above), s | $(for l in "${LOADS[@]}"; do ms2s "$l"; echo; done | paste -sd, - | sed 's/,/, /g') |"
		echo "| rule load, its finisher done after, s | $(ms2s "$big_load_fin") |"
		echo "| rule load, peak RSS MiB (command and finisher) | $(mib "$big_load_rss") |"
		echo "| rule show, first line s | $(ms2s "$big_first") |"
		echo "| rule show, all s | $(ms2s "$big_show") |"
		echo "| rule show, peak RSS MiB | $(mib "$big_show_rss") |"
		echo "| rule show, lines printed | ${big_show_lines:--} |"
		echo "| rule show, runs | ${big_show_runs:--} |"
		echo "| unbind, s | $(ms2s "$big_unbind") |"
		echo "| block del (unbound), s | $(ms2s "$big_del") |"
		echo "| block del, peak RSS MiB | $(mib "$big_del_rss") |"
		echo "| block del, its sweep of the registry done after, s | $(ms2s "$big_sweep") |"
		echo "| nft -f of a set of as many elements, s | $(ms2s "$nft_big_load") |"
		echo "| nft -f of that set, peak RSS MiB | $(mib "$nft_big_rss") |"
	} >>"$out/cp.md"
}
stopped=0 rest_done=1
big_load='' big_load_rss='' big_load_fin='' big_show='' big_first='' big_show_rss='' big_show_lines='' big_show_runs=''
big_unbind='' big_del='' big_del_rss='' big_sweep='' nft_big_load='' nft_big_rss=''
declare -A XLOAD=() XLRSS=() XLFIN=() NSET=() NCHAIN=()
LOADS=()
cleanup() {
	local rc=$?
	[ "$rest_done" = 1 ] || rest
	if [ "$stopped" = 1 ] && [ -f "$out/cp.md" ]; then
		printf '\n%s\n' "**Stopped early:** killed at its time bound; the rows above are complete, the rest was not measured." >>"$out/cp.md"
		echo "cp: stopped early; wrote $out/cp.md" >&2
	elif [ "$rc" != 0 ] && [ -f "$out/cp.md" ]; then
		printf '\n%s\n' "**Stopped early:** interrupted or failed (exit $rc); the rows above are complete, the rest was not measured." >>"$out/cp.md"
	fi
	"$XT" flush >/dev/null 2>&1 || true
	ip netns del $NS 2>/dev/null || true
	# a flush that failed (a command killed mid-commit) leaves the pins:
	# the instance is this script's own
	if [ -d "/sys/fs/bpf/$XTCAM_INSTANCE" ]; then
		echo "cp: flush left /sys/fs/bpf/$XTCAM_INSTANCE; removing it" >&2
		rm -rf "/sys/fs/bpf/$XTCAM_INSTANCE"
	fi
	rm -rf "$work"
	rm -f "/run/$XTCAM_INSTANCE.lock"
}
trap cleanup EXIT
trap 'exit 130' INT HUP
trap 'stopped=1; exit 143' TERM
cleanup
mkdir -p "$work" "$out"

# two veth pairs: xtbc0 carries the block of the largest size, xtbc2 the
# block of each size in turn (and the nftables tables)
ip netns add $NS
ip -n $NS link add xtbc0 type veth peer name xtbc1
ip -n $NS link add xtbc2 type veth peer name xtbc3
for d in xtbc0 xtbc1 xtbc2 xtbc3; do
	ip -n $NS link set $d up
done

# rules FILE N: N rules of one mask, IPv4 source address /32 -> drop, in
# 1000 priorities (the addresses of the nftables sets below)
addr() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "10.%d.%d.%d\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }'; }
rules() { addr "$2" | awk '{ printf "prio %d eth_type ipv4 src_ip %s action drop\n", 1 + NR % 1000, $1 }' >"$1"; }
# nft_set FILE TABLE DEV N: a netdev table with an N-element set of the
# same addresses and one rule that drops them on DEV's ingress
nft_set() {
	{
		echo "table netdev $2 {"
		echo " set a { type ipv4_addr; elements = {"
		addr "$4" | awk '{ printf "%s  %s", (NR > 1 ? ",\n" : ""), $1 } END { print "" }'
		echo " } }"
		echo " chain in { type filter hook ingress device $3 priority 0; policy accept;"
		echo "  ip saddr @a drop"
		echo " }"
		echo "}"
	} >"$1"
}
# nft_chain FILE N: a netdev chain of N rules, one address each
nft_chain() {
	{
		echo "table netdev xtbcc {"
		echo " chain in { type filter hook ingress device xtbc2 priority 1; policy accept;"
		addr "$2" | awk '{ printf "  ip saddr %s drop\n", $1 }'
		echo " }"
		echo "}"
	} >"$1"
}

# pt KEY ARGS...: run ptime, its output lines in the variable P (and the
# log); val LINE KEY: the value of KEY on line LINE of P
pt() {
	local what=$1
	shift
	P=$("$PT" "$@")
	printf '%s:\n%s\n' "$what" "$P" >>"$work/../cp.log"
}
val() { echo "$P" | sed -n "${1}p" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
ms2s() { awk -v m="$1" 'BEGIN { if (m == "") print "-"; else printf "%.2f", m / 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.0f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
: >"$work/../cp.log"

{
	echo "# Control plane: single changes, load, show, delete"
	echo
	echo "Machine: kernel $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)); date $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Both CPUs are shared with other work (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "Every figure is the wall time of whole processes (\`bench/ptime\`: fork, exec, wait4; peak RSS from"
	echo "wait4's rusage), xtcam and nft alike.  Blocks are bound $bmode to veths in a namespace; rules and"
	echo "set elements are IPv4 source addresses (/32, one mask, 1000 priorities for xtcam)."
	echo "A single change is one \`rule add\` (a new address, prio 7, explicit handle) then its \`rule del\`,"
	echo "on a bound block of N rules while a bound block of $max rules is present beside it (at"
	echo "$max the change is on that block); nftables: \`nft add element\` then \`nft delete element\`"
	echo "on an N-element set (a table with a $max-element set beside it), and \`nft add rule\` on a"
	echo "netdev chain of N rules.  Up to $runs runs a measure; one that has run ${tb} s stops once it has"
	echo "3 runs.  p99 is the nearest rank (with fewer than 100 runs, the slowest)."
	echo "Largest block: $max rules."
	echo "Command: \`make bench${mode:+ QUICK=1}\` (bench/cp.sh; \`XTCAM_BENCH_CP_MAX\` sets the largest size)."
	echo
	echo "## Single changes"
	echo
	echo "| rules | xtcam add ms | add p99 ms | xtcam del ms | del p99 ms | runs | nft add element ms | add element p99 ms | nft delete element ms | delete element p99 ms | nft runs | add x nft | del x nft | nft add rule ms (chain of N) | add rule p99 ms | add rule runs |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$out/cp.md"
: >"$out/cp.dat"
rest_done=0

# the block of the largest size: created, bound, loaded (timed), shown
# (timed); it stays beside the smaller blocks
cap() { echo $(($1 + $1 / 8 + 1024)); }
# quiet: until the CPUs were idle 90% of a second (a block deleted leaves
# the kernel freeing its maps for a few seconds), at most 30 s
quiet() {
	local i a b
	for i in $(seq 30); do
		a=$(awk '/^cpu / { printf "%.0f %.0f\n", $2 + $3 + $4 + $7 + $8, $5 }' /proc/stat)
		sleep 1
		b=$(awk '/^cpu / { printf "%.0f %.0f\n", $2 + $3 + $4 + $7 + $8, $5 }' /proc/stat)
		awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
			busy = y[1] - x[1]; idle = y[2] - x[2];
			exit !(busy + idle > 0 && busy <= (busy + idle) / 10) }' && return 0
	done
	return 0
}
# sweep_wait: until the detached sweep of a `block del big` is done (it
# lets go of the lock before it sweeps), at most 300 s
sweep_wait() {
	for _ in $(seq 3000); do
		pgrep -f "^$XT block del big\$" >/dev/null || return 0
		sleep 0.1
	done
}
# median VALUES...
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
rules "$work/big.rules" "$max"
fins=() rsss=()
for l in $(seq "$loads"); do
	if [ "$l" -gt 1 ]; then
		"$XT" unbind big dev xtbc0 netns $NS >/dev/null
		"$XT" block del big >/dev/null
		sweep_wait
	fi
	"$XT" block add big capacity "$(cap "$max")" default pass >/dev/null
	"$XT" bind big dev xtbc0 netns $NS mode "$bmode" >/dev/null
	quiet
	pt "load $max ($l)" -n 1 -d -- "$XT" rule load big "$work/big.rules"
	LOADS+=("$(val 1 med_ms)") rsss+=("$(val 1 rss_max_kb)") fins+=("$(val 1 after_med_ms)")
	flock "/run/$XTCAM_INSTANCE.lock" true
done
big_load=$(median "${LOADS[@]}") big_load_rss=$(printf '%s\n' "${rsss[@]}" | sort -n | tail -1)
big_load_fin=$(median "${fins[@]}")
XLOAD[$max]=$big_load XLRSS[$max]=$big_load_rss XLFIN[$max]=$big_load_fin
pt "show $max" -n 3 -m 1 -T "$tb" -f -- "$XT" rule show big
big_show=$(val 1 med_ms) big_first=$(val 1 first_med_ms) big_show_rss=$(val 1 rss_max_kb)
big_show_lines=$(val 1 lines) big_show_runs=$(val 1 runs)
echo "cp: xtcam load and show of $max done" >&2
# nftables: a table with a set of the largest size beside the small ones
nft_set "$work/big.nft" xtbcb xtbc0 "$max"
pt "nft -f set $max" -n 1 -N $NS -- nft -f "$work/big.nft"
nft_big_load=$(val 1 med_ms) nft_big_rss=$(val 1 rss_max_kb)
NSET[$max]=$nft_big_load

add_args() { echo rule add "$1" prio 7 handle 4000000@i@ eth_type ipv4 src_ip 198.51.100.@i@ action drop; }
for n in $sizes; do
	# xtcam: the block of N rules (at the largest size, the big block)
	b=big
	if [ "$n" != "$max" ]; then
		b=small
		rules "$work/small.rules" "$n"
		"$XT" block add small capacity "$(cap "$n")" default pass >/dev/null
		"$XT" bind small dev xtbc2 netns $NS mode "$bmode" >/dev/null
		pt "load $n" -n 1 -d -- "$XT" rule load small "$work/small.rules"
		XLOAD[$n]=$(val 1 med_ms) XLRSS[$n]=$(val 1 rss_max_kb) XLFIN[$n]=$(val 1 after_med_ms)
	fi
	# shellcheck disable=SC2046
	pt "xtcam add/del $n" -n "$runs" -T "$tb" -- "$XT" $(add_args $b) ::: "$XT" rule del $b handle 4000000@i@
	xa=$(val 1 med_ms) xa99=$(val 1 p99_ms) xd=$(val 2 med_ms) xd99=$(val 2 p99_ms) xr=$(val 1 runs)
	if [ "$b" = small ]; then
		"$XT" unbind small dev xtbc2 netns $NS >/dev/null
		"$XT" block del small >/dev/null
	fi
	echo "cp: xtcam $n done" >&2
	# nftables: a set of N (at the largest size, the big one), then a chain of N
	t=xtbcb
	if [ "$n" != "$max" ]; then
		t=xtbcs
		nft_set "$work/set.nft" xtbcs xtbc2 "$n"
		pt "nft -f set $n" -n 1 -N $NS -- nft -f "$work/set.nft"
		NSET[$n]=$(val 1 med_ms)
	fi
	pt "nft element $n" -n "$runs" -T "$tb" -N $NS -- nft add element netdev $t a "{ 198.51.100.@i@ }" \
		::: nft delete element netdev $t a "{ 198.51.100.@i@ }"
	na=$(val 1 med_ms) na99=$(val 1 p99_ms) nd=$(val 2 med_ms) nd99=$(val 2 p99_ms) nr=$(val 1 runs)
	[ "$t" = xtbcs ] && ip netns exec $NS nft delete table netdev xtbcs
	nft_chain "$work/chain.nft" "$n"
	pt "nft -f chain $n" -n 1 -N $NS -- nft -f "$work/chain.nft"
	NCHAIN[$n]=$(val 1 med_ms)
	pt "nft add rule $n" -n "$runs" -T "$tb" -N $NS -- nft add rule netdev xtbcc in ip saddr 198.51.100.@i@ drop
	nra=$(val 1 med_ms) nra99=$(val 1 p99_ms) nrr=$(val 1 runs)
	ip netns exec $NS nft delete table netdev xtbcc
	printf '| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" \
		"$xa" "$xa99" "$xd" "$xd99" "$xr" "$na" "$na99" "$nd" "$nd99" "$nr" \
		"$(ratio "$xa" "$na")" "$(ratio "$xd" "$nd")" "$nra" "$nra99" "$nrr" >>"$out/cp.md"
	echo "$n $xa $xa99 $xd $xd99 $na $na99 $nd $nd99 $nra $nra99" >>"$out/cp.dat"
	echo "cp: nftables $n done" >&2
done

# the big block goes: unbind, then block del (timed)
pt "unbind $max" -n 1 -- "$XT" unbind big dev xtbc0 netns $NS
big_unbind=$(val 1 med_ms)
pt "block del $max" -n 1 -- "$XT" block del big
big_del=$(val 1 med_ms) big_del_rss=$(val 1 rss_max_kb)
# a big block's registry entries are swept by a detached process after
# the command: how long until it is done (from the command's end)
t0=$(date +%s%N)
sweep_wait
big_sweep=$(( ($(date +%s%N) - t0) / 1000000 ))
rest
echo "cp: wrote $out/cp.md" >&2
