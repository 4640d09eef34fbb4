#!/usr/bin/env bash
# Runs every test binary that was built and prints one closing line:
#   tests: N passed, N failed, N skipped
# unit: no kernel, ASan+UBSan.  prog: BPF_PROG_TEST_RUN (root).  net: veth
# pairs in private namespaces with real traffic (root).  cli-asan: the
# net suite's cli and cli_* tests (or XTCAM_TEST_FILTER's) again, driving the CLI
# built with ASan+UBSan (BUILD_DIR/asan/xtcam): a sanitizer report of a
# command fails its test and the suite.  shell: tests/shell/*.sh, the
# operator's tools (package, man pages, completion, units, metrics) with
# the real programs: exit 0 passed, 77 skipped (the reason on its last
# line), anything else failed.
# Usage: tests/run.sh BUILD_DIR [suite...]   (XTCAM_TEST_FILTER=glob)
set -u
build=${1:-build}; shift || true
suites=${*:-unit prog net cli-asan shell}
export XTCAM_BIN=${XTCAM_BIN:-$build/xtcam}
passed=0 failed=0 skipped=0 status=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

root_ok() {
	[ "$(id -u)" = 0 ] || { echo "  SKIP     $1: needs root (loads BPF programs)"; return 1; }
	return 0
}

# one shell test: tests/shell/NAME.sh BUILD_DIR (XTCAM_TEST_FILTER: shell/NAME)
run_shell() {
	local t name out rc
	for t in "$(dirname "$0")"/shell/*.sh; do
		name=$(basename "$t" .sh)
		[ "$name" = lib ] && continue
		case shell/$name in ${XTCAM_TEST_FILTER:-*}) ;; *) continue ;; esac
		start=$SECONDS
		out=$("$t" "$build" 2>&1); rc=$?
		if [ $rc = 0 ]; then
			echo "    [PASS] shell/$name ($((SECONDS - start))s)"
			passed=$((passed + 1))
		elif [ $rc = 77 ]; then
			echo "    [SKIP] shell/$name: $(printf '%s\n' "$out" | tail -1)"
			skipped=$((skipped + 1))
		else
			printf '%s\n' "$out" | tail -30 | sed 's/^/    /'
			echo "    [FAIL] shell/$name: exit $rc"
			failed=$((failed + 1)); status=1
		fi
	done
}

for s in $suites; do
	if [ "$s" = shell ]; then
		echo "  TEST     shell"
		run_shell
		continue
	fi
	bin=$build/tests/$s
	filter=${XTCAM_TEST_FILTER:-}
	cli=$XTCAM_BIN
	if [ "$s" = cli-asan ]; then
		bin=$build/tests/net cli=$build/asan/xtcam filter=${filter:-cli*/*}
		[ -x "$cli" ] || continue
	fi
	[ -x "$bin" ] || continue
	case $s in prog|net|cli-asan) root_ok "$s" || { skipped=$((skipped + 1)); continue; } ;; esac
	echo "  TEST     $s"
	args=()
	[ -n "$filter" ] && args+=(--filter "$filter")
	# net tests share the machine's network stack: one at a time
	case $s in net|cli-asan) args+=(-j1) ;; esac
	# --verbose for the [SKIP] lines and their reasons (criterion counts a
	# skipped test in neither Tested nor Passing); filtered-out tests show
	# as "Test is disabled" and are not skips
	raw=$(XTCAM_BIN=$cli "$bin" --verbose "${args[@]}" 2>&1); rc=$?
	out=$(printf '%s\n' "$raw" | grep -vE '^\[(RUN |PASS)\]|^\[====\] Running|Test is disabled$|^\[----\] +$|Criterion v')
	printf '%s\n' "$out" | sed 's/^/    /'
	line=$(printf '%s\n' "$out" | grep -E 'Synthesis: Tested: [0-9]+' | tail -1)
	if [ -z "$line" ]; then
		echo "  FAIL     $s: no synthesis line (crashed?), exit $rc"
		failed=$((failed + 1)); status=1; continue
	fi
	t=$(sed -E 's/.*Tested: ([0-9]+).*/\1/' <<<"$line")
	p=$(sed -E 's/.*Passing: ([0-9]+).*/\1/' <<<"$line")
	f=$(sed -E 's/.*Failing: ([0-9]+).*/\1/' <<<"$line")
	c=$(sed -E 's/.*Crashing: ([0-9]+).*/\1/' <<<"$line")
	sk=$(printf '%s\n' "$out" | grep -cE '\[SKIP\]' || true)
	passed=$((passed + p)); failed=$((failed + f + c)); skipped=$((skipped + sk))
	[ "$rc" = 0 ] && [ $((f + c)) = 0 ] || status=1
	# a sanitizer report fails the suite even when every test passed
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' <<<"$out"; then
		echo "  FAIL     $s: sanitizer report"
		failed=$((failed + 1)); status=1
	fi
	: "$t"
done
# `make install` into a scratch root: the installed binary is self-contained
# (the BPF objects are in its skeletons) and answers
if [ -z "${XTCAM_TEST_FILTER:-}" ] && [ -x "$build/xtcam" ] && [ -f Makefile ]; then
	echo "  TEST     install"
	root=$(mktemp -d)
	if make --no-print-directory -s install BUILD="$build" DESTDIR="$root" PREFIX=/usr >/dev/null &&
	   "$root/usr/sbin/xtcam" help 2>&1 | grep -q '^Usage: xtcam' &&
	   [ -f "$root/usr/include/xtcam/flow_block.h" ] && [ -f "$root/usr/lib/libxtcam.a" ]; then
		passed=$((passed + 1))
	else
		echo "  FAIL     install: make install DESTDIR=$root gave no working xtcam"
		failed=$((failed + 1)); status=1
	fi
	rm -rf "$root"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $status
