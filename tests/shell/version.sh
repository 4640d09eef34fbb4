#!/usr/bin/env bash
# One version: VERSION, what xtcam -V prints (the build and what make
# install installed), the man pages' footer and the Debian package's
# (debian/changelog; deb.sh checks the built package).
. "$(dirname "$0")/lib.sh"
version=$(cat "$top/VERSION")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "VERSION \"$version\" is not MAJOR.MINOR.PATCH"
assert_eq "xtcam -V" "$("$XTCAM" -V | cut -d' ' -f1-2)" "xtcam $version"
root=$(scratch)
make -C "$top" --no-print-directory -s install BUILD="$build" DESTDIR="$root" PREFIX=/usr >/dev/null ||
	fail "make install"
assert_eq "the installed xtcam -V" "$("$root/usr/sbin/xtcam" --version | cut -d' ' -f1-2)" "xtcam $version"
for m in man8/xtcam.8 man7/xtcam-rules.7; do
	grep -q "^\.TH .*\"xtcam $version\"" "$root/usr/share/man/$m" ||
		fail "$m: not of version $version: $(grep '^\.TH' "$root/usr/share/man/$m")"
done
if command -v dpkg-parsechangelog >/dev/null; then
	assert_eq "debian/changelog" "$(cd "$top" && dpkg-parsechangelog -S Version)" "$version"
fi
