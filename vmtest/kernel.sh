#!/usr/bin/env bash
# Fetch or build a vmtest kernel into the cache and print its directory.
#
#   vmtest/kernel.sh stock   Debian's linux-image-6.1.0-*-amd64 (the one
#                            linux-image-amd64 depends on): apt-get download
#                            + dpkg-deb -x + depmod, never installed.
#   vmtest/kernel.sh nsim    built from Debian's linux-source-6.1: tinyconfig
#                            + vmtest/nsim.config, cached by a hash of the
#                            fragment and the source version.
#
# The printed directory holds `vmlinuz` and `kver`; stock also holds
# lib/modules/KVER (modprobe -d DIR).  Progress goes to stderr.
# Env: XTCAM_VMTEST_CACHE (cache dir), XTCAM_VMTEST_STOCK_PKG (another
# linux-image package), XTCAM_VMTEST_JOBS (make -j, default nproc).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Bump when the build steps below change in a way that changes the output.
NSIM_RECIPE=1

usage() { sed -n '2,16s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

# --- stock -----------------------------------------------------------------

stock_pkg() {
	local pkg=${XTCAM_VMTEST_STOCK_PKG:-}
	if [ -z "$pkg" ]; then
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	fi
	[ -n "$pkg" ] || return 1
	echo "$pkg"
}

stock_fetch() {  # stock_fetch PKG VER DIR
	local pkg=$1 ver=$2 dir=$3 tmp=$3.tmp t0
	[ -f "$dir/.ok" ] && return 0
	t0=$(date +%s)
	rm -rf "$tmp"; mkdir -p "$tmp"
	info "stock: downloading $pkg=$ver"
	if ! (cd "$tmp" && apt-get download -q "$pkg=$ver" 2>"$tmp/apt.err" >/dev/null); then
		# stale package lists: refresh once (root only) and retry
		if [ "$(id -u)" = 0 ]; then
			info "stock: apt-get download failed, running apt-get update"
			apt-get update -qq
			(cd "$tmp" && apt-get download -q "$pkg=$ver" >/dev/null) ||
				die "apt-get download $pkg=$ver failed"
		else
			cat "$tmp/apt.err" >&2
			die "apt-get download $pkg=$ver failed (apt-get update as root?)"
		fi
	fi
	info "stock: extracting"
	dpkg-deb -x "$tmp"/*.deb "$tmp/x"
	local kver
	kver=$(ls "$tmp/x/lib/modules")
	[ -f "$tmp/x/boot/vmlinuz-$kver" ] || die "stock: no /boot/vmlinuz-$kver in $pkg"
	mkdir -p "$tmp/out"
	mv "$tmp/x/boot" "$tmp/x/lib" "$tmp/out/"
	# the package's postinst would run depmod: do it in the cache instead
	depmod -b "$tmp/out" "$kver"
	ln -s "boot/vmlinuz-$kver" "$tmp/out/vmlinuz"
	ln -s "boot/config-$kver" "$tmp/out/config"
	echo "$kver" >"$tmp/out/kver"
	echo "$pkg $ver" >"$tmp/out/package"
	rm -rf "$dir"
	mv "$tmp/out" "$dir"
	rm -rf "$tmp"
	touch "$dir/.ok"
	info "stock: $pkg $ver ($kver) ready in $(since "$t0") s"
}

stock() {
	need apt-get apt; need dpkg-deb dpkg; need depmod kmod
	local pkg ver
	pkg=$(stock_pkg) || die "cannot resolve linux-image-amd64's kernel package (apt-get update?)"
	ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
	[ -n "$ver" ] || die "apt-cache knows no version of $pkg (apt-get update?)"
	local dir=$CACHE/stock/${pkg}_$ver
	if [ ! -f "$dir/.ok" ]; then
		with_lock "$CACHE/stock.lock" stock_fetch "$pkg" "$ver" "$dir"
	fi
	echo "$dir"
}

# --- nsim ------------------------------------------------------------------

nsim_hash() {  # inputs that decide the image: fragment, source, recipe
	{ cat "$VMTEST_DIR/nsim.config"; echo "linux-source-6.1 $1"; echo "recipe $NSIM_RECIPE"; } |
		sha256sum | cut -c1-16
}

# Every CONFIG_X=V line of the fragment must be in the final .config, and
# no "# CONFIG_X is not set" option may be set there.
nsim_check_config() {
	local cfg=$1 bad=0 line opt
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$cfg" && continue ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			grep -qE "^$opt=" "$cfg" || continue ;;
		*) continue ;;
		esac
		opt=${line#\# }; opt=${opt%%[= ]*}
		info "nsim: '$line' did not stick (now: $(grep -E "^(# )?${opt}[= ]" "$cfg" || echo unset))"
		bad=1
	done <"$VMTEST_DIR/nsim.config"
	[ "$bad" = 0 ] || die "nsim: config fragment does not apply (missing dependency?)"
}

nsim_build() {  # nsim_build SRCVER OUTDIR
	local srcver=$1 out=$2 tmp=$2.tmp t0 t1 jobs
	[ -f "$out/.ok" ] && return 0
	t0=$(date +%s)
	jobs=${XTCAM_VMTEST_JOBS:-$(nproc)}
	local src=$CACHE/src/linux-source-6.1_$srcver
	local obj=$CACHE/nsim/obj-$srcver   # shared: a changed fragment rebuilds incrementally
	if [ ! -f "$src/.ok" ]; then
		info "nsim: extracting /usr/src/linux-source-6.1.tar.xz"
		rm -rf "$src" "$src.tmp"; mkdir -p "$src.tmp"
		tar -xf /usr/src/linux-source-6.1.tar.xz -C "$src.tmp" --strip-components=1
		mv "$src.tmp" "$src"; touch "$src/.ok"
		info "nsim: extracted in $(since "$t0") s"
	fi
	rm -rf "$tmp"; mkdir -p "$tmp" "$obj"
	local log=$tmp/build.log
	info "nsim: configuring (log: $out/build.log)"
	{
		make -C "$src" O="$obj" tinyconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$VMTEST_DIR/nsim.config" &&
		make -C "$src" O="$obj" olddefconfig
	} >"$log" 2>&1 || { tail -20 "$log" >&2; die "nsim: configuration failed, see $log"; }
	nsim_check_config "$obj/.config"
	t1=$(date +%s)
	info "nsim: make -j$jobs bzImage (about 7 min on 2 cores when cold)"
	if ! make -C "$src" O="$obj" -j"$jobs" bzImage >>"$log" 2>&1; then
		grep -E 'error|Error' "$log" | tail -20 >&2
		die "nsim: kernel build failed, see $log"
	fi
	cp "$obj/arch/x86/boot/bzImage" "$tmp/vmlinuz"
	cp "$obj/.config" "$tmp/config"
	make -s -C "$src" O="$obj" kernelrelease >"$tmp/kver"
	echo "build ${jobs} jobs: $(since "$t1") s, total $(since "$t0") s" >"$tmp/build-time"
	rm -rf "$out"; mv "$tmp" "$out"; touch "$out/.ok"
	info "nsim: $(cat "$out/kver") built: $(cat "$out/build-time")"
}

nsim() {
	need make make; need gcc gcc; need flex flex; need bison bison; need bc bc
	need pahole dwarves
	[ -f /usr/src/linux-source-6.1.tar.xz ] ||
		die "/usr/src/linux-source-6.1.tar.xz missing: run 'make vm-deps' as root"
	local srcver
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
		die "linux-source-6.1 not installed: run 'make vm-deps' as root"
	local out
	out=$CACHE/nsim/$(nsim_hash "$srcver")
	if [ ! -f "$out/.ok" ]; then
		with_lock "$CACHE/nsim.lock" nsim_build "$srcver" "$out"
	fi
	echo "$out"
}

case ${1:-} in
stock) stock ;;
nsim) nsim ;;
-h|--help) usage 0 ;;
*) usage 1 >&2 ;;
esac
