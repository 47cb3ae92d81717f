#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# usage.sh EBB WORK_DIR
#
# Every bad command line exits 2 with exactly one line on stderr naming the
# bad argument, and prints nothing on stdout. --help and --version exit 0.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
WORK=$(absolute_path "$2")
fresh_dir "$WORK"

# expect_usage <expected stderr line> <ebb arguments...>
expect_usage() {
    local expected=$1
    shift
    run_capture "$WORK/usage" /dev/null "$EBB" "$@"
    check "ebb $*: exit status 2 (got $status)" equals "$status" 2
    check "ebb $*: the one expected stderr line" \
        stderr_is "$WORK/usage.err" "$expected"
    check "ebb $*: nothing on stdout" test ! -s "$WORK/usage.out"
}

# expect_usage_prefix <stderr prefix> <ebb arguments...>: for messages that
# end with the library's ebb_strerror text.
expect_usage_prefix() {
    local prefix=$1
    shift
    run_capture "$WORK/usage" /dev/null "$EBB" "$@"
    check "ebb $*: exit status 2 (got $status)" equals "$status" 2
    check "ebb $*: one stderr line" \
        stderr_starts_with "$WORK/usage.err" "$prefix"
    check "ebb $*: nothing on stdout" test ! -s "$WORK/usage.out"
}

positive='must be a positive integer'
too_large='must be a positive integer below 2^64 (at most 2^53 when written like 1e6)'
fp_range='must be a number between 0 and 1 (exclusive)'

# The top level.
expect_usage "ebb: missing command (run 'ebb --help' for the list)"
expect_usage "ebb: unknown command 'frobnicate' (run 'ebb --help' for the list)" \
    frobnicate
expect_usage "ebb: unknown option '--frob'" --frob
expect_usage "ebb: unknown option '-x'" -x
expect_usage "ebb: option '--version' does not take an argument" --version=2

# dedup: numbers.
for bad in 0 -5 +5 1.5 1e6x '' ' 10' '10 ' 0x10 inf nan 1e-3 abc; do
    expect_usage "ebb dedup: invalid --window '$bad': $positive" \
        dedup --window "$bad"
done
for bad in 1e30 18446744073709551616 1e16; do
    expect_usage "ebb dedup: invalid --window '$bad': $too_large" \
        dedup --window "$bad"
done
expect_usage "ebb dedup: invalid --window '0': $positive" dedup --window=0
for bad in 0 1 1.5 -0.1 nan inf 0.5x '' ' 0.1' 1e-400; do
    expect_usage "ebb dedup: invalid --fp '$bad': $fp_range" dedup --fp "$bad"
done
for bad in 0 -1 abc 1e999 ''; do
    expect_usage "ebb dedup: invalid --max-npws '$bad': must be a positive number" \
        dedup --max-npws "$bad"
done
expect_usage "ebb dedup: invalid --state '': must be a file name" \
    dedup --state ''

# dedup: options.
expect_usage "ebb dedup: unknown option '--foo'" dedup --foo
expect_usage "ebb dedup: unknown option '-x'" dedup -x
expect_usage "ebb dedup: option '--window' requires an argument" dedup --window
expect_usage "ebb dedup: option '--state' requires an argument" dedup --state
expect_usage "ebb dedup: option '--stats' does not take an argument" \
    dedup --stats=yes
# The error is found before any input is read or any state is touched.
expect_usage "ebb dedup: invalid --window '0': $positive" \
    dedup --state "$WORK/never-created" --window 0 /nonexistent
check "a usage error creates no state file" test ! -e "$WORK/never-created"

# dedup and params: the block options.
block_bits='must be 64 or 512'
block_hashes='must be 1, 2, 4 or 8'
for command in dedup params; do
    for bad in 0 1 32 63 65 128 256 1024 -64 64.5 abc '' ' 64' 1e30; do
        expect_usage "ebb $command: invalid --block-bits '$bad': $block_bits" \
            $command --block-bits "$bad"
    done
    for bad in 0 3 5 6 7 16 32 -1 2.5 x '' 1e30; do
        expect_usage "ebb $command: invalid --block-hashes '$bad': $block_hashes" \
            $command --block-hashes "$bad"
    done
    expect_usage "ebb $command: option '--blocked' does not take an argument" \
        $command --blocked=yes
    expect_usage "ebb $command: option '--block-bits' requires an argument" \
        $command --block-bits
    expect_usage "ebb $command: option '--block-hashes' requires an argument" \
        $command --block-hashes
done
expect_usage "ebb dedup: invalid --block-bits '128': $block_bits" \
    dedup --blocked --block-bits 128 --state "$WORK/never-created" /nonexistent
check "a bad --block-bits creates no state file" test ! -e "$WORK/never-created"
# --fill describes plain slices only.
expect_usage "ebb params: --fill cannot be combined with --blocked" \
    params --k 2 --l 5 --blocked --fill linear
expect_usage "ebb params: --fill cannot be combined with --blocked" \
    params --k 2 --l 5 --fill linear --block-bits 64
expect_usage "ebb params: --fill cannot be combined with --blocked" \
    params --k 2 --l 5 --fill geometric --block-hashes 4
# The other combination rules hold with --blocked too.
expect_usage "ebb params: --k and --l must be given together" \
    params --k 2 --blocked
expect_usage "ebb params: --fp cannot be combined with --k and --l" \
    params --k 2 --l 5 --fp 0.01 --blocked
expect_usage "ebb params: give --window and --fp, or --k and --l (run 'ebb params --help')" \
    params --window 1000 --blocked

# dedup: shapes the library refuses are usage errors with its message.
expect_usage_prefix "ebb dedup: cannot build a filter for window 1000000000000000 and fp 0.01: " \
    dedup --window 1e15
expect_usage_prefix "ebb dedup: cannot build a filter for window 18446744073709551615 and fp 0.01: " \
    dedup --window 18446744073709551615
expect_usage_prefix "ebb dedup: cannot build a filter for window 18446744073709551615 and fp 0.01 (blocked, 64-bit blocks, 4 bits per block, max-npws 0.25, max-accesses 4): " \
    dedup --window 18446744073709551615 --block-bits 64 --block-hashes 4

# params.
expect_usage "ebb params: give --window and --fp, or --k and --l (run 'ebb params --help')" \
    params
expect_usage "ebb params: give --window and --fp, or --k and --l (run 'ebb params --help')" \
    params --window 1000
expect_usage "ebb params: give --window and --fp, or --k and --l (run 'ebb params --help')" \
    params --fp 0.01 --json
expect_usage "ebb params: --k and --l must be given together" params --k 4
expect_usage "ebb params: --k and --l must be given together" \
    params --l 3 --window 100
expect_usage "ebb params: --fp cannot be combined with --k and --l" \
    params --k 4 --l 3 --fp 0.01
expect_usage "ebb params: --max-npws cannot be combined with --k and --l" \
    params --k 4 --l 3 --max-npws 0.5
expect_usage "ebb params: invalid --k '0': must be an integer from 1 to 64" \
    params --k 0 --l 3
expect_usage "ebb params: invalid --k '65': must be an integer from 1 to 64" \
    params --k 65 --l 3
expect_usage "ebb params: invalid --l '1025': must be an integer from 1 to 1024" \
    params --k 4 --l 1025
expect_usage "ebb params: invalid --l 'x': must be an integer from 1 to 1024" \
    params --k 4 --l x
expect_usage "ebb params: invalid --window '2.5': $positive" \
    params --window 2.5 --fp 0.01
expect_usage "ebb params: invalid --fp '1': $fp_range" params --window 10 --fp 1
expect_usage "ebb params: unexpected argument 'extra'" \
    params --window 1e6 --fp 0.01 extra
expect_usage "ebb params: unknown option '--jsn'" params --jsn
expect_usage "ebb params: option '--json' does not take an argument" \
    params --json=1
expect_usage_prefix "ebb params: cannot size a filter for --window 18446744073709551615 --fp 0.01: " \
    params --window 18446744073709551615 --fp 0.01
expect_usage_prefix "ebb params: cannot size a filter for --window 18446744073709551615 --fp 0.01 --max-npws 0.25 --max-accesses 4 (blocked): " \
    params --window 18446744073709551615 --fp 0.01 --blocked
expect_usage_prefix "ebb params: cannot size k=4, l=3 for a window of 18446744073709551615: " \
    params --k 4 --l 3 --window 18446744073709551615 --blocked

# --- Time windows, fields, access bounds --------------------------------
duration='must be a positive duration with a unit (ns, us, ms, s, m, h, d), e.g. 500ms, 30s, 1.5h'
duration_large='must be at most 106751d (2^63 - 1 nanoseconds)'
for command in dedup params; do
    for bad in 0s 0 10 -5s +5s 1.5ns 0.0001us 5S 5sec 5min '5 s' ' 5s' 5s\  1e3s \
               .5s 5.s abc '' s 1h30m 0x10s; do
        expect_usage "ebb $command: invalid --time-window '$bad': $duration" \
            $command --time-window "$bad"
    done
    for bad in 106752d 9223372036854775808ns 99999999999999999999s \
               9223372036.854775808s; do
        expect_usage "ebb $command: invalid --time-window '$bad': $duration_large" \
            $command --time-window "$bad"
    done
    for bad in 0 -1 abc '' inf nan 1e999; do
        expect_usage "ebb $command: invalid --rate '$bad': must be a positive number" \
            $command --rate "$bad"
    done
    for bad in 0 -1 abc ''; do
        expect_usage "ebb $command: invalid --max-accesses '$bad': must be a positive number" \
            $command --max-accesses "$bad"
    done
    expect_usage "ebb $command: option '--time-window' requires an argument" \
        $command --time-window
done
# The largest durations accepted.
expect_usage "ebb dedup: --window cannot be combined with --time-window" \
    dedup --time-window 106751d --window 5
expect_usage "ebb dedup: --window cannot be combined with --time-window" \
    dedup --time-window 9223372036854775807ns --window 5
bytes='must be a positive number of bytes, optionally followed by k, M, G or T (powers of 1024)'
for bad in 0 0k -1 1.5G 1g 1m 10X 1KB 1GiB '' ' 1G' 1e9 k; do
    expect_usage "ebb dedup: invalid --max-memory '$bad': $bytes" \
        dedup --time-window 1s --max-memory "$bad"
done
for bad in 18446744073709551616 16777216T 99999999999999999999k; do
    expect_usage "ebb dedup: invalid --max-memory '$bad': must fit in the address space" \
        dedup --time-window 1s --max-memory "$bad"
done
for bad in foo '' REFUSE Evict; do
    expect_usage "ebb dedup: invalid --policy '$bad': must be refuse or evict" \
        dedup --policy "$bad"
done
for option in --time-field --key-field; do
    for bad in 0 -1 abc '' 1.5 4294967296; do
        expect_usage "ebb dedup: invalid $option '$bad': must be a field number from 1 to 4294967295" \
            dedup "$option" "$bad"
    done
done
for bad in foo '' ISO8601 epoch_ms iso; do
    expect_usage "ebb dedup: invalid --time-format '$bad': must be epoch, epoch-ms or iso8601" \
        dedup --time-format "$bad"
done
expect_usage "ebb dedup: option '--skip-bad' does not take an argument" \
    dedup --skip-bad=yes
for option in --rate --max-memory --policy --time-field --time-format \
              --key-field --max-accesses; do
    expect_usage "ebb dedup: option '$option' requires an argument" \
        dedup "$option"
done
expect_usage "ebb params: option '--rate' requires an argument" params --rate

# Combinations: count-window options with a time window, time-window
# options without one.
for option in "--window 1000" --blocked "--block-bits 64" "--block-hashes 4" \
              "--max-accesses 4"; do
    # shellcheck disable=SC2086 # the option and its value are two words
    expect_usage "ebb dedup: ${option%% *} cannot be combined with --time-window" \
        dedup --time-window 10s $option
done
for option in "--rate 10" "--max-memory 1M" "--policy evict" "--time-field 1"; do
    # shellcheck disable=SC2086
    expect_usage "ebb dedup: ${option%% *} requires --time-window" \
        dedup $option
done
expect_usage "ebb dedup: --time-format requires --time-field" \
    dedup --time-window 1s --time-format iso8601
expect_usage "ebb dedup: --time-format requires --time-field" \
    dedup --time-format epoch
expect_usage "ebb dedup: --skip-bad requires --time-field or --key-field" \
    dedup --skip-bad
expect_usage "ebb dedup: --skip-bad requires --time-field or --key-field" \
    dedup --time-window 1s --skip-bad
expect_usage "ebb dedup: --rate requires --time-window" \
    dedup --window 10 --rate 5 --state "$WORK/never-created" /nonexistent
check "a time option without --time-window creates no state file" \
    test ! -e "$WORK/never-created"
# Shapes the library refuses: a memory limit too small for the first
# slices, a rate beyond 2^64 lines per window.
expect_usage_prefix "ebb dedup: cannot build a filter for time window 1h at rate 1e+09 and fp 0.01 within 1048576 bytes: " \
    dedup --time-window 1h --rate 1e9 --max-memory 1M
expect_usage "ebb dedup: cannot build a filter for time window 106751d at rate 1e+12: more than 2^64 lines per window" \
    dedup --time-window 106751d --rate 1e12
# params --time-window.
expect_usage "ebb params: give --time-window, --rate and --fp (run 'ebb params --help')" \
    params --time-window 10s
expect_usage "ebb params: give --time-window, --rate and --fp (run 'ebb params --help')" \
    params --time-window 10s --rate 100
expect_usage "ebb params: give --time-window, --rate and --fp (run 'ebb params --help')" \
    params --time-window 10s --fp 0.01 --json
expect_usage "ebb params: --rate requires --time-window" \
    params --window 1000 --fp 0.01 --rate 5
for option in "--window 1000" "--k 4" "--l 3" "--fill linear" --blocked \
              "--block-bits 64" "--block-hashes 4" "--max-accesses 4"; do
    # shellcheck disable=SC2086
    expect_usage "ebb params: ${option%% *} cannot be combined with --time-window" \
        params --time-window 10s --rate 100 --fp 0.01 $option
done
expect_usage "ebb params: --max-accesses cannot be combined with --k and --l" \
    params --k 4 --l 3 --max-accesses 3
expect_usage_prefix "ebb params: cannot size a time window for --time-window 106751d --rate 1e12 --fp 0.01: " \
    params --time-window 106751d --rate 1e12 --fp 0.01
expect_usage_prefix "ebb params: cannot size a time window for --time-window 1s --rate 1 --fp 0.01 --max-npws 0.0001: " \
    params --time-window 1s --rate 1 --fp 0.01 --max-npws 0.0001

# --help and --version: stdout, exit 0, nothing on stderr.
expect_help() {
    local pattern=$1
    shift
    run_capture "$WORK/help" /dev/null "$EBB" "$@"
    check "ebb $*: exit 0 (got $status)" equals "$status" 0
    check "ebb $*: stdout matches '$pattern'" \
        grep -q -- "$pattern" "$WORK/help.out"
    check "ebb $*: nothing on stderr" test ! -s "$WORK/help.err"
}
expect_help '^Usage: ebb <command>' --help
expect_help '^Usage: ebb <command>' -h
expect_help '^  dedup ' --help
expect_help '^  params ' --help
expect_help '^Usage: ebb dedup' dedup --help
expect_help 'default 1000000' dedup --help
expect_help 'default 0.01' dedup --help
expect_help '^  --blocked ' dedup --help
expect_help '^  --block-bits B' dedup --help
expect_help '^  --block-hashes b' dedup --help
expect_help '^  --blocked ' params --help
expect_help '^  --block-bits B' params --help
expect_help '^  --time-window DUR' dedup --help
expect_help '^  --time-field N' dedup --help
expect_help '^  --key-field N' dedup --help
expect_help '^  --time-window DUR' params --help
expect_help '^  --max-accesses A' params --help
expect_help '^Usage: ebb params' params --help
# --help wins over the options and operands after it.
expect_help '^Usage: ebb dedup' dedup --window 5 --help /nonexistent
run_capture "$WORK/version" /dev/null "$EBB" --version
check "ebb --version: exit 0" equals "$status" 0
check "ebb --version: prints 'ebb X.Y.Z'" \
    grep -Eqx 'ebb [0-9]+\.[0-9]+\.[0-9]+' "$WORK/version.out"
check "ebb --version: one line" equals "$(wc -l <"$WORK/version.out")" 1

finish
