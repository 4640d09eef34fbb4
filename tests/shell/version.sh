#!/usr/bin/env bash
# One version: VERSION, what xtcam -V prints (the build and what make
# install installed), the man pages' footer and the Debian package's
# (debian/changelog; deb.sh checks the built package), and the git tags.
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
# the tags: each vX.Y.Z tags a tree whose VERSION is X.Y.Z, and none is
# newer than VERSION (a tree without git or tags, as a tarball or a clone
# without them, has nothing to check here)
tags=$(git -C "$top" tag -l 'v[0-9]*' 2>/dev/null || true)
for t in $tags; do
	assert_eq "VERSION at tag $t" "$(git -C "$top" show "$t:VERSION" 2>/dev/null)" "${t#v}"
done
if [ -n "$tags" ]; then
	newest=$( (sed 's/^v//' <<<"$tags"; echo "$version") | sort -V | tail -1)
	assert_eq "VERSION against the newest tag" "$version" "$newest"
	echo "tags: $(xargs <<<"$tags"); VERSION $version"
else
	echo "no tags to check"
fi
