#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# check-spdx.sh [ROOT]: every source, header, script and CMake file of the
# tree at ROOT (default: the repository this script is in) names its license
# with "SPDX-License-Identifier: BSD-2-Clause" in its first three lines (a
# shebang may come first). In a git work tree the files are the tracked ones
# (git ls-files); elsewhere (an unpacked release tarball) every file under
# ROOT. Prints each file that lacks the line and exits 1 if any does, 0 if
# none, 2 on a usage error.
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
if [[ ! -d $root ]]; then
    echo "check-spdx: $root: not a directory" >&2
    exit 2
fi
cd "$root"

# What counts as source: C, shell, CMake, gnuplot, make, pkg-config and CMake
# templates, the Debian rules file, the CI entry point and the man pages.
is_source() {
    case "$1" in
        *.c | *.h | *.sh | *.cmake | *.gp | *.pc.in | *.cmake.in) return 0 ;;
        CMakeLists.txt | */CMakeLists.txt | Makefile | */Makefile) return 0 ;;
        .ci/run | debian/rules) return 0 ;;
        *.1) return 0 ;; # man pages: a roff comment, .\" SPDX-..., on line 1
    esac
    return 1
}

# Only a tree that is itself the top of a git work tree is listed by git: a
# copy unpacked inside another repository's build directory is not tracked.
if [[ $(git rev-parse --show-toplevel 2>/dev/null) == "$(pwd -P)" ]]; then
    list_files() { git ls-files; }
else
    list_files() { find . -type f ! -path './build*' | sed 's|^\./||'; }
fi

missing=0
checked=0
while IFS= read -r file; do
    is_source "$file" || continue
    [[ -f $file ]] || continue
    checked=$((checked + 1))
    if ! head -n 3 -- "$file" | grep -q 'SPDX-License-Identifier: BSD-2-Clause'; then
        echo "check-spdx: $file: no 'SPDX-License-Identifier: BSD-2-Clause' in its first 3 lines" >&2
        missing=$((missing + 1))
    fi
done < <(list_files)

if ((checked == 0)); then
    echo "check-spdx: no source files found under $root" >&2
    exit 1
fi
if ((missing > 0)); then
    echo "check-spdx: $missing of $checked source files lack the license line" >&2
    exit 1
fi
echo "check-spdx: $checked source files carry the license line"
