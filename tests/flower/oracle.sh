#!/usr/bin/env bash
# The differential test against the kernel's own flower classifier.
#
# Usage: tests/flower/oracle.sh [--ci] [--seed N] [BUILD_DIR]
#
# The same tc lines go into cls_flower (tc -batch; clsact ingress of veth
# d0 in one namespace) and, through `xtcam import tc`, into xtcam (XDP on
# veth d0 in a second namespace); the same frames are sent into both d0s
# from their peers p0; each rule's packet count (`tc -s -j filter show`,
# `xtcam -j rule show`) must grow by the same number on both sides.  Each
# round's filters are also read back from the kernel with `tc -j filter
# show`, and `xtcam import tc` of that JSON must give the rules the import
# of the lines gave.  The
# rules, frames and comparison are build/tests/flower-oracle's
# (tests/flower/oracle.c).  Rounds: "gen", 2000 generated rules
# (each its own pref, in xtcam's (prio, handle) order, so that no two share
# a flower instance) and frames made to hit and to miss them (untagged,
# VLAN and QinQ, IPv4 and IPv6 with options and extension headers,
# fragments, ARP, MPLS, PPPoE, other ethertypes); then the rules and frames
# of the kernel's selftest tc_flower.sh in ten rounds (oracle.c says how
# its lines are translated).  The last rule of each round matches
# everything, so every frame is counted once on each side (a lost frame is
# an error, not a silent pass).  --ci: fewer rules and frames, and four of
# the selftest's rounds.
#
# Where cls_flower and xtcam differ on purpose, the frames or rules that
# would show it are not sent or not made (all of it is here and in
# oracle.c, nowhere else):
#  * First fragments of TCP, UDP, SCTP, ICMP, ICMPv6: cls_flower dissects no
#    fragment's L4 header (no ports, TCP flags, ICMP type/code); xtcam reads
#    a first fragment's.  First fragments of protocols without such fields
#    are sent.
#  * Later fragments carry no L4 header: cls_flower's L4 key is then all
#    zeros, xtcam's L4 fields are absent.  Later fragments are sent, and
#    every generated rule with L4 matches rejects zeros in one of them
#    (port 0, type/code or tcp_flags that only 0 satisfies).
#  * Padding beyond the IP datagram: the flow dissector reads it as L4,
#    xtcam does not.  Every frame ends where its datagram ends.
#  * `eth_type` is xtcam's own keyword (the L3 protocol after any tags):
#    tc lines have `protocol`, the outermost ethertype, only.
#  * An all-zero address mask (`src_ip 0.0.0.0/0`, `::/0`): cls_flower
#    leaves the address out of the filter's dissector but still wants the
#    address type set, so the rule matches nothing; in xtcam it matches
#    every frame of the family.  No generated prefix is /0.
# The guest's iproute2 and Linux 6.1 have no l2tpv3_sid, spi, cfm or
# ip_proto l2tp|esp|ah: those are not in this test.
#
# Needs root, cls_flower, act_gact (modules are loaded); exits 77 (skip)
# saying why when the kernel has no cls_flower (the host's kernel: run it
# in the stock vmtest guest, vmtest/run.sh -k stock -- tests/flower/oracle.sh).
# Exit 0 when every rule agrees, 1 when one does not (with the first frame
# that shows it), 2 on a setup error.
set -uo pipefail

ci=0 seed=1
while [ $# -gt 0 ]; do
	case $1 in
	--ci) ci=1 ;;
	--seed) seed=$2; shift ;;
	-*) echo "usage: $0 [--ci] [--seed N] [BUILD_DIR]" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
build=${1:-${BUILD:-build}}
bin=$build/tests/flower-oracle
xt=${XTCAM_BIN:-$build/xtcam}
if [ "$ci" = 1 ]; then nrules=${FLOWER_ORACLE_RULES:-600} nframes=${FLOWER_ORACLE_FRAMES:-600}
else nrules=${FLOWER_ORACLE_RULES:-2000} nframes=${FLOWER_ORACLE_FRAMES:-1500}; fi
# the match groups of the generated rules
keys=${FLOWER_ORACLE_KEYS:-base,arp,mpls,pppoe,vlans,indev}

say() { echo "flower-oracle: $*"; }
skip() { say "SKIP: $*"; exit 77; }
die() { say "ERROR: $*"; exit 2; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, tc, BPF)"
[ -x "$bin" ] && [ -x "$xt" ] || die "$bin or $xt not built (make all)"
modprobe -q cls_flower 2>/dev/null; modprobe -q act_gact 2>/dev/null
# the kernel is the judge: without cls_flower there is nothing to compare with
probe=fop$$
ip netns add "$probe" || die "ip netns add"
ip netns exec "$probe" tc qdisc add dev lo clsact 2>/dev/null &&
	ip netns exec "$probe" tc filter add dev lo ingress pref 1 protocol all flower skip_hw \
		action pass 2>/dev/null
ok=$?
ip netns del "$probe"
[ "$ok" = 0 ] || skip "the kernel ($(uname -r)) has no cls_flower or act_gact (run it in the stock vmtest guest: vmtest/run.sh -k stock -- $0)"

export XTCAM_INSTANCE=flower-oracle-$$
nt=fo$$t nx=fo$$x
work=$(mktemp -d)
cleanup() {
	"$xt" flush >/dev/null 2>&1
	ip netns del "$nt" 2>/dev/null
	ip netns del "$nx" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# in the xtcam namespace: nsenter, not ip netns exec, which remounts /sys
# and hides the pinned maps
inx() { nsenter --net=/run/netns/"$nx" "$@"; }
int() { ip netns exec "$nt" "$@"; }

for ns in "$nt" "$nx"; do
	ip netns add "$ns" || die "ip netns add $ns"
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link set lo up
	ip -n "$ns" link add d0 type veth peer name p0 || die "veth in $ns"
	for d in d0 p0; do
		# no GRO (one frame, one count), tags in the frame (XDP sees them)
		ip netns exec "$ns" ethtool -K "$d" gro off txvlan off rxvlan off >/dev/null 2>&1
		ip -n "$ns" link set "$d" up
	done
done
# a burst must not overflow the backlog of the receiving CPU
sysctl -qw net.core.netdev_max_backlog=100000 2>/dev/null

"$bin" gen "$work" "$seed" "$nrules" "$nframes" "$keys" || die "generating the rules"

# xtcam: the first round's import makes the block and binds it (restore
# of its block and bind lines); each round's rules then go in with one
# `rule load ... replace` (restore adds them one at a time)
xt_load() {  # ROUND FIRST
	local r=$1 out=$work/$1.save
	if ! inx "$xt" import tc "$work/$r.tc" >"$out" 2>"$work/$r.import.err"; then
		say "FAIL: xtcam import tc refused round $r:"
		sed 's/^/  /' "$work/$r.import.err" | head -20
		return 1
	fi
	if [ "$2" = 1 ]; then
		grep -v '^rule add ' "$out" >"$work/setup.save"
		inx "$xt" restore "$work/setup.save" ||
			{ say "FAIL: xtcam restore of round $r's import (no rules)"; return 1; }
	fi
	sed -n 's/^rule add d0 //p' "$out" >"$work/$r.rules"
	inx "$xt" rule load d0 "$work/$r.rules" replace ||
		{ say "FAIL: xtcam rule load of round $r's import"; return 1; }
}

# tc's JSON of the round's filters as the kernel holds them (`tc -j filter
# show`): `xtcam import tc` of it must give the rules the import of the
# lines gave (the same prio, handle and match, in the same order).  The
# kernel shows a match on the first MPLS label stack entry only as
# mpls_label, mpls_tc, mpls_bos, mpls_ttl however it was written, so
# `mpls lse depth 1 ...` alone is compared in that spelling; and it does
# not show a vlan_ethtype or cvlan_ethtype ppp_ses (it keeps it as the
# PPPoE key's type): without pppoe_sid or ppp_proto beside it, the JSON
# cannot say it was there, so it is left out of the comparison.
shown_as_json() {
	awk '{
		if ($0 !~ / (pppoe_sid|ppp_proto) /)
			gsub(/ c?vlan_ethtype ppp_ses/, "")
		if (match($0, / mpls lse depth 1( (label|tc|bos|ttl) [0-9]+)*/)) {
			seg = substr($0, RSTART, RLENGTH); rest = substr($0, RSTART + RLENGTH)
			if (rest !~ /^ lse /) {
				sub(/^ mpls lse depth 1/, "", seg)
				gsub(/ label /, " mpls_label ", seg); gsub(/ tc /, " mpls_tc ", seg)
				gsub(/ bos /, " mpls_bos ", seg); gsub(/ ttl /, " mpls_ttl ", seg)
				$0 = substr($0, 1, RSTART - 1) seg rest
			}
		}
		print
	}'
}
xt_json() {  # ROUND
	local r=$1
	if ! int tc -j filter show dev d0 ingress >"$work/$r.json" 2>"$work/$r.json.err"; then
		say "ERROR: tc -j filter show of round $r:"; head -5 "$work/$r.json.err"; return 2
	fi
	if ! inx "$xt" import tc "$work/$r.json" dev d0 >"$work/$r.jsave" 2>"$work/$r.json.err"; then
		say "FAIL $r: xtcam import tc refused tc -j filter show's JSON:"
		sed 's/^/  /' "$work/$r.json.err" | head -10
		return 1
	fi
	if ! diff <(grep '^rule add ' "$work/$r.save" | shown_as_json) <(grep '^rule add ' "$work/$r.jsave" | shown_as_json) \
		>"$work/$r.json.diff"; then
		say "FAIL $r: the import of tc's JSON differs from the import of its lines (< lines, > JSON):"
		head -10 "$work/$r.json.diff" | sed 's/^/  /'
		return 1
	fi
}

# both sides at once (the guest has two CPUs)
snap() {  # NAME
	local a b
	int tc -s -j filter show dev d0 ingress >"$work/$1.tc.json" & a=$!
	inx "$xt" -j rule show d0 >"$work/$1.xt.json" & b=$!
	wait $a && wait $b
}

send() {  # FILE [FIRST COUNT]
	local a b
	int "$bin" send p0 "$@" >/dev/null & a=$!
	inx "$bin" send p0 "$@" >/dev/null & b=$!
	wait $a && wait $b
}

# a frame of ROUND on which rule PREF differs: bisect the frames, each step
# sending one half to both sides (a difference of the whole is the sum of
# the halves' differences)
first_frame() {  # ROUND PREF NFRAMES
	local r=$1 p=$2 lo=0 n=$3 half d
	while [ "$n" -gt 1 ]; do
		half=$((n / 2))
		snap b || return 1
		send "$work/$r.frames" "$lo" "$half" || return 1
		sleep 0.3
		snap a || return 1
		d=$("$bin" delta "$work"/b.tc.json "$work"/a.tc.json "$work"/b.xt.json "$work"/a.xt.json "$p")
		if [ "${d% *}" = "${d#* }" ]; then
			lo=$((lo + half)) n=$((n - half))
		else
			n=$half
		fi
	done
	snap b && send "$work/$r.frames" "$lo" 1 && sleep 0.3 && snap a || return 1
	d=$("$bin" delta "$work"/b.tc.json "$work"/a.tc.json "$work"/b.xt.json "$work"/a.xt.json "$p")
	say "the first frame that shows it: frame $lo of round $r: cls_flower counts it $(cut -d' ' -f1 <<<"$d") time(s) on pref $p, xtcam $(cut -d' ' -f2 <<<"$d")"
	sed -n "$((lo + 1))p" "$work/$r.desc" | sed 's/^/  frame /'
	say "cls_flower's rule:"
	int tc filter show dev d0 ingress pref "$p" | sed 's/^/  /'
	say "xtcam's rule:"
	inx "$xt" rule show d0 | grep -E "(^| )prio $p( |$)" | sed 's/^/  /'
}

status=0 first=1 t0=$SECONDS
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
while read -r r <&3; do
	# --ci: the generated round and a few of the selftest's
	if [ "$ci" = 1 ]; then
		case $r in gen|st-dst_mac+pcp+mpls_label|st-dst_ip+mpls_bos|st-ip_flags|st-indev) ;; *) continue ;; esac
	fi
	nf=$(wc -l <"$work/$r.desc")
	t1=$(now)
	int tc qdisc del dev d0 clsact 2>/dev/null
	sed 's/^tc //' "$work/$r.tc" >"$work/$r.batch"
	if ! int tc -batch "$work/$r.batch" >"$work/$r.tc.err" 2>&1; then
		say "ERROR: tc refused round $r:"; head -5 "$work/$r.tc.err"; exit 2
	fi
	t2=$(now)
	xt_load "$r" "$first" || { status=1; break; }
	first=0
	xt_json "$r"
	case $? in 0) ;; 1) status=1 ;; *) exit 2 ;; esac
	t3=$(now)
	snap before || die "snapshot"
	t4=$(now)
	send "$work/$r.frames" || die "sending round $r's frames"
	t5=$(now)
	# wait until both sides have counted every frame (or give up)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		snap after || die "snapshot"
		out=$("$bin" compare "$work"/before.tc.json "$work"/after.tc.json \
			"$work"/before.xt.json "$work"/after.xt.json "$work/$r.tc" "$nf")
		rc=$?
		grep -q '^FRAMES LOST' <<<"$out" || break
		sleep 0.5
	done
	times="tc $(dt "$t1" "$t2") s, xtcam $(dt "$t2" "$t3") s, snapshot $(dt "$t3" "$t4") s, send $(dt "$t4" "$t5") s, compare $(dt "$t5" "$(now)") s"
	if [ "$rc" = 0 ]; then
		say "ok   $r: $(tail -1 <<<"$out") ($times)"
		continue
	fi
	status=1
	say "FAIL $r: $(grep -v '^FRAMES LOST' <<<"$out" | tail -1) ($times)"
	grep -E '^(DIFFER|MISSING|FRAMES)' <<<"$out" | head -20 | sed 's/^/  /'
	p=$(grep -m1 '^DIFFER' <<<"$out" | sed -E 's/^DIFFER pref ([0-9]+):.*/\1/')
	[ -n "$p" ] && first_frame "$r" "$p" "$nf"
done 3<"$work/rounds"
say "$( [ $status = 0 ] && echo passed || echo FAILED ): $( [ $ci = 1 ] && echo "--ci, ")seed $seed, $nrules generated rules, $nframes frames, key groups $keys, $((SECONDS - t0)) s"
exit $status
