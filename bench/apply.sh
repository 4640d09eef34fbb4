#!/usr/bin/env bash
# xtcam apply against a bound block of N rules (the file of `xtcam save`):
# the file unchanged, and the file with 1% of its rules changed, timed as
# whole processes (bench/ptime), with the number of changes apply reports
# and whether the binding's XDP program stayed (its id before and after).
#
# Usage: bench/apply.sh BUILD_DIR OUT_DIR [quick]
# Environment:
#   XTCAM_BENCH_APPLY_RULES  N (default 100000; quick: 10000)
#   XTCAM_BENCH_APPLY_RUNS   runs of each measure, 3-99 (default 9; quick: 3)
#   XTCAM_BENCH_CP_BIND      the XDP mode of the binding: native (default) or
#                            generic
# Writes OUT_DIR/apply.md.  The namespace, the xtcam instance and the files
# it makes are removed on exit, error or not.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mode=${3:-}
NS=xtb-ap
XT="$build/xtcam"
PT="$build/bench/ptime"
export XTCAM_INSTANCE=xtcam-bench-apply
work=bench/work/apply
[ -x "$PT" ] || { echo "apply: $PT missing (make all)" >&2; exit 1; }
if [ "$mode" = quick ]; then
	n=${XTCAM_BENCH_APPLY_RULES:-10000} runs=${XTCAM_BENCH_APPLY_RUNS:-3}
else
	n=${XTCAM_BENCH_APPLY_RULES:-100000} runs=${XTCAM_BENCH_APPLY_RUNS:-9}
fi
case $n in ''|*[!0-9]*) n=0 ;; esac
case $runs in ''|*[!0-9]*) runs=0 ;; esac
[ "$n" -ge 100 ] && [ "$n" -le 4000000 ] || { echo "apply: XTCAM_BENCH_APPLY_RULES: 100 to 4000000" >&2; exit 2; }
[ "$runs" -ge 3 ] && [ "$runs" -le 99 ] || { echo "apply: XTCAM_BENCH_APPLY_RUNS: 3 to 99" >&2; exit 2; }
bmode=${XTCAM_BENCH_CP_BIND:-native}
case $bmode in native|generic) ;; *) echo "apply: XTCAM_BENCH_CP_BIND: native or generic" >&2; exit 2 ;; esac

stopped=0
cleanup() {
	local rc=$?
	if [ "$stopped" = 1 ] && [ -f "$out/apply.md" ]; then
		printf '\n%s\n' "**Stopped early:** killed at its time bound; the rows above are complete, the rest was not measured." >>"$out/apply.md"
	elif [ "$rc" != 0 ] && [ -f "$out/apply.md" ]; then
		printf '\n%s\n' "**Stopped early:** interrupted or failed (exit $rc); the rows above are complete, the rest was not measured." >>"$out/apply.md"
	fi
	"$XT" flush >/dev/null 2>&1 || true
	ip netns del $NS 2>/dev/null || true
	if [ -d "/sys/fs/bpf/$XTCAM_INSTANCE" ]; then
		echo "apply: flush left /sys/fs/bpf/$XTCAM_INSTANCE; removing it" >&2
		rm -rf "/sys/fs/bpf/$XTCAM_INSTANCE"
	fi
	rm -rf "$work"
	rm -f "/run/$XTCAM_INSTANCE.lock"
}
trap cleanup EXIT
trap 'exit 130' INT HUP
trap 'stopped=1; exit 143' TERM
"$XT" flush >/dev/null 2>&1 || true
ip netns del $NS 2>/dev/null || true
mkdir -p "$work" "$out"

ip netns add $NS
ip -n $NS link add xtba0 type veth peer name xtba1
ip -n $NS link set xtba0 up
ip -n $NS link set xtba1 up

# the block: N rules of IPv4 source addresses (/32) in 1000 priorities,
# bound, saved as the file apply is given
awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "prio %d eth_type ipv4 src_ip 10.%d.%d.%d action drop\n", 1 + i % 1000, int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$work/rules"
"$XT" block add edge capacity $((n + n / 8 + 1024)) default pass >/dev/null
"$XT" bind edge dev xtba0 netns $NS mode "$bmode" >/dev/null
"$XT" rule load edge "$work/rules" >/dev/null
"$XT" save >"$work/same.conf"
# 1% of the rules changed: every 100th rule line of the file gets another
# address (172.16.x.y) and action pass: replaced by apply
awk '/^rule add / && ++k % 100 == 0 { sub(/src_ip [0-9.]*/, "src_ip 172.16." int(k / 256) % 256 "." k % 256); sub(/action drop/, "action pass") } { print }' \
	"$work/same.conf" >"$work/changed.conf"
# 1% of the rules changed as removals and additions: every 200th rule line
# left out, as many new rules (new handles) added
awk -v n="$n" '/^rule add / && ++k % 200 == 0 { next } { print } END { for (i = 1; i <= int(n / 200); i++) printf "rule add edge prio 5 handle %d eth_type ipv4 src_ip 192.168.%d.%d action drop\n", 4000000 + i, int(i / 256) % 256, i % 256 }' \
	"$work/same.conf" >"$work/moved.conf"

prog_id() { ip -n $NS -d link show dev xtba0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -1; }
changes() { sed -n 's/^\([0-9]*\) changes\{0,1\}\( (--check.*)\)\{0,1\}$/\1/p' | tail -1; }
val() { echo "$P" | sed -n "${1}p" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
ms() { awk -v m="$1" 'BEGIN { if (m == "") print "-"; else printf "%.0f", m }'; }

{
	echo "# apply: a file of N rules, unchanged and with 1% changed"
	echo
	echo "Machine: kernel $(uname -r), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)); date $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "\`xtcam apply FILE\` as a whole process (\`bench/ptime\`, $runs runs a measure, median and"
	echo "slowest) on a block of $n rules (IPv4 source addresses /32, 1000 priorities) bound $bmode to a"
	echo "veth; FILE is what \`xtcam save\` wrote of it.  Changed by 1%: every 100th rule replaced"
	echo "(another address, action pass), or every 200th removed and as many new ones added; each"
	echo "run applies the changed file, then the unchanged one again (both timed, each makes the"
	echo "changes).  \"changes\" is what apply printed; the program id is the binding's XDP program"
	echo "(\`ip link\`) before the first apply and after the last."
	echo "Command: \`make bench${mode:+ QUICK=1}\` (bench/apply.sh; \`XTCAM_BENCH_APPLY_RULES\` sets N)."
	echo
	echo "| apply | rules | changes | median ms | slowest ms | runs | program id kept | target |"
	echo "|---|---:|---:|---:|---:|---:|---|---:|"
} >"$out/apply.md"

id0=$(prog_id)
c=$("$XT" apply "$work/same.conf" | changes)
P=$("$PT" -n "$runs" -- "$XT" apply "$work/same.conf")
id1=$(prog_id)
echo "| unchanged file | $n | ${c:--} | $(ms "$(val 1 med_ms)") | $(ms "$(val 1 max_ms)") | $(val 1 runs) | $([ -n "$id0" ] && [ "$id0" = "$id1" ] && echo "yes ($id0)" || echo "no ($id0, then $id1)") | <= 1000 ms, 0 changes |" >>"$out/apply.md"
echo "apply: unchanged done" >&2

for v in changed moved; do
	c=$("$XT" apply --check "$work/$v.conf" | changes)
	P=$("$PT" -n "$runs" -- "$XT" apply "$work/$v.conf" ::: "$XT" apply "$work/same.conf")
	c2=$("$XT" apply "$work/same.conf" | changes)
	id1=$(prog_id)
	what="1% replaced"
	[ $v = moved ] && what="1% removed and added"
	echo "| $what | $n | $c | $(ms "$(val 1 med_ms)") | $(ms "$(val 1 max_ms)") | $(val 1 runs) | $([ -n "$id0" ] && [ "$id0" = "$id1" ] && echo "yes ($id0)" || echo "no ($id0, then $id1)") | <= 2000 ms |" >>"$out/apply.md"
	echo "| back to the unchanged file | $n | $c | $(ms "$(val 2 med_ms)") | $(ms "$(val 2 max_ms)") | $(val 2 runs) | (after: ${c2:--} changes) | <= 2000 ms |" >>"$out/apply.md"
	echo "apply: $v done" >&2
done
echo "apply: wrote $out/apply.md" >&2
