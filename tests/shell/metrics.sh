#!/usr/bin/env bash
# xtcam metrics: the counters of real traffic in the Prometheus text format,
# checked by promtool and read by the real node_exporter from a textfile
# directory, written atomically by --output (a temporary file renamed).
. "$(dirname "$0")/lib.sh"
need_root
need promtool
need prometheus-node-exporter
need curl
need strace
ns=tshm$$
veth_pair "$ns"
"$XTCAM" block add m capacity 64 >/dev/null
"$XTCAM" block add quiet >/dev/null
"$XTCAM" rule add m prio 10 ip_proto icmp action drop >/dev/null
"$XTCAM" rule add m prio 20 ip_proto udp dst_port 9 action pass >/dev/null
"$XTCAM" bind m dev ta netns "$ns-a" mode generic >/dev/null
# three echo requests, dropped by rule 1; ARP misses (default pass)
ip netns exec "$ns-b" ping -q -c 3 -i 0.2 -W 1 10.9.0.1 >/dev/null 2>&1 || true

d=$(scratch)
"$XTCAM" metrics > "$d/blocks.prom"
"$XTCAM" metrics --rules > "$d/rules.prom"
for f in blocks rules; do
	promtool check metrics < "$d/$f.prom" || fail "promtool check metrics: $f.prom"
done
grep -q '^xtcam_rule_' "$d/blocks.prom" && fail "per-rule series without --rules"
grep -qx 'xtcam_block_rules{block="m"} 2' "$d/blocks.prom" || fail "rules of m: $(grep block_rules "$d/blocks.prom")"
grep -qx 'xtcam_block_tcam_capacity{block="m"} 64' "$d/blocks.prom" || fail "capacity of m"
grep -qx 'xtcam_block_tcam_entries{block="m"} 2' "$d/blocks.prom" || fail "entries of m"
grep -qx "xtcam_binding_info{block=\"m\",dev=\"ta\",netns=\"$ns-a\",mode=\"generic\",requested=\"generic\",state=\"active\"} 1" \
	"$d/blocks.prom" || fail "binding of m: $(grep binding_info "$d/blocks.prom")"
misses=$(sed -n 's/^xtcam_block_misses_total{block="m"} //p' "$d/blocks.prom")
[ "${misses:-0}" -ge 1 ] || fail "misses of m (ARP): \"$misses\""
grep -qx 'xtcam_rule_packets_total{block="m",handle="1",prio="10",action="drop"} 3' "$d/rules.prom" ||
	fail "packets of rule 1: $(grep rule_packets "$d/rules.prom")"
grep -qx 'xtcam_rule_packets_total{block="m",handle="2",prio="20",action="pass"} 0' "$d/rules.prom" ||
	fail "packets of rule 2"
# 3 ICMP echo requests of 98 bytes (84 IP + 14 Ethernet)
grep -qx 'xtcam_rule_bytes_total{block="m",handle="1",prio="10",action="drop"} 294' "$d/rules.prom" ||
	fail "bytes of rule 1: $(grep rule_bytes "$d/rules.prom")"
# one block; --rules=LIST: those blocks' rules
"$XTCAM" metrics quiet --rules=m > "$d/some.prom"
grep -q 'block="m"} ' "$d/some.prom" && grep -q '^xtcam_block_rules{block="m"}' "$d/some.prom" &&
	fail "metrics quiet shows block m"
grep -q '^xtcam_rule_packets_total{block="m",handle="1"' "$d/some.prom" || fail "--rules=m: no rule of m"
out=$("$XTCAM" metrics nosuch 2>&1) && fail "metrics of a missing block succeeded"
grep -q 'block nosuch: no such block' <<<"$out" || fail "missing block: \"$out\""

# --output: FILE replaced whole, readable by node_exporter's user, no
# temporary left; a failed write leaves FILE as it was
tf=$d/textfile
mkdir -m 0755 "$tf"
"$XTCAM" metrics --rules --output "$tf/xtcam.prom"
assert_eq "mode of the output" "$(stat -c %a "$tf/xtcam.prom")" 644
assert_eq "files in the textfile directory" "$(ls -A "$tf")" xtcam.prom
cmp -s "$tf/xtcam.prom" "$d/rules.prom" ||
	{ diff "$tf/xtcam.prom" "$d/rules.prom" | head -5 >&2; fail "--output wrote other than stdout"; }
# how it is written (strace): FILE is never opened; a file that does not
# end in .prom (node_exporter reads *.prom only) is written in FILE's
# directory and renamed over FILE
strace -f -qq -e trace=open,openat,creat,rename,renameat,renameat2 -o "$d/strace" \
	"$XTCAM" metrics --rules --output "$tf/xtcam.prom"
opens=$(grep -E "open(at)?\(.*\"$tf/" "$d/strace" || true)
[ "$(wc -l <<<"$opens")" = 1 ] || fail "--output opened other than one file in the directory: $opens"
tmp=$(sed -E 's/.*"([^"]*)".*/\1/' <<<"$opens")
[[ $tmp == "$tf"/* && $tmp != *.prom ]] || fail "--output wrote into \"$tmp\", not a temporary file beside it"
grep -qE "O_WRONLY\|O_CREAT\|O_EXCL" <<<"$opens" || fail "the temporary file is not created new: $opens"
grep -qE "rename(at2?)?\(.*\"$tmp\", .*\"$tf/xtcam.prom\"" "$d/strace" ||
	fail "--output did not rename $tmp over xtcam.prom: $(grep rename "$d/strace")"
"$XTCAM" metrics --output "$d/none/xtcam.prom" 2>/dev/null && fail "--output into a missing directory succeeded"
[ ! -e "$d/none" ] || fail "--output made a directory"
# FILE is a directory: the rename fails, the temporary file goes
mkdir "$d/isdir"
"$XTCAM" metrics --output "$d/isdir" 2>/dev/null && fail "--output over a directory succeeded"
assert_eq "files beside a failed --output" "$(ls -A "$d" | grep -c tmp || true)" 0

# the real node_exporter, its textfile collector only, on a free port
port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$tf" > "$d/ne.log" 2>&1 &
ne=$!
at_exit "kill $ne; wait $ne 2>/dev/null"
for _ in $(seq 50); do
	curl -fsS "http://127.0.0.1:$port/metrics" > "$d/scrape" 2>/dev/null && break
	sleep 0.1
done
[ -s "$d/scrape" ] || { cat "$d/ne.log" >&2; fail "node_exporter did not answer on port $port"; }
grep -qx 'xtcam_rule_packets_total{action="drop",block="m",handle="1",prio="10"} 3' "$d/scrape" ||
	{ grep -E 'xtcam|textfile' "$d/scrape" >&2; fail "node_exporter's /metrics has no xtcam rule series"; }
grep -q '^xtcam_block_misses_total{block="m"}' "$d/scrape" || fail "node_exporter: no xtcam_block_misses_total"
grep -q '^node_textfile_scrape_error 0' "$d/scrape" || fail "node_exporter: textfile scrape error"

# the device goes: the binding is gone, and says so
ip -n "$ns-a" link del ta
"$XTCAM" metrics > "$d/gone.prom"
grep -qx "xtcam_binding_active{block=\"m\",dev=\"ta\",netns=\"$ns-a\"} 0" "$d/gone.prom" ||
	fail "a gone binding: $(grep binding_active "$d/gone.prom")"
grep -q '^xtcam_binding_info{block="m",dev="ta",.*state="gone"} 1$' "$d/gone.prom" ||
	fail "a gone binding's state: $(grep binding_info "$d/gone.prom")"
