#!/bin/bash
# Checks that the running kernel has what xtcam and its tests need: bpffs
# pinning, kernel BTF, BPF_PROG_TEST_RUN on XDP, the bpf_loop helper,
# network namespaces, veth with native and generic XDP and real traffic,
# tc clsact.  Also reports (without failing) whether libxdp's multi-program
# dispatcher works.  Meant for the vmtest guests (root, a private kernel);
# it also runs on a host as root, cleaning up after itself.
# Usage: vmtest/kernel-check.sh [XDP_TEST_OBJ]  (default $XTCAM_VMTEST_XDP_OBJ)
set -euo pipefail
obj=${1:-${XTCAM_VMTEST_XDP_OBJ:-build/vmtest/xdp-test.bpf.o}}
[ -f "$obj" ] || { echo "kernel-check: no $obj (vmtest/run.sh builds it)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "kernel-check: needs root"; exit 77; }

pin=/sys/fs/bpf/vmtest-check-$$ ns=vmtest-check-$$ va=vmck$$a vb=vmck$$b
fails=0
# each result line shows the seconds since the previous one
last=$(date +%s%N)
res() { local now; now=$(date +%s%N); printf '%-5s %5.1fs %s\n' "$1" "$(( (now - last) / 1000000 ))e-3" "$2"; last=$now; }
ok()  { res ok "$*"; }
bad() { res FAIL "$*"; fails=$((fails + 1)); }
check() {  # check DESCRIPTION CMD...: ok when CMD succeeds (its output shown on failure)
	local what=$1 out; shift
	if out=$("$@" 2>&1); then ok "$what"; else bad "$what"; printf '%s\n' "$out" | sed 's/^/      /'; fi
}
cleanup() {
	ip link del "$va" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$pin" 2>/dev/null || true
}
trap cleanup EXIT
# inside the namespace through nsenter --net: unlike ip netns exec it keeps
# our /sys, so the pinned programs stay visible

echo "kernel $(uname -r); $(bpftool version | head -1); $(ip -V)"

# --- bpffs, BTF, loading ---------------------------------------------------
check "bpffs mounted on /sys/fs/bpf" sh -c 'grep -q " /sys/fs/bpf bpf " /proc/mounts'
check "kernel BTF (/sys/kernel/btf/vmlinux)" test -s /sys/kernel/btf/vmlinux
check "bpftool reads kernel BTF" sh -c 'bpftool btf dump file /sys/kernel/btf/vmlinux format raw | grep -q "STRUCT .xdp_md."'
# bpftool creates only the last level of a pin path; no "." in bpffs names
mkdir -p "$pin"
check "bpftool prog loadall + pin (incl. bpf_loop)" \
	bpftool prog loadall "$obj" "$pin/progs" type xdp pinmaps "$pin/maps"
check "pinned programs visible in bpffs" test -e "$pin/progs/xdp_pass" -a -e "$pin/maps/vmtest_cnt"
probe=$(bpftool feature probe kernel 2>/dev/null || true)
if awk '/helpers supported for program type/ { x = /type xdp:/ } x && /- bpf_loop$/ { f = 1 } END { exit !f }' <<<"$probe"; then
	ok "bpftool feature probe: bpf_loop available to xdp"
else
	bad "bpftool feature probe: no bpf_loop for xdp"
fi

# --- BPF_PROG_TEST_RUN -------------------------------------------------------
pkt=$(mktemp)
# 60 bytes: broadcast, IPv4 ethertype, zeros
{ printf '\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x08\x00'; head -c 46 /dev/zero; } >"$pkt"
test_run() {  # test_run PROG EXPECTED_RETVAL
	local out
	out=$(bpftool prog run pinned "$pin/progs/$1" data_in "$pkt" repeat 10 2>&1) || { echo "$out"; return 1; }
	grep -q "Return value: $2," <<<"$out" || { echo "$out"; return 1; }
}
check "BPF_PROG_TEST_RUN xdp_pass -> XDP_PASS" test_run xdp_pass 2
check "BPF_PROG_TEST_RUN xdp_drop -> XDP_DROP" test_run xdp_drop 1
check "BPF_PROG_TEST_RUN xdp_loop (bpf_loop) -> XDP_PASS" test_run xdp_loop 2
rm -f "$pkt"

# --- namespaces, veth, XDP on veth with traffic -------------------------------
check "ip netns add" ip netns add "$ns"
check "veth pair across namespaces" sh -c "ip link add $va type veth peer name $vb netns $ns &&
	ip addr add 10.199.0.1/24 dev $va && ip link set $va up &&
	ip -n $ns addr add 10.199.0.2/24 dev $vb && ip -n $ns link set $vb up && ip -n $ns link set lo up"
check "ping across the veth pair" sh -c 'for i in 1 2 3; do busybox ping -c 1 -W 2 10.199.0.2 >/dev/null && exit 0; done; exit 1'
check "ip netns exec runs in the namespace" sh -c "ip netns exec $ns ip -o link show $vb | grep -q $vb"

check "native XDP (xdpdrv) on veth: xdp_drop drops" sh -c "
	nsenter --net=/run/netns/$ns ip link set dev $vb xdpdrv pinned $pin/progs/xdp_drop &&
	nsenter --net=/run/netns/$ns ip link show dev $vb | grep -q 'xdp ' &&
	! busybox ping -c 1 -W 1 10.199.0.2 >/dev/null 2>&1"
check "native XDP on veth: xdp_count counts and passes" sh -c "
	nsenter --net=/run/netns/$ns ip link set dev $vb xdpdrv off &&
	nsenter --net=/run/netns/$ns bpftool net attach xdpdrv pinned $pin/progs/xdp_count dev $vb &&
	busybox ping -c 2 -W 2 10.199.0.2 >/dev/null &&
	c=\$(bpftool map lookup pinned $pin/maps/vmtest_cnt key 0 0 0 0 -j | sed -E 's/.*\"value\":([0-9]+).*/\\1/') &&
	echo count \$c && [ \"\$c\" -ge 2 ]"
check "generic XDP (xdpgeneric) on veth via ip ... obj" sh -c "
	nsenter --net=/run/netns/$ns bpftool net detach xdpdrv dev $vb &&
	nsenter --net=/run/netns/$ns ip link set dev $vb xdpgeneric obj $obj program xdp_pass &&
	nsenter --net=/run/netns/$ns ip link show dev $vb | grep -q xdpgeneric &&
	busybox ping -c 1 -W 2 10.199.0.2 >/dev/null &&
	nsenter --net=/run/netns/$ns ip link set dev $vb xdpgeneric off"
check "tc clsact qdisc" sh -c "tc qdisc add dev $va clsact && tc qdisc del dev $va clsact"
check "xskmap (AF_XDP) map type" grep -q 'map_type xskmap is available' <<<"$probe"

# --- libxdp: dispatcher or one program per interface (informational) ----------
out=$(nsenter --net=/run/netns/$ns xdp-loader load -m native "$vb" "$obj" -n xdp_pass 2>&1) && rc=0 || rc=$?
st=$(nsenter --net=/run/netns/$ns xdp-loader status "$vb" 2>&1 || true)
if [ "$rc" != 0 ]; then
	echo "info  libxdp: xdp-loader load failed (exit $rc):"; printf '%s\n' "$out" | sed 's/^/      /'
elif grep -q xdp_dispatcher <<<"$st"; then
	echo "info  libxdp: multi-program dispatcher works (xdp-loader status shows xdp_dispatcher)"
else
	echo "info  libxdp: no dispatcher, program attached alone:"
	printf '%s\n' "$out" | grep -iE 'dispatch|fall|compat|warn' | sed 's/^/      /' || true
fi
printf '%s\n' "$st" | grep -E "$vb|=>" | sed 's/^/      /' || true
nsenter --net=/run/netns/$ns xdp-loader unload -a "$vb" >/dev/null 2>&1 || true

echo "kernel-check: $fails failure(s) on $(uname -r)"
[ "$fails" = 0 ]
