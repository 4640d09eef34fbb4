#!/bin/bash
# In the guest: run each command of a list (vmtest/smoke.list, full.list)
# and print one closing line "smoke: N passed, N failed, N skipped".
# A line is "[KERNEL[,KERNEL]:] COMMAND", run with bash -c in the project
# dir; a kernel prefix limits it to those kernels ($XTCAM_VMTEST_KERNEL).
# A command exiting 77 counts as skipped.  Blank lines and # comments are
# ignored.  Exit status 0 when nothing failed.
set -uo pipefail
list=${1:?usage: smoke.sh LIST}
kernel=${XTCAM_VMTEST_KERNEL:-host}
passed=0 failed=0 skipped=0 n=0 failures=()

while IFS= read -r line || [ -n "$line" ]; do
	line=${line%%#*}  # comments (no '#' inside commands, please)
	[[ $line =~ ^[[:space:]]*$ ]] && continue
	n=$((n + 1))
	if [[ $line =~ ^[[:space:]]*([a-z,]+):[[:space:]]+(.*)$ ]]; then
		case ,${BASH_REMATCH[1]}, in *,"$kernel",*) ;; *) continue ;; esac
		line=${BASH_REMATCH[2]}
	fi
	echo "== $line"
	t0=$(date +%s.%N)
	bash -c "$line" </dev/null 2>&1 | sed 's/^/   /'
	rc=${PIPESTATUS[0]}
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) passed=$((passed + 1)); echo "== ok   (${t} s) $line" ;;
	77) skipped=$((skipped + 1)); echo "== skip (${t} s) $line" ;;
	*) failed=$((failed + 1)); failures+=("$line"); echo "== FAIL (exit $rc, ${t} s) $line" ;;
	esac
done <"$list"

for f in "${failures[@]}"; do echo "smoke: FAILED: $f"; done
echo "smoke: $passed passed, $failed failed, $skipped skipped ($kernel, $(uname -r))"
[ "$failed" = 0 ]
