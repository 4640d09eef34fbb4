#!/usr/bin/env bash
# The systemd units as make install writes them: systemd-analyze verify is
# clean; the boot unit's and the hotplug unit's commands, run as systemd
# runs them, mount bpffs where it is missing, apply a file (exit status
# EXIT_PARTIAL when a binding waits for its device, counted as success and
# logged), refuse a file that does not parse, and make a device's bindings
# when it appears; the metrics service writes the per-rule series of the
# blocks /etc/default/xtcam lists, and only those.
. "$(dirname "$0")/lib.sh"
need_root
need systemd-analyze
root=$(scratch)
make -C "$top" --no-print-directory -s install BUILD="$build" PREFIX="$root/usr" \
	SYSCONFDIR="$root/etc" TEXTFILE_DIR="$root/textfile" >/dev/null || fail "make install PREFIX=$root/usr"
units=$root/usr/lib/systemd/system
ln -s xtcam-bind@.service "$units/xtcam-bind@eth7.service"
out=$(cd "$units" && MANPATH=$root/usr/share/man SYSTEMD_LOG_LEVEL=notice systemd-analyze verify xtcam.service \
	xtcam-bind@eth7.service xtcam-metrics.service xtcam-metrics.timer 2>&1) ||
	fail "systemd-analyze verify failed: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
# what the boot unit promises
prop() { sed -n "s/^$2=//p" "$units/$1"; }
assert_eq "Type" "$(prop xtcam.service Type)" oneshot
assert_eq "DefaultDependencies" "$(prop xtcam.service DefaultDependencies)" no
[[ " $(prop xtcam.service Before) " == *" network-pre.target "* ]] || fail "not Before=network-pre.target"
[[ " $(prop xtcam.service After) " == *" sys-fs-bpf.mount "* ]] || fail "not After=sys-fs-bpf.mount"
partial=$(make -C "$top" --no-print-directory -s -f Makefile -f - print-exit-partial <<<'print-exit-partial: ; @echo $(EXIT_PARTIAL)')
assert_eq "SuccessExitStatus" "$(prop xtcam.service SuccessExitStatus)" "$partial"
assert_eq "udev rule" "$(grep -c 'SUBSYSTEM=="net".*SYSTEMD_WANTS}+="xtcam-bind@$name.service"' \
	"$root/usr/lib/udev/rules.d/90-xtcam.rules")" 1

# run a unit's Exec lines as systemd would ($$ is $; %i the instance;
# its EnvironmentFile read)
run_unit() {
	local unit=$1 inst=${2:-} line rc=0 env
	env=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$units/$unit")
	if [ -n "$env" ] && [ -r "$env" ]; then set -a; . "$env"; set +a; fi
	while IFS= read -r line; do
		line=${line#*=}
		line=${line//\$\$/\$}
		line=${line//%i/$inst}
		# an unset variable is empty, as systemd expands it
		(set +u; eval "$line") || { rc=$?; break; }
	done < <(grep -E '^ExecStart(Pre)?=' "$units/$unit")
	return $rc
}
# bpffs missing (a mount namespace of our own without it): the boot unit's
# ExecStartPre mounts it; there, it mounts nothing more
pre=$(sed -n 's/^ExecStartPre=//p' "$units/xtcam.service")
[ -n "$pre" ] || fail "xtcam.service has no ExecStartPre"
out=$(unshare --mount --propagation private bash -c '
	while mountpoint -q /sys/fs/bpf; do umount -l /sys/fs/bpf; done
	eval "$1" || exit
	stat -f -c %T /sys/fs/bpf
	n=$(findmnt -n /sys/fs/bpf | wc -l)
	eval "$1" || exit
	[ "$(findmnt -n /sys/fs/bpf | wc -l)" = "$n" ] || echo "mounted again"' _ "$pre" 2>&1) ||
	fail "ExecStartPre without bpffs: $out"
assert_eq "/sys/fs/bpf after ExecStartPre without bpffs" "$out" bpf_fs

"$XTCAM" help 2>&1 | grep -q apply || "$XTCAM" apply --check /dev/null >/dev/null 2>&1 ||
	skip "this xtcam has no apply command"
ns=tshs$$
veth_pair "$ns"
conf=$root/etc/xtcam/xtcam.conf
PATH=$root/usr/sbin:$PATH
# the example configuration: nothing to do
run_unit xtcam.service || fail "the boot unit on the example configuration: exit $?"
"$XTCAM" block show | grep -q . && fail "the example configuration made blocks"
# a binding whose device is not there yet: applied, status EXIT_PARTIAL, logged
cat > "$conf" <<CONF
# xtcam save format 2
block add boot capacity 64 default pass
rule add boot prio 10 handle 1 ip_proto icmp action drop
bind boot dev ta netns $ns-a mode generic
bind boot dev late netns $ns-a mode generic
CONF
rc=0; out=$(run_unit xtcam.service 2>&1) || rc=$?
assert_eq "exit status of the boot unit with a device missing" "$rc" "$partial"
grep -q 'some bindings wait for their devices' <<<"$out" || fail "not logged: $out"
"$XTCAM" block show boot | grep -q 'dev ta netns' || fail "binding to ta not made"
"$XTCAM" rule show boot | grep -q 'handle 1 prio 10' || fail "rule not made"
# the device appears: the hotplug unit makes its binding and no other
# (a controller unbound ta since boot: it stays unbound), touches no rule
"$XTCAM" rule add boot prio 20 ip_proto udp action drop >/dev/null
"$XTCAM" unbind boot dev ta netns "$ns-a" >/dev/null
ip -n "$ns-a" link add name late type veth peer name latep
run_unit xtcam-bind@.service late || fail "the hotplug unit: exit $?"
"$XTCAM" block show boot | grep -q 'dev late netns' || fail "binding to late not made"
"$XTCAM" block show boot | grep -q 'dev ta netns' && fail "the hotplug unit for late bound ta again"
"$XTCAM" rule show boot | grep -q 'prio 20' || fail "the hotplug unit removed a rule"
# a file that does not parse: the unit fails, nothing changes
before=$("$XTCAM" save | grep -v '^#')
echo 'rule add boot prio 10 ip_proto bogus action drop' >> "$conf"
rc=0; out=$(run_unit xtcam.service 2>&1) || rc=$?
[ "$rc" != 0 ] && [ "$rc" != "$partial" ] || fail "a bad file: exit $rc"
grep -q 'bogus' <<<"$out" || fail "a bad file: the error does not name it: $out"
assert_eq "state after a bad file" "$("$XTCAM" save | grep -v '^#')" "$before"

# the metrics timer's service: the textfile, whole, readable by node_exporter
mkdir "$root/textfile"
run_unit xtcam-metrics.service || fail "xtcam-metrics.service: exit $?"
assert_eq "files in the textfile directory" "$(ls -A "$root/textfile")" xtcam.prom
assert_eq "mode of xtcam.prom" "$(stat -c %a "$root/textfile/xtcam.prom")" 644
grep -q '^xtcam_rule_' "$root/textfile/xtcam.prom" && fail "xtcam.prom: per-rule series without --rules"
# the blocks whose rules are wanted, listed in the default file
echo 'XTCAM_METRICS_ARGS="--rules=boot"' > "$root/etc/default/xtcam"
run_unit xtcam-metrics.service || fail "xtcam-metrics.service --rules=boot: exit $?"
grep -q '^xtcam_rule_packets_total{block="boot",handle="1",prio="10",action="drop"} ' "$root/textfile/xtcam.prom" ||
	fail "xtcam.prom: no rule of boot with XTCAM_METRICS_ARGS=--rules=boot"
grep -q '^xtcam_binding_info{block="boot",dev="late"' "$root/textfile/xtcam.prom" ||
	fail "xtcam.prom: no binding of boot to late"
[ "$(prop xtcam-metrics.timer OnUnitActiveSec)" = 15s ] || fail "the timer does not run every 15s"
