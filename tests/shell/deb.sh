#!/usr/bin/env bash
# The Debian packages: make deb (dpkg-buildpackage -us -uc -b) builds them,
# lintian finds no error, their version is VERSION's; then
# `apt-get install ./xtcam_*.deb` into a bare Debian 12 (a debootstrap
# chroot, kept in /var/cache/xtcam-tests: debootstrap runs once)
# pulls runtime libraries only, the xtcam it installed filters traffic
# on a veth pair, and its udev rule starts the hotplug unit for a new device;
# in another such chroot, Build-Depends and build-essential alone
# (apt-get build-dep) build the same packages.
. "$(dirname "$0")/lib.sh"
need_root
need dpkg-buildpackage
need lintian
need debootstrap
need dh
version=$(cat "$top/VERSION")
assert_eq "debian/changelog's version" "$(cd "$top" && dpkg-parsechangelog -S Version)" "$version"
t0=$SECONDS
make -C "$top" --no-print-directory -s deb BUILD="$build" >/dev/null || {
	tail -20 "$build/deb/build.log" >&2; fail "make deb"; }
echo "make deb: $((SECONDS - t0))s"
deb=$build/deb/xtcam_${version}_amd64.deb
[ -f "$deb" ] || fail "no $deb: $(ls "$build/deb")"
[ -f "$build/deb/libxtcam-dev_${version}_amd64.deb" ] || fail "no libxtcam-dev package"
dev=$(dpkg-deb -c "$build/deb/libxtcam-dev_${version}_amd64.deb")
grep -q '/libxtcam\.a$' <<<"$dev" || fail "libxtcam-dev has no libxtcam.a"
grep -q '/usr/include/xtcam/loader\.h$' <<<"$dev" || fail "libxtcam-dev has no headers"
files=$(dpkg-deb -c "$deb")
assert_eq "the package's version" "$(dpkg-deb -f "$deb" Version)" "$version"
for f in usr/sbin/xtcam usr/share/man/man8/xtcam.8.gz usr/share/man/man7/xtcam-rules.7.gz \
	 lib/systemd/system/xtcam.service etc/xtcam/xtcam.conf lib/udev/rules.d/90-xtcam.rules \
	 usr/share/bash-completion/completions/xtcam; do
	grep -q " \./$f\$" <<<"$files" || fail "the package has no /$f"
done
lint=$(lintian --fail-on error "$build/deb/xtcam_${version}_amd64.changes" 2>&1) ||
	fail "lintian: $(grep '^E:' <<<"$lint")"
echo "lintian: no error; warnings: $(grep '^W:' <<<"$lint" | cut -d' ' -f2-3 | sort | uniq -c | xargs)"

# a bare Debian 12, made once
cache=/var/cache/xtcam-tests
base=$cache/bookworm
mirror=http://deb.debian.org/debian
if [ ! -x "$base/usr/bin/apt-get" ]; then
	curl -fsS -m 10 -o /dev/null "$mirror/dists/bookworm/Release" ||
		skip "the Debian mirror $mirror cannot be reached (for debootstrap)"
	mkdir -p "$cache"
	rm -rf "$base.new"
	debootstrap --variant=minbase bookworm "$base.new" "$mirror" > "$cache/debootstrap.log" 2>&1 ||
		fail "debootstrap: $(tail -3 "$cache/debootstrap.log")"
	mv "$base.new" "$base"
fi
curl -fsS -m 10 -o /dev/null "$mirror/dists/bookworm/Release" ||
	skip "the Debian mirror $mirror cannot be reached (for the runtime libraries)"
mkdir -p "$cache/archives/partial"
ns=tshd$$
veth_pair "$ns"
work=$(scratch)
cp "$deb" "$work/"
mkdir -p "$work/upper" "$work/work" "$work/root"
# in a mount namespace of its own: every mount goes with it
unshare --mount --propagation private bash -eu -s "$base" "$work" "$cache" "$ns" \
	"$(basename "$deb")" "$version" <<'INNER'
base=$1 work=$2 cache=$3 ns=$4 deb=$5 version=$6
r=$work/root
mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/work" "$r"
mount -t proc proc "$r/proc"
# sysfs of the test's namespace: its veth is what udev sees below
nsenter --net="/run/netns/$ns-a" mount -t sysfs sysfs "$r/sys"
mount -t bpf bpf "$r/sys/fs/bpf"
mount --rbind /dev "$r/dev"
mkdir -p "$r/run/netns" && mount --rbind /run/netns "$r/run/netns"
mount --bind "$cache/archives" "$r/var/cache/apt/archives"
cp /etc/resolv.conf "$r/etc/resolv.conf"
cp "$work/$deb" "$r/tmp/"
inroot() { chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
inroot dpkg-query -W -f '${Package}\n' | sort > "$work/before"
inroot apt-get -qq update
inroot env DEBIAN_FRONTEND=noninteractive apt-get -y -qq install "/tmp/$deb" > "$work/apt.log" 2>&1 ||
	{ cat "$work/apt.log" >&2; exit 1; }
inroot dpkg-query -W -f '${Package}\n' | sort > "$work/after"
new=$(comm -13 "$work/before" "$work/after" | xargs)
echo "apt-get install ./$deb installed: $new"
for p in $new; do
	case $p in
	xtcam) ;;
	*-dev | clang* | llvm* | gcc* | cpp* | bpftool | pandoc* | make) echo "FAIL: pulled $p" >&2; exit 1 ;;
	lib*) ;;
	*) echo "FAIL: pulled $p, not a runtime library" >&2; exit 1 ;;
	esac
done
[ "$(inroot xtcam -V | cut -d' ' -f1-2)" = "xtcam $version" ] || { echo "FAIL: xtcam -V: $(inroot xtcam -V)" >&2; exit 1; }
ls "$r"/etc/systemd/system/*.wants/xtcam* 2>/dev/null && { echo "FAIL: the unit is enabled" >&2; exit 1; }
inroot xtcam block add edge capacity 64
inroot xtcam rule add edge prio 10 ip_proto icmp action drop
inroot xtcam bind edge dev ta netns "$ns-a" mode generic
ip netns exec "$ns-b" ping -q -c 3 -i 0.2 -W 1 10.9.0.1 >/dev/null 2>&1 && { echo "FAIL: ping went through" >&2; exit 1; }
inroot xtcam rule show edge | grep -q 'packets 3 ' || { echo "FAIL: rule show: $(inroot xtcam rule show edge)" >&2; exit 1; }
inroot xtcam metrics --rules | grep -qx 'xtcam_rule_packets_total{block="edge",handle="1",prio="10",action="drop"} 3' ||
	{ echo "FAIL: metrics in the chroot" >&2; exit 1; }
# the package's units, their commands run as systemd runs them ($$ is $,
# the EnvironmentFile read): the metrics service writes node_exporter's
# textfile; the boot unit applies the empty example configuration
unit() { sed -n "s/^ExecStart=//p" "$r/lib/systemd/system/$1" | sed 's/\$\$/$/g'; }
mkdir -p "$r/var/lib/prometheus/node-exporter"
inroot sh -c "set -a; . /etc/default/xtcam; $(unit xtcam-metrics.service)" ||
	{ echo "FAIL: xtcam-metrics.service: exit $?" >&2; exit 1; }
grep -qx 'xtcam_block_rules{block="edge"} 1' "$r/var/lib/prometheus/node-exporter/xtcam.prom" ||
	{ echo "FAIL: xtcam-metrics.service wrote no /var/lib/prometheus/node-exporter/xtcam.prom of edge" >&2; exit 1; }
inroot xtcam flush
inroot sh -c "$(unit xtcam.service)" || { echo "FAIL: xtcam.service on the example configuration: exit $?" >&2; exit 1; }
[ -z "$(inroot xtcam block show)" ] || { echo "FAIL: the example configuration made blocks" >&2; exit 1; }
# the package's udev rule, by the real udev (installed now, after the
# check above; its daemon kept from starting): an added network device
# wants xtcam-bind@DEV.service
printf '#!/bin/sh\nexit 101\n' > "$r/usr/sbin/policy-rc.d" && chmod +x "$r/usr/sbin/policy-rc.d"
inroot env DEBIAN_FRONTEND=noninteractive apt-get -y -qq install --no-install-recommends udev \
	> "$work/apt-udev.log" 2>&1 || { cat "$work/apt-udev.log" >&2; exit 1; }
inroot udevadm test --action=add /sys/class/net/ta > "$work/udev.log" 2>&1 || true
grep -q 'SYSTEMD_WANTS=xtcam-bind@ta.service' "$work/udev.log" ||
	{ tail -20 "$work/udev.log" >&2; echo "FAIL: udev: no xtcam-bind@ta.service" >&2; exit 1; }
inroot udevadm test --action=add /sys/class/net/lo > "$work/udev-lo.log" 2>&1 || true
grep -q 'xtcam-bind@' "$work/udev-lo.log" && { echo "FAIL: udev: lo wants xtcam-bind" >&2; exit 1; }
echo "udev: ta wants xtcam-bind@ta.service"
INNER

# Build-Depends are what the build needs: a bare Debian 12 with them and
# build-essential only builds packages of the same files
bwork=$(scratch)
mkdir -p "$bwork/upper" "$bwork/work" "$bwork/root"
t0=$SECONDS
unshare --mount --propagation private bash -eu -s "$base" "$bwork" "$cache" "$build/deb/xtcam-$version" \
	"$version" <<'INNER' || fail "building in a chroot with Build-Depends only"
base=$1 work=$2 cache=$3 src=$4 version=$5
r=$work/root
mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/work" "$r"
mount -t proc proc "$r/proc"
mount --bind "$cache/archives" "$r/var/cache/apt/archives"
cp /etc/resolv.conf "$r/etc/resolv.conf"
mkdir -p "$r/src" && cp -a "$src" "$r/src/"
inroot() { chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root "$@"; }
inroot apt-get -qq update
inroot env DEBIAN_FRONTEND=noninteractive apt-get -y -qq --no-install-recommends \
	build-dep "/src/xtcam-$version" > "$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; exit 1; }
inroot sh -c "cd /src/xtcam-$version && dpkg-buildpackage -us -uc -b" > "$work/build.log" 2>&1 ||
	{ tail -30 "$work/build.log" >&2; exit 1; }
mv "$r"/src/*.deb "$work/"
INNER
for p in xtcam libxtcam-dev; do
	f=${p}_${version}_amd64.deb
	[ -f "$bwork/$f" ] || fail "the chroot with Build-Depends built no $f"
	assert_eq "the files of $f built with Build-Depends only" \
		"$(dpkg-deb -c "$bwork/$f" | awk '{ print $NF }')" "$(dpkg-deb -c "$build/deb/$f" | awk '{ print $NF }')"
done
echo "built with Build-Depends only: $((SECONDS - t0))s"
