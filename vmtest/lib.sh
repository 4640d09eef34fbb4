# shellcheck shell=bash
# Shared by vmtest/run.sh and vmtest/kernel.sh (sourced, not run).
# Host side only: the guest runs guest-init, smoke.sh and nsim-smoke.sh.

VMTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT_DIR=$(cd "$VMTEST_DIR/.." && pwd)

# Kernels, sources and build trees live outside the tracked files.
# XTCAM_VMTEST_CACHE overrides; root uses /var/cache, others $XDG_CACHE_HOME.
if [ -n "${XTCAM_VMTEST_CACHE:-}" ]; then
	CACHE=$XTCAM_VMTEST_CACHE
elif [ "$(id -u)" = 0 ]; then
	CACHE=/var/cache/xtcam-vmtest
else
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xtcam-vmtest
fi

info() { printf 'vmtest: %s\n' "$*" >&2; }
die()  { printf 'vmtest: error: %s\n' "$*" >&2; exit 1; }

need() {  # need CMD PACKAGE: a clear error instead of "command not found"
	command -v "$1" >/dev/null 2>&1 ||
		die "$1 not found (Debian package $2): run 'make vm-deps' as root"
}

# Run "$@" holding an exclusive lock on file $LOCK (one builder at a time).
with_lock() {
	local lock=$1; shift
	mkdir -p "$(dirname "$lock")"
	(
		exec 9>"$lock"
		if ! flock -n 9; then
			info "waiting for $lock (another vmtest holds it)"
			flock 9
		fi
		"$@"
	)
}

# Seconds since $1 (a date +%s value), for timing lines.
since() { echo $(( $(date +%s) - $1 )); }
