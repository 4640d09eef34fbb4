#!/usr/bin/env bash
# make demo: a block with a handful of rules on a veth pair in a namespace,
# real traffic through it, the counters shown.  Everything it makes (three
# namespaces, their veth pairs, its own xtcam state) goes when it ends,
# even on error.  It does not touch your own xtcam state.
set -euo pipefail
build=${1:-build}
xt="$(cd "$(dirname "$0")" && pwd)/$build/xtcam"
export XTCAM_INSTANCE=xtcam-demo
A=xtdemo-a B=xtdemo-b C=xtdemo-c

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

cleanup() {
	"$xt" flush >/dev/null 2>&1 || true
	for ns in $A $B $C; do ip netns del $ns 2>/dev/null || true; done
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "demo: needs root" >&2; exit 1; }
cleanup

say "three namespaces: $B sends to $A over veth1 -> veth0; veth2 in $A leads to $C"
for ns in $A $B $C; do ip netns add $ns; ip -n $ns link set lo up; done
ip -n $A link add veth0 type veth peer name veth1 netns $B
ip -n $A link add veth2 type veth peer name veth3 netns $C
ip -n $A addr add 10.0.0.1/24 dev veth0
ip -n $B addr add 10.0.0.2/24 dev veth1
ip -n $B addr add 10.0.0.66/24 dev veth1
for l in "$A veth0" "$B veth1" "$A veth2" "$C veth3"; do set -- $l; ip -n $1 link set $2 up; done
# a native XDP redirect into veth2 needs NAPI on its peer
ip netns exec $C ethtool -K veth3 gro on >/dev/null

say "a block and its rules (tc-flower syntax)"
run "$xt" block add demo capacity 1024 default pass
run "$xt" rule add demo prio 10 ip_proto udp dst_port 9 action drop
run "$xt" rule add demo prio 20 ip_proto tcp dst_port 20-25 action pass
run "$xt" rule add demo prio 30 ip_proto udp dst_port 5000 action redirect dev veth2
run "$xt" rule add demo prio 5 src_ip 10.0.0.66 ip_proto icmp type 8 action drop
run "$xt" rule add demo prio 40 eth_type ipv6 action drop

say "bind it to veth0 (mode auto: hw is tried first, then native XDP)"
run "$xt" bind demo dev veth0 netns $A

say "traffic from $B"
ip netns exec $B bash -c 'for i in $(seq 20); do echo drop-me > /dev/udp/10.0.0.1/9; done'
ip netns exec $B bash -c 'for i in $(seq 5); do (exec 3<>/dev/tcp/10.0.0.1/22) 2>/dev/null || true; done'
ip netns exec $B bash -c 'for i in $(seq 7); do echo redirect-me > /dev/udp/10.0.0.1/5000; done'
run ip netns exec $B ping -c 3 -W 1 -I 10.0.0.2 10.0.0.1 || true
run ip netns exec $B ping -c 3 -W 1 -I 10.0.0.66 10.0.0.1 || true
sleep 0.5

say "what the block saw"
run "$xt" rule show demo
run "$xt" block show demo
say "frames that arrived in $C through the redirect"
ip -n $C -s link show veth3 | sed -n '/RX:/,/^ *[0-9]/p'
say "the same counters as bpftool shows them (per CPU, with BTF field names)"
run bpftool map dump pinned "/sys/fs/bpf/$XTCAM_INSTANCE/demo/xdp/counters" | sed -n 1,40p   # reads it all: head would SIGPIPE bpftool under pipefail
say "done: cleaning up"
