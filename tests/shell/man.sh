#!/usr/bin/env bash
# The man pages come from docs/: xtcam(8) from docs/xtcam.md, xtcam-rules(7)
# from docs/rule-syntax.md; man renders them, whatis finds their NAME; xtcam(8)
# describes every command of xtcam help and names the files it installs.
. "$(dirname "$0")/lib.sh"
need pandoc
need man
need lexgrog
make -C "$top" --no-print-directory -s man BUILD="$build" >/dev/null || fail "make man"
assert_eq "xtcam(8) whatis" "$(lexgrog "$build/man/xtcam.8" | sed 's/.*: "//; s/"$//')" \
	"xtcam - $(sed -n '/^## NAME/,/^## SYNOPSIS/{s/^xtcam - //p}' "$top/docs/xtcam.md")"
lexgrog "$build/man/xtcam-rules.7" | grep -q '"xtcam-rules - ' || fail "xtcam-rules(7): no NAME"
page=$(MANWIDTH=200 man -l "$build/man/xtcam-rules.7" 2>/dev/null)
# every section heading of docs/rule-syntax.md is a section of the page
while read -r h; do
	grep -qF "$h" <<<"$page" || fail "xtcam-rules(7) has no \"$h\" of docs/rule-syntax.md"
done < <(sed -n 's/^##\{1,2\} //p' "$top/docs/rule-syntax.md")
page=$(MANWIDTH=200 man -l "$build/man/xtcam.8" 2>/dev/null)
# every object of xtcam's usage is in xtcam(8)
objs=$("$XTCAM" help | sed -n 's/.*OBJECT := { \(.*\) }/\1/p' | tr -d '|')
[ -n "$objs" ] || fail "xtcam help lists no OBJECT"
for o in $objs; do
	grep -q "^ *$o " <<<"$page" || fail "xtcam(8) does not describe \"$o\""
done
# ... and every command of its usage (save, apply, -batch, import, ...)
cmds=$("$XTCAM" help 2>&1 | grep -oE '(^ *|; |Usage: )xtcam (\[[^]]*\] )*-?[a-z]+' | awk '{ print $NF }')
[ "$(wc -w <<<"$cmds")" -ge 5 ] || fail "xtcam help names only these commands: $cmds"
for c in $cmds; do
	grep -qE -- "^ *(\[-force\] )?$c( |\$)" <<<"$page" || fail "xtcam(8) does not describe \"$c\""
done
# every file the package installs from contrib/systemd, by its name
for f in "$top"/contrib/systemd/*; do
	n=$(basename "$f")
	case $n in xtcam.conf | xtcam.default) continue ;; esac
	grep -qF -- "$n" <<<"$page" || fail "xtcam(8) does not name $n"
done
