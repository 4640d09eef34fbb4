#!/usr/bin/env bash
# bash completion (contrib/bash-completion/xtcam) with bash-completion's
# _init_completion: objects, verbs, keywords, block names read from the
# state and device names, of our namespace or of the one `netns` names.
. "$(dirname "$0")/lib.sh"
need_root
bc=/usr/share/bash-completion/bash_completion
[ -r $bc ] || skip "bash-completion is not installed (make deps installs it)"
ns=tshc$$
veth_pair "$ns"
"$XTCAM" block add edge >/dev/null
"$XTCAM" block add core2 >/dev/null
bindir=$(scratch)
ln -s "$XTCAM" "$bindir/xtcam"

# the completions of a line (the cursor at its end), sorted, on one line
comp() {
	PATH="$bindir:$PATH" LINE="$1" bash -c '
		. '"$bc"' 2>/dev/null
		. '"$top"'/contrib/bash-completion/xtcam
		COMP_LINE=$LINE COMP_POINT=${#LINE}
		read -ra COMP_WORDS <<<"$LINE"
		[[ $LINE == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		complete -p xtcam >/dev/null || exit 1
		_xtcam xtcam "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort | xargs'
}
# expect LINE WANT
expect() {
	local got
	got=$(comp "$1")
	[ "$got" = "$2" ] || fail "completing \"$1\": got \"$got\", want \"$2\""
}
# has LINE WORD: WORD among the completions
has() {
	local got
	got=$(comp "$1")
	[[ " $got " == *" $2 "* ]] || fail "completing \"$1\": \"$2\" not in \"$got\""
}

expect "xtcam bl" "block"
has "xtcam " rule
has "xtcam " metrics
has "xtcam -" --json
expect "xtcam block " "add del help show"
expect "xtcam block show " "core2 edge"
expect "xtcam -j rule show " "core2 edge"
expect "xtcam -w 5 rule add e" "edge"
expect "xtcam counters reset c" "core2"
expect "xtcam rule " "add del flush help load replace show"
expect "xtcam rule add edge prio 1 ip_proto " "ah esp icmp icmpv6 l2tp sctp tcp udp udplite"
expect "xtcam rule add edge prio 1 ac" "action"
expect "xtcam rule add edge prio 1 dst_p" "dst_port"
expect "xtcam rule add edge prio 1 action " "cpu drop pass redirect tx"
expect "xtcam rule del edge " "handle"
expect "xtcam bind edge mode " "auto generic hw native"
expect "xtcam bind edge dev ta i" "ingress"
expect "xtcam block add x default " "drop pass"
expect "xtcam metrics --" "--output --rules"
has "xtcam bind edge dev " lo
has "xtcam bind edge netns " "$ns-a"
# the devices of the namespace on the line, not ours
expect "xtcam bind edge netns $ns-a dev " "lo ta"
expect "xtcam rule add edge prio 1 action redirect dev tb netns $ns-b dev t" "tb"

# what the documentation and the command name, the completion offers:
# every command of xtcam's usage, every MATCH keyword of the rule
# language's synopsis (docs/rule-syntax.md, xtcam-rules(7)), its protocol
# and ethertype names, its actions
# words NAME: the lower-case alternatives of "NAME := { a | b | ... }"
words() {
	sed -n "/^$1 *:= {/,/}/p" "$top/docs/rule-syntax.md" | tr '\n' ' ' |
		sed 's/^[^{]*{\([^}]*\)}.*/\1/' | tr '|' '\n' | awk '$1 ~ /^[a-z0-9]/ { print $1 }'
}
cmds=$("$XTCAM" help 2>&1 | sed -n 's/.*OBJECT := { \(.*\) }/\1/p' | tr -d '|'
	"$XTCAM" help 2>&1 | grep -oE '(^ *|; |Usage: )xtcam (\[[^]]*\] )*-?[a-z]+' | awk '{ print $NF }')
[ "$(wc -w <<<"$cmds")" -ge 10 ] || fail "xtcam help names only: $cmds"
for c in $cmds; do
	case $c in -*) has "xtcam -" "$c" ;; *) has "xtcam " "$c" ;; esac
done
# MATCH's keywords: the alternatives, their own { } and [ ] left out
syn=$(sed -n '/^MATCH := {/,/}$/p' "$top/docs/rule-syntax.md" | tr '\n' ' ' | sed 's/^MATCH := {//; s/}[[:space:]]*$//')
prev=
while [ "$prev" != "$syn" ]; do prev=$syn; syn=$(sed -E 's/\{[^{}]*\}//g; s/\[[^][]*\]//g' <<<"$syn"); done
kws=$(tr '|' '\n' <<<"$syn" | awk '{ print $1 }')
[ "$(wc -w <<<"$kws")" -ge 20 ] || fail "docs/rule-syntax.md's MATCH has only: $kws"
got=$(comp "xtcam rule add edge prio 1 ")
for k in $kws; do
	[[ " $got " == *" $k "* ]] || fail "completing a rule's keywords: \"$k\" not in \"$got\""
done
assert_eq "ip_proto's names" "$(comp "xtcam rule add edge prio 1 ip_proto ")" "$(words IP_PROTO | sort | xargs)"
assert_eq "eth_type's names" "$(comp "xtcam rule add edge prio 1 eth_type ")" "$( (words ETHTYPE; echo all) | sort | xargs)"
assert_eq "actions" "$(comp "xtcam rule add edge prio 1 action ")" "$(words ACTION | sort | xargs)"
expect "xtcam rule add edge prio 1 arp_op " "reply request"
expect "xtcam rule add edge prio 1 num_of_vlans " "0 1 2"
expect "xtcam rule add edge prio 1 mpls " "lse"
has "xtcam rule add edge prio 1 indev " lo
expect "xtcam import " "tc"
expect "xtcam import tc x.tc --f" "--force"
