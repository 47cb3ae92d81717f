#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# dist.sh [OUT_DIR]: the release tarball, from git.
#
# Writes OUT_DIR/ebb-VERSION.tar.gz (default OUT_DIR: build-dist), whose one
# top directory is ebb-VERSION/, and beside it ebb_VERSION.orig.tar.gz, the
# upstream tarball of the Debian source format 3.0 (quilt) (scripts/deb.sh):
# the same files without debian/, which that format keeps apart (a debian/
# inside the upstream tarball is what lintian's no-debian-changes flags).
# VERSION is EBB_VERSION_STRING of include/ebb/ebb.h, the one place the
# version lives (cmake/EbbVersion.cmake reads it too).
#
# Only tracked files go in, as they are in the work tree: `git stash create`
# records uncommitted changes to tracked files in a commit object without
# touching the work tree, the index or any ref (it prints nothing when the
# tree is clean, and HEAD is archived). Untracked files are left out and
# named on stderr, so a developer sees what a release would miss; with
# EBB_DIST_UNTRACKED=1 they go in too (those not in .gitignore), for trying
# new files before they are committed: they are added to a temporary index,
# never to the real one. EBB_DIST_REF=<tag, commit or tree> archives that
# instead of the work tree (a release from its tag: EBB_DIST_REF=v0.1.0).
# Prints the tarball's path on stdout.
set -euo pipefail

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)
cd "$root"
out_dir=${1:-build-dist}

# A tree with the work tree's tracked and untracked files (EBB_DIST_UNTRACKED).
tree_with_untracked() {
    local index
    index=$(mktemp)
    # shellcheck disable=SC2064  # expand $index now
    trap "rm -f '$index'" RETURN
    GIT_INDEX_FILE=$index git read-tree HEAD
    GIT_INDEX_FILE=$index git add -A
    GIT_INDEX_FILE=$index git write-tree
}

if [[ -n ${EBB_DIST_REF:-} ]]; then
    tree=$EBB_DIST_REF
    git rev-parse --verify --quiet "$tree^{tree}" >/dev/null ||
        { echo "dist: EBB_DIST_REF=$tree names no tree" >&2; exit 1; }
elif [[ ${EBB_DIST_UNTRACKED:-0} == 1 ]]; then
    tree=$(tree_with_untracked)
else
    # A throwaway commit: an identity is set for it so that a clone without
    # user.name/user.email configured (CI) still gets one.
    tree=$(git -c user.name=ebb-dist -c user.email=ebb-dist@localhost stash create)
    tree=${tree:-HEAD}
fi

version=$(git show "$tree:include/ebb/ebb.h" |
    sed -n 's/^#define EBB_VERSION_STRING "\([0-9][0-9.]*\)"$/\1/p')
if [[ ! $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "dist: no EBB_VERSION_STRING \"X.Y.Z\" in include/ebb/ebb.h" >&2
    exit 1
fi

untracked=$(git ls-files --others --exclude-standard)
if [[ -n $untracked && -z ${EBB_DIST_REF:-} && ${EBB_DIST_UNTRACKED:-0} != 1 ]]; then
    echo "dist: untracked, so not in the tarball:" >&2
    git ls-files --others --exclude-standard | sed 's/^/  /' >&2
fi

mkdir -p "$out_dir"
tarball=$out_dir/ebb-$version.tar.gz
# gzip -n: no name or time stamp in the gzip header, so the same tree gives
# the same bytes.
git archive --format=tar --prefix="ebb-$version/" "$tree" | gzip -n -9 >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
git archive --format=tar --prefix="ebb-$version/" "$tree" ':(exclude)debian' |
    gzip -n -9 >"$out_dir/ebb_$version.orig.tar.gz"
echo "$tarball"
