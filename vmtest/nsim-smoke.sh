#!/bin/bash
# netdevsim BPF offload basics, for the nsim guest (a kernel with
# CONFIG_NETDEVSIM=y): create netdevsim devices with one and with two ports,
# load XDP programs offloaded to a port (bpftool ... dev), attach them in
# offload mode (ip link ... xdpoffload), check ip/bpftool report them,
# read an offloaded map, run native and offloaded programs at once, and
# check what netdevsim refuses (its debugfs knobs are under
# /sys/kernel/debug/netdevsim/netdevsimN/, per device, and .../ports/N/).
# Exit 77 (skip) without netdevsim.
# Usage: vmtest/nsim-smoke.sh [XDP_TEST_OBJ]  (default $XTCAM_VMTEST_XDP_OBJ)
set -euo pipefail
obj=${1:-${XTCAM_VMTEST_XDP_OBJ:-build/vmtest/xdp-test.bpf.o}}
[ -f "$obj" ] || { echo "nsim-smoke: no $obj (vmtest/run.sh builds it)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "nsim-smoke: needs root"; exit 77; }
bus=/sys/bus/netdevsim
[ -w $bus/new_device ] || { echo "nsim-smoke: no netdevsim in $(uname -r)"; exit 77; }

pin=/sys/fs/bpf/nsim-smoke-$$
ids=()
fails=0
# each result line shows the seconds since the previous one
last=$(date +%s%N)
res() { local now; now=$(date +%s%N); printf '%-5s %5.1fs %s\n' "$1" "$(( (now - last) / 1000000 ))e-3" "$2"; last=$now; }
ok()  { res ok "$*"; }
bad() { res FAIL "$*"; fails=$((fails + 1)); }
check() {  # check DESCRIPTION CMD...
	local what=$1 out; shift
	if out=$("$@" 2>&1); then ok "$what"; else bad "$what"; printf '%s\n' "$out" | sed 's/^/      /'; fi
}
refused() {  # refused DESCRIPTION CMD...: ok when CMD fails
	local what=$1 out; shift
	if out=$("$@" 2>&1); then bad "$what (was accepted)"; else
		ok "$what: $(printf '%s\n' "$out" | grep -v 'Retrying without BTF' |
			grep -m1 -iE 'error|fail|not|invalid' || echo refused)"
	fi
}
cleanup() {
	local id
	for id in "${ids[@]}"; do echo "$id" >$bus/del_device 2>/dev/null || true; done
	rm -rf "$pin" 2>/dev/null || true
}
trap cleanup EXIT

# new_device ID PORTS: creates netdevsim<ID>, prints its port netdevs in
# port order (by phys_port_name: p0 p1 ... or as this kernel numbers them)
new_device() {
	local id=$1 ports=$2 n d=$bus/devices/netdevsim$1
	echo "$id $ports" >$bus/new_device
	local nets=()
	for _ in $(seq 50); do  # the netdevs appear asynchronously
		nets=("$d"/net/*)
		[ -e "${nets[0]}" ] && [ ${#nets[@]} -ge "$ports" ] && break
		sleep 0.1
	done
	for n in "${nets[@]}"; do
		n=${n##*/}
		echo "$(cat "/sys/class/net/$n/phys_port_name" 2>/dev/null) $n"
	done | sort -V | awk '{ print $2 }'
}

t0=$(date +%s.%N)
ids=(11 12)  # for cleanup (new_device runs in a subshell)
mapfile -t one < <(new_device 11 1)
[ ${#one[@]} = 1 ] || { echo "nsim-smoke: netdevsim11 has ${#one[@]} ports, wanted 1"; exit 1; }
ok "netdevsim device 11 with 1 port: ${one[0]} ($(cat "/sys/class/net/${one[0]}/phys_port_name"))"
mapfile -t two < <(new_device 12 2)
[ ${#two[@]} = 2 ] || { echo "nsim-smoke: netdevsim12 has ${#two[@]} ports, wanted 2"; exit 1; }
ok "netdevsim device 12 with 2 ports: ${two[*]} ($(cd /sys/class/net && cat "${two[0]}/phys_port_name" "${two[1]}/phys_port_name" | xargs))"
a=${one[0]} b0=${two[0]} b1=${two[1]}
for d in "$a" "$b0" "$b1"; do ip link set "$d" up; done

# --- offloaded load, attach, report -----------------------------------------
mkdir -p "$pin/a" "$pin/b"  # bpftool creates only the last level of a pin path
check "bpftool prog load ... dev $a (offloaded prog + map)" \
	bpftool prog load "$obj" "$pin/a/count" type xdp dev "$a" pinmaps "$pin/a/maps"
check "bpftool prog show: offloaded_to $a" sh -c "bpftool prog show pinned $pin/a/count | grep -q 'offloaded_to $a'"
check "offloaded map: bpftool map update + dump" sh -c "
	bpftool map update pinned $pin/a/maps/vmtest_cnt key 0 0 0 0 value 7 0 0 0 0 0 0 0 &&
	bpftool map dump pinned $pin/a/maps/vmtest_cnt | grep -q 'value: 07 00'"
check "bpftool map show: offloaded map on $a" sh -c "bpftool map show pinned $pin/a/maps/vmtest_cnt | grep -q 'offloaded_to $a'"
check "ip link set $a xdpoffload pinned ..." ip link set dev "$a" xdpoffload pinned "$pin/a/count"
check "ip link show $a: xdpoffload" sh -c "ip link show dev $a | grep -q xdpoffload"
check "bpftool net show: $a offload" sh -c "bpftool net show dev $a | grep -q '^$a(.*) offload id'"
check "native + offloaded at once (xdpmulti)" sh -c "
	ip link set dev $a xdpdrv obj $obj program xdp_pass &&
	ip link show dev $a | grep -q xdpmulti &&
	ip link set dev $a xdpdrv off"
check "detach offloaded" sh -c "ip link set dev $a xdpoffload off && ! ip link show dev $a | grep -q xdpoffload"
check "ip link set $a xdpoffload obj ... (iproute2 loads for the device)" sh -c "
	ip link set dev $a xdpoffload obj $obj program xdp_pass &&
	ip -d link show dev $a | grep -q xdpoffload &&
	ip link set dev $a xdpoffload off"

# --- two ports of one device ---------------------------------------------------
check "offload to $b0 (first port of netdevsim12)" \
	bpftool prog load "$obj" "$pin/b/count" type xdp dev "$b0" pinmaps "$pin/b/maps"
check "attach on $b0" ip link set dev "$b0" xdpoffload pinned "$pin/b/count"
if out=$(ip link set dev "$b1" xdpoffload pinned "$pin/b/count" 2>&1); then
	ok "a program offloaded to $b0 also attaches on $b1 (same device)"
	ip link set dev "$b1" xdpoffload off
else
	echo "info  a program offloaded to $b0 does not attach on $b1: $out"
fi
refused "a program offloaded to $b0 on $a (another device)" \
	ip link set dev "$a" xdpoffload pinned "$pin/b/count"
ip link set dev "$b0" xdpoffload off

# --- what netdevsim refuses --------------------------------------------------
pkt=$(mktemp)
{ printf '\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x08\x00'; head -c 46 /dev/zero; } >"$pkt"
refused "BPF_PROG_TEST_RUN on an offloaded program" \
	bpftool prog run pinned "$pin/a/count" data_in "$pkt" repeat 1
rm -f "$pkt"
knob=/sys/kernel/debug/netdevsim/netdevsim11/bpf_bind_verifier_accept  # per device
if [ -w "$knob" ]; then
	echo N >"$knob"
	refused "load with bpf_bind_verifier_accept=N" \
		bpftool prog load "$obj" "$pin/a/refused" type xdp dev "$a"
	echo Y >"$knob"
else
	bad "debugfs knob $knob missing"
fi

printf 'nsim-smoke: %d failure(s) on %s in %.1f s\n' "$fails" "$(uname -r)" \
	"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
[ "$fails" = 0 ]
