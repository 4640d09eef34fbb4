#!/usr/bin/env bash
# docs/performance.md from a make bench run: the method, the machine and the
# figures, read from the run's results (testrun.md, masks.md, live.md,
# load.md, cp.md and apply.md when the run has them, and the meta file bench/run.sh
# writes).  Nothing is measured here
# and nothing is compared with earlier runs.
# Usage: bench/report.sh [RESULTS_DIR [OUT_FILE]]
#        (defaults: bench/results docs/performance.md)
set -euo pipefail
dir=${1:-bench/results}
outf=${2:-docs/performance.md}
for f in testrun masks live load; do
	[ -f "$dir/$f.md" ] || { echo "report: $dir/$f.md missing (run make bench)" >&2; exit 1; }
done

# the machine: from meta (key=value lines) when the run wrote one, else
# from the "Machine:" lines the parts print
declare -A M=()
if [ -f "$dir/meta" ]; then
	while IFS='=' read -r k v; do
		case "$k" in ''|'#'*) ;; *) M[$k]=$v ;; esac
	done <"$dir/meta"
fi
if [ -z "${M[kernel]:-}" ]; then
	# "Machine: [kernel ]KERNEL, N CPUs (MODEL); date ..."
	read -r M[kernel] M[cores] M[cpu] <<<"$(sed -n 's/^Machine: \(.* \)\{0,1\}\([^ ,]*\), \([0-9]*\) CPUs (\([^)]*\)).*/\2 \3 \4/p' "$dir/live.md" | head -1)"
	M[date]=$(sed -n 's/^Machine: .*; date \(.*\)\.$/\1/p' "$dir/testrun.md" | head -1)
fi

# cell FILE TABLE COND COLUMN: the COLUMN of the first row of the TABLE-th
# Markdown table in FILE whose cells match COND ("col=value;col=value");
# "-" when there is none.  Columns are found by their header, so a part may
# add columns without breaking this.
cell() {
	awk -v want="$2" -v cond="$3" -v col="$4" '
	function trim(s) { gsub(/^ +| +$/, "", s); return s }
	/^\|/ { if (!intab) { intab = 1; t++; row = 0 } } !/^\|/ { intab = 0; next }
	t != want { next }
	{
		n = split($0, c, "|")
		row++
		if (row == 1) { for (i = 2; i < n; i++) h[trim(c[i])] = i; next }
		if (row == 2) next
		m = split(cond, cs, ";")
		for (j = 1; j <= m; j++) {
			split(cs[j], kv, "=")
			if (!(kv[1] in h) || trim(c[h[kv[1]]]) != kv[2]) next
		}
		if (col in h) { print trim(c[h[col]]); found = 1; exit }
	}
	END { if (!found) print "-" }' "$1"
}
# notes FILE: what a part wrote about its method, between its title and its
# first table (its Machine line and headings left out: the machine is above)
notes() {
	awk 'NR == 1 { next } /^\|/ { exit } /^Machine:|^## / { next }
	     /^$/ { if (n) blank = 1; next } { if (blank) print ""; blank = 0; n++; print }' "$1"
}
# table FILE TABLE: the TABLE-th Markdown table in FILE, as it stands
table() {
	awk -v want="$2" '/^\|/ { if (!intab) { intab = 1; t++ } if (t == want) print; next } { intab = 0 }' "$1"
}

tr=$dir/testrun.md live=$dir/live.md load=$dir/load.md
xt() { cell "$tr" 1 "program=xtcam;rules=$1;masks=$2" "$3"; }
acl() { cell "$tr" 2 "family=$1;rules=$2" "$3"; }
lv() { cell "$live" 1 "system=$1;rules=$2" Mpps; }
# xdp-filter's CLI time for 10k rules, extrapolated by load.sh in a sentence
xf_cli=$(sed -n 's/.*about \([0-9.]*\) s for 10,000 rules.*/about \1 (extrapolated)/p' "$load" | head -1)

{
cat <<EOF
# Performance

This page is written by \`make bench\` (\`bench/report.sh\`) from the results
of its last run in [bench/results/](../bench/results/); do not edit it by
hand.  The method of each part is below and in
[bench/README.md](../bench/README.md).

## The run

| | |
|---|---|
| date | ${M[date]:-unknown} |
| kernel (\`uname -r\`) | ${M[kernel]:-unknown} |
| CPU model | ${M[cpu]:-unknown} |
| cores | ${M[cores]:-unknown} |
EOF
[ -n "${M[os]:-}" ] && echo "| system | ${M[os]} |"
[ -n "${M[duration_s]:-}" ] && echo "| duration | ${M[duration_s]} s |"
cat <<EOF

Everything runs on the one machine: the generator, the system under test,
the comparison systems.  On a machine whose cores are shared with other
work its speed drifts within a run, so every xtcam row of the per-packet
tables is followed by the XDP_DROP floor and xdp-filter on the same frames,
and the ratios in a row (\`x floor\`, \`x xdp-filter\`) are of one moment.
Compare rows of one run; the absolute figures move from run to run.

## Against xdp-filter and nftables

xdp-filter matches exact ports and addresses only and nftables runs after
the XDP hook, so neither does what xtcam does; the comparison is of the
same frames through each.  In the per-packet rows xdp-filter is its
program with 1,000 destination ports, run on the row's own frames right
after xtcam (the ratio in brackets is xtcam's time over xdp-filter's);
live, each system holds N rules of which only the last matches.

| measure | xtcam | xdp-filter | nftables |
|---|---:|---:|---|
| ns a frame, 100k rules, 8 masks (BPF_PROG_TEST_RUN) | $(xt 100000 8 ns/pkt) ($(xt 100000 8 "x xdp-filter")x) | $(xt 100000 8 "xdp-filter ns") | - |
| ns a frame, 1M rules, 8 masks | $(xt 1000000 8 ns/pkt) ($(xt 1000000 8 "x xdp-filter")x) | $(xt 1000000 8 "xdp-filter ns") | - |
| ns a frame, 100k-rule ClassBench-style IPv4 ACL | $(acl IPv4 100000 ns/pkt) ($(acl IPv4 100000 "x xdp-filter")x) | $(acl IPv4 100000 "xdp-filter ns") | - |
| ns a frame, 100k-rule ClassBench-style IPv6 ACL | $(acl IPv6 100000 ns/pkt) ($(acl IPv6 100000 "x xdp-filter")x) | $(acl IPv6 100000 "xdp-filter ns") | - |
| live Mpps, 1,000 rules (veth, one core) | $(lv xtcam 1000) | $(lv xdp-filter 1000) | chain $(lv nft-linear 1000), set $(lv nft-set 1000) |
| live Mpps, 10,000 rules | $(lv xtcam 10000) | $(lv xdp-filter 10000) | chain $(lv nft-linear 10000), set $(lv nft-set 10000) |
| load 100k rules, s | $(cell "$load" 1 rules=100000 "load s") | - | chain $(cell "$load" 2 rules=100000 "chain load s"), set $(cell "$load" 2 rules=100000 "set load s") |
| add one rule to 100k, ms | $(cell "$load" 1 rules=100000 "rule add ms") | - | $(cell "$load" 2 rules=100000 "rule add ms (chain of N)") |
| load 10k rules through the CLI, s | $(cell "$load" 1 rules=10000 "load s") | ${xf_cli:--} | chain $(cell "$load" 2 rules=10000 "chain load s") |

For scale: the XDP_DROP floor is $(cell "$tr" 1 "program=XDP_DROP (floor)" ns/pkt) ns a frame in BPF_PROG_TEST_RUN
and $(lv floor -) Mpps live; xtcam's parser alone, which then drops, $(cell "$tr" 1 "program=parser only, drop" ns/pkt) ns and
$(lv parse-floor -) Mpps.

## Per-packet cost (BPF_PROG_TEST_RUN)

What it measures: the CPU cost of the XDP program on a frame, without a
NIC or a driver.  \`bench_tr\` builds a block's data path with libxtcam and
runs the parser program (which tail-calls the classifier) with
BPF_PROG_TEST_RUN over mixes of distinct UDP frames (hits and misses, IPv4
and IPv6); the kernel gives the mean time of a run.  The programs compared,
measured the same way on the same frames: one that returns XDP_DROP (the
floor), xtcam's parser alone, and xdp-filter's program (Debian xdp-tools,
\`-f udp,ipv4,ipv6\`) with 1, 1k and 10k destination ports.  As the run
recorded its method:

$(notes "$tr")

![ns per packet against rules](../bench/results/testrun.png)

$(table "$tr" 1)

ClassBench-style ACLs (\`tests/lib/classbench.c\`, the seeds' shapes of
prefix lengths, protocols and port ranges): half the frames are built from
random rules, half from the same address clusters; the floor and
xdp-filter run over the same frames right after.

$(table "$tr" 2)

## Cost against the number of masks

What it measures: how the per-packet cost grows with distinct masks,
which decide how many tuples a frame probes: \`bench_tr -s\`, the same
method over sets of 1 to 512 masks.

![ns per packet against distinct masks](../bench/results/masks.png)

$(table "$dir/masks.md" 1)

## Live traffic through veth

What it measures: the drop rate and the CPU a frame costs when frames
arrive through a driver.  \`bench/gen_live\` runs a BPF program with
BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES that writes UDP frames
and redirects them into a veth; its peer, in another namespace, runs the
system under test (DUT) on threaded NAPI, the generator and the NAPI thread
each pinned to a CPU of its own.  Each system has N rules of which only
the last, in priority order, matches the traffic.  Systems: \`floor\` (XDP_DROP), \`parse-floor\` (xtcam's parser, then
drop), \`xtcam\` (one block bound native), \`xdp-filter\` (native, N ports),
\`nft-linear\` (a netdev ingress chain of N rules), \`nft-set\` (one rule
over an N-element set).  As the run recorded its method:

$(notes "$live")

![live drop rate against rules](../bench/results/live.png)
![DUT CPU time per frame against rules](../bench/results/live-cost.png)

$(table "$live" 1)

## Rule load time, single-rule latency, memory

What it measures: wall time of whole CLI invocations (\`xtcam rule load\`
of a file into a block bound native to a veth, its \`check\` and
\`replace\` forms, \`rule add\` and \`rule del\` of one rule on the full
block), and the kernel memory (bpftool's memlock) of a block's data path,
which is allocated for its capacity.  nftables: \`nft -f\` of a chain of N
rules and of one rule over an N-element set, \`nft add rule\` on the big
chain.  xdp-filter: its CLI, one command per port, timed on a few hundred
and extrapolated.  As the run recorded its method:

$(notes "$load")

xtcam:

$(table "$load" 1)

nftables:

$(table "$load" 2)

Memory of the registry shared by all blocks:
$(sed -n 's/^of \([0-9.]* MiB\)\.$/\1/p' "$load" | head -1).
EOF

# --- the control plane (cp.md; absent from runs before that part existed)
cp=$dir/cp.md
if [ -f "$cp" ] && grep -q '^Largest block: [0-9]* rules\.$' "$cp"; then
	cv() { cell "$cp" 3 "measure=$1" value; }
	big=$(sed -n 's/^Largest block: \([0-9]*\) rules\.$/\1/p' "$cp" | head -1)
	c1() { cell "$cp" 1 "rules=$big" "$1"; }
	cat <<EOF

## Control plane: single changes, load, show, delete

What it measures: the wall time of whole processes, xtcam and nft timed
the same way (\`bench/ptime\`: fork, exec and wait4 of each command, its
peak RSS from wait4), against the number of rules: \`rule add\` and
\`rule del\` of one rule on a bound block of N rules with a block of the
largest size beside it, \`nft add element\` and \`nft delete element\` on
a set of N elements, \`nft add rule\` on a chain of N rules; then \`rule
load\`, \`rule show\`, unbind and \`block del\` of the largest block.
As the run recorded its method:

$(notes "$cp")

The targets are those of the control plane's work, for a block of
1,000,000 rules; this run's largest block had $big rules.

| measure | xtcam | nftables | target |
|---|---:|---:|---:|
| single change on the block of $big rules, median ms (p99) | add $(c1 "xtcam add ms") ($(c1 "add p99 ms")), del $(c1 "xtcam del ms") ($(c1 "del p99 ms")) | add element $(c1 "nft add element ms") ($(c1 "add element p99 ms")), delete element $(c1 "nft delete element ms") ($(c1 "delete element p99 ms")); add rule $(c1 "nft add rule ms (chain of N)") | <= 20 ms median each |
| the same against 1000 rules (the big block beside) | add $(cv "rule add, against 1000 rules (medians)"), del $(cv "rule del, against 1000 rules (medians)") | - | <= 1.5x |
| xtcam over nftables, $big | add $(c1 "add x nft")x, del $(c1 "del x nft")x | - | <= 2x |
| \`rule load\` of $big rules into an empty bound block, s / peak RSS MiB | $(cv "rule load into an empty bound block, s") / $(cv "rule load, peak RSS MiB (command and finisher)") (its finisher done $(cv "rule load, its finisher done after, s") s after; its runs $(cv "rule load, its runs (the median above), s") s) | \`nft -f\` set $(cv "nft -f of a set of as many elements, s") / $(cv "nft -f of that set, peak RSS MiB") | <= 3 s / <= 400 MB |
| \`rule show\` of $big rules: first line s / all s / peak RSS MiB | $(cv "rule show, first line s") / $(cv "rule show, all s") / $(cv "rule show, peak RSS MiB") | - | <= 0.1 / <= 3 / <= 64 |
| \`block del\` of the $big-rule block (unbound), s | $(cv "block del (unbound), s") | - | <= 1 s |

![single-change latency against rules](../bench/results/cp.png)

Single changes:

$(table "$cp" 1)

Loads at each size:

$(table "$cp" 2)

The block of $big rules:

$(table "$cp" 3)
$(grep -h '^\*\*Stopped early' "$cp" | sed 's/^/\n/')
EOF
else
	printf '\n## Control plane\n\nNot measured in this run (no %s).\n' "$cp"
fi

# --- apply (apply.md; absent from runs before that part existed)
ap=$dir/apply.md
if [ -f "$ap" ] && grep -q '^| unchanged file |' "$ap"; then
	cat <<EOF

## Control plane: apply of a file

What it measures: \`xtcam apply FILE\` as a whole process (\`bench/ptime\`)
on a bound block, FILE being what \`xtcam save\` wrote of it: unchanged
(the target: <= 1 s, 0 changes, nothing detached), and with 1% of its
rules changed (<= 2 s, only those changed).  As the run recorded its
method:

$(notes "$ap")

$(table "$ap" 1)
$(grep -h '^\*\*Stopped early' "$ap" | sed 's/^/\n/')
EOF
else
	printf '\n## Control plane: apply of a file\n\nNot measured in this run (no %s).\n' "$ap"
fi
} >"$outf.tmp"
mv "$outf.tmp" "$outf"
echo "report: $outf" >&2
