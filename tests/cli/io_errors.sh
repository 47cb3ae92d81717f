#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# io_errors.sh EBB GEN_STREAM WORK_DIR
#
# I/O failures exit 1 with one message: an input that cannot be opened or
# read, an output device that is full, a closed stdout. A reader that goes
# away (EPIPE) ends the run with status 1 and no message.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GEN=$(absolute_path "$2")
WORK=$(absolute_path "$3")
fresh_dir "$WORK"

printf 'a\nb\na\n' >"$WORK/small.in"

run_capture "$WORK/missing" /dev/null "$EBB" dedup "$WORK/no-such-file"
check "missing input: exit 1 (got $status)" equals "$status" 1
check "missing input: one message" stderr_is "$WORK/missing.err" \
    "ebb dedup: $WORK/no-such-file: No such file or directory"

# Inputs are read in order; the run stops at the first one that fails.
run_capture "$WORK/second-missing" /dev/null \
    "$EBB" dedup "$WORK/small.in" "$WORK/no-such-file" "$WORK/small.in"
check "second input missing: exit 1" equals "$status" 1
check "second input missing: first input was processed" \
    equals "$(cat "$WORK/second-missing.out")" "$(printf 'a\nb')"
check "second input missing: one message" stderr_is "$WORK/second-missing.err" \
    "ebb dedup: $WORK/no-such-file: No such file or directory"

run_capture "$WORK/directory" /dev/null "$EBB" dedup "$WORK"
check "directory as input: exit 1" equals "$status" 1
check "directory as input: one message" stderr_is "$WORK/directory.err" \
    "ebb dedup: $WORK: Is a directory"

# stdin that is closed.
"$EBB" dedup <&- >"$WORK/closed-stdin.out" 2>"$WORK/closed-stdin.err"
status=$?
check "closed stdin: exit 1" equals "$status" 1
check "closed stdin: one message" stderr_starts_with "$WORK/closed-stdin.err" \
    "ebb dedup: standard input: "

# Full output device: small outputs fail at the final flush, large ones
# during the run.
"$GEN" --lines 200000 --distinct 100000000 >"$WORK/large.in"
for input in small large; do
    run_capture "$WORK/full-$input" "$WORK/$input.in" /bin/sh -c \
        'exec "$@" >/dev/full' _ "$EBB" dedup
    check "dedup $input input to /dev/full: exit 1 (got $status)" \
        equals "$status" 1
    check "dedup $input input to /dev/full: one message" \
        stderr_is "$WORK/full-$input.err" \
        "ebb dedup: write error: No space left on device"
done
run_capture "$WORK/full-params" /dev/null /bin/sh -c \
    'exec "$@" >/dev/full' _ "$EBB" params --window 1000 --fp 0.01
check "params to /dev/full: exit 1 (got $status)" equals "$status" 1
check "params to /dev/full: one message" stderr_is "$WORK/full-params.err" \
    "ebb params: write error: No space left on device"
for args in --version --help "dedup --help" "params --help"; do
    # shellcheck disable=SC2086 # the words are the arguments
    run_capture "$WORK/full-help" /dev/null /bin/sh -c \
        'exec "$@" >/dev/full' _ "$EBB" $args
    check "ebb $args to /dev/full: exit 1 (got $status)" equals "$status" 1
done

# Closed stdout.
"$EBB" dedup <"$WORK/small.in" >&- 2>"$WORK/closed-stdout.err"
status=$?
check "closed stdout: exit 1" equals "$status" 1
check "closed stdout: one message" stderr_starts_with "$WORK/closed-stdout.err" \
    "ebb dedup: write error: "

# A reader that stops early: EPIPE ends the run quietly with status 1,
# whether SIGPIPE was ignored or not by the caller.
"$EBB" dedup <"$WORK/large.in" 2>"$WORK/epipe.err" | head -n 1 >/dev/null
statuses=("${PIPESTATUS[@]}")
check "reader gone: ebb exits 1 (got ${statuses[0]})" equals "${statuses[0]}" 1
check "reader gone: no message" test ! -s "$WORK/epipe.err"
check "reader gone: the output was large enough to notice" \
    test "$(wc -c <"$WORK/large.in")" -gt 1000000

finish
