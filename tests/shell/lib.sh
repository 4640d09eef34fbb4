# Sourced by the tests in tests/shell: tests/shell/NAME.sh BUILD_DIR.
# Exit 0 passed, 77 skipped (skip REASON), anything else failed (fail MSG).
set -eu
build=$(realpath "${1:-build}")
top=$(realpath "$(dirname "$0")/../..")
XTCAM=${XTCAM_BIN:-$build/xtcam}
[ "${XTCAM#/}" != "$XTCAM" ] || XTCAM=$top/$XTCAM
# a state of our own, never the default one
export XTCAM_INSTANCE=tsh$$
cleanups=()
# a free TCP port on 127.0.0.1
free_port() {
	local p used
	used=$(ss -Htln | awk '{ sub(/.*:/, "", $4); print $4 }')
	while :; do
		p=$((20000 + RANDOM % 40000))
		grep -qx "$p" <<<"$used" || { echo "$p"; return; }
	done
}

skip() { echo "skip: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# assert_eq WHAT GOT WANT
assert_eq() { [ "$2" = "$3" ] || fail "$1: got \"$2\", want \"$3\""; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root (loads BPF programs)"; }
need() { command -v "$1" >/dev/null || skip "$1 is not installed (make deps installs it)"; }
# run at exit, last registered first
at_exit() { cleanups+=("$*"); }
run_cleanups() {
	local i
	"$XTCAM" flush >/dev/null 2>&1 || true
	rm -f "/run/$XTCAM_INSTANCE.lock"
	for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[$i]}" || true; done
}
trap run_cleanups EXIT
# a scratch directory removed at exit
scratch() { local d; d=$(mktemp -d); at_exit "rm -rf '$d'"; echo "$d"; }
# two namespaces NS-a and NS-b joined by a veth pair (ta in NS-a, tb in NS-b),
# 10.9.0.1 and 10.9.0.2; removed at exit
veth_pair() {
	local ns=$1
	ip netns add "$ns-a" && at_exit "ip netns del '$ns-a'"
	ip netns add "$ns-b" && at_exit "ip netns del '$ns-b'"
	# no IPv6 on the pair: DAD, router and MLD solicitations would arrive
	# at any moment and move the counters a test compares
	local n
	for n in "$ns-a" "$ns-b"; do
		ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	done
	ip -n "$ns-a" link add name ta type veth peer name tb netns "$ns-b"
	ip -n "$ns-a" addr add 10.9.0.1/24 dev ta
	ip -n "$ns-b" addr add 10.9.0.2/24 dev tb
	ip -n "$ns-a" link set ta up
	ip -n "$ns-b" link set tb up
	ip -n "$ns-a" link set lo up
	ip -n "$ns-b" link set lo up
}
