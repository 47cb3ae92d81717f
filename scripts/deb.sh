#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# deb.sh: the Debian packages (make deb; docs/packaging.md).
#
# Makes the release tarball (scripts/dist.sh), unpacks it into a fresh
# build-deb/ebb-VERSION/ (never building in the work tree), builds the source
# and binary packages there with dpkg-buildpackage, unsigned, then runs
# lintian on the .changes and fails on any error. The .deb, .dsc and
# .changes files stay in build-deb/; the build log is build-deb/build.log.
# JOBS (default 2) is the build's parallelism.
set -euo pipefail

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)
cd "$root"
out=build-deb
jobs=${JOBS:-2}

fail() {
    echo "deb: $*" >&2
    exit 1
}

for tool in dpkg-buildpackage dh lintian; do
    command -v "$tool" >/dev/null ||
        fail "$tool not found: run scripts/install-deps.sh (as root)"
done

tarball=$(bash scripts/dist.sh build-dist)
version=$(basename "$tarball" .tar.gz)
version=${version#ebb-}

rm -rf "$out"
mkdir -p "$out"
cp "build-dist/ebb_$version.orig.tar.gz" "$out/"
tar -xzf "$tarball" -C "$out"
src=$out/ebb-$version
[[ -d $src/debian ]] ||
    fail "no debian/ in $tarball: commit it (or try it first with EBB_DIST_UNTRACKED=1)"

# The package's upstream version must be the library's: a forgotten
# debian/changelog entry would otherwise ship 0.1.0's name on 0.2.0's code.
package_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
[[ ${package_version%-*} == "$version" ]] ||
    fail "debian/changelog is at $package_version, include/ebb/ebb.h at $version: add a changelog entry (dch -v $version-1)"

echo "deb: building ebb $package_version in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -j"$jobs") >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log" >&2
    fail "dpkg-buildpackage failed (full log: $out/build.log)"
fi

changes=$out/ebb_${package_version}_$(dpkg-architecture -qDEB_HOST_ARCH).changes
[[ -f $changes ]] || fail "no $changes after the build"
ls -1 "$out"/*.deb

# Errors fail the build; warnings and information tags are printed, and each
# one left is explained in docs/packaging.md.
echo "deb: lintian $changes"
lintian --display-info --pedantic --fail-on error "$changes" ||
    fail "lintian reports errors (above)"
