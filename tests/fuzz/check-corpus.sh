#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check-corpus.sh GENERATOR COMMITTED_DIR WORK_DIR
#
# Regenerates the seed corpus into WORK_DIR and demands it equal the committed
# one byte for byte. The generator is deterministic, so a difference means
# the snapshot encoding changed: either a bug, or a deliberate format change
# that must bump the format version and regenerate the corpus
# (ebb_make_corpus tests/fuzz/corpus).
set -euo pipefail

generator=$1
committed=$2
work=$3

if [[ -z $(find "$committed" -maxdepth 1 -type f -print -quit) ]]; then
    echo "check-corpus: $committed holds no seed files" >&2
    exit 1
fi
rm -rf "$work"
mkdir -p "$work"
"$generator" "$work"
if ! diff -r "$committed" "$work" >&2; then
    echo "check-corpus: regenerated corpus differs from $committed" >&2
    exit 1
fi
