#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# state.sh EBB GEN_STREAM WORK_DIR
#
# ebb dedup --state FILE:
#   - runs over consecutive parts of a stream, each loading the state the
#     previous one saved, print byte for byte what one run over the whole
#     stream prints (plain and --invert);
#   - a corrupt, truncated or foreign state file is refused (exit 1, one
#     message naming the file) and left exactly as it was;
#   - shape options that contradict the saved filter are usage errors;
#   - all of this for blocked filters (--blocked) too; a state's kind (plain
#     or blocked) that contradicts --blocked / --block-bits / --block-hashes
#     is a usage error; and for the bit-sliced layout (--layout sliced,
#     family 7), whose layout a --layout given must name;
#   - and for time windows (--time-window, a TLBF state, family 3): a
#     replayed log in parts equals one run, time options against a count
#     state and count options against a time state are usage errors, as
#     are a different span, fp, memory limit or policy;
#   - saving is atomic: a failed save or a failed run leaves the old file,
#     and no temporary file survives success or failure.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
GEN=$(absolute_path "$2")
WORK=$(absolute_path "$3")
fresh_dir "$WORK"

WINDOW=20000
"$GEN" --mode window --window "$WINDOW" --lines 300000 --seed 5 >"$WORK/all.in"
head -n 100003 "$WORK/all.in" >"$WORK/a.in"
tail -n +100004 "$WORK/all.in" | head -n 150000 >"$WORK/b.in"
tail -n +250004 "$WORK/all.in" >"$WORK/c.in"
check "the parts add up to the whole" \
    same_file "$WORK/all.in" <(cat "$WORK/a.in" "$WORK/b.in" "$WORK/c.in")

no_temporary_files() {
    local left
    left=$(find "$WORK" -name '*.tmp.*' | head -n 5)
    if [ -n "$left" ]; then
        echo "  temporary files left: $left" >&2
        return 1
    fi
}

# --- Resuming from the state gives the output of one run ----------------
for mode in plain invert; do
    flags=()
    [ "$mode" = invert ] && flags=(--invert)
    "$EBB" dedup --window "$WINDOW" "${flags[@]}" "$WORK/all.in" \
        >"$WORK/one-run.$mode"
    state="$WORK/resume.$mode.state"
    rm -f "$state"
    # The first run creates the state; the next ones take its shape from
    # the file, once with the same --window repeated, once from stdin.
    "$EBB" dedup --window "$WINDOW" "${flags[@]}" --state "$state" \
        "$WORK/a.in" >"$WORK/part-a.$mode"
    check "$mode: first part exit 0" equals "$?" 0
    check "$mode: state file created" test -s "$state"
    "$EBB" dedup "${flags[@]}" --state "$state" "$WORK/b.in" \
        >"$WORK/part-b.$mode"
    check "$mode: second part exit 0" equals "$?" 0
    "$EBB" dedup --window "$WINDOW" "${flags[@]}" --state "$state" \
        <"$WORK/c.in" >"$WORK/part-c.$mode"
    check "$mode: third part exit 0" equals "$?" 0
    cat "$WORK/part-a.$mode" "$WORK/part-b.$mode" "$WORK/part-c.$mode" \
        >"$WORK/resumed.$mode"
    check "$mode: resumed runs print what one run prints" \
        same_file "$WORK/one-run.$mode" "$WORK/resumed.$mode"
    check "$mode: the output is not trivial" \
        test "$(wc -l <"$WORK/one-run.$mode")" -gt 1000
done
check "plain and invert outputs differ" \
    test "$(wc -l <"$WORK/one-run.plain")" -ne "$(wc -l <"$WORK/one-run.invert")"
# Without the state the parts do not add up (the test can tell).
"$EBB" dedup --window "$WINDOW" "$WORK/b.in" >"$WORK/part-b.stateless"
check "without the state the second part prints more" \
    test "$(wc -l <"$WORK/part-b.stateless")" -gt "$(wc -l <"$WORK/part-b.plain")"
check "no temporary files after successful runs" no_temporary_files

STATE="$WORK/resume.plain.state"

# --- An empty run still writes the state; a loaded filter reports itself -
"$EBB" dedup --stats --state "$WORK/empty.state" </dev/null 2>"$WORK/empty.stats"
check "empty input: exit 0" equals "$?" 0
check "empty input: state written" test -s "$WORK/empty.state"
check "empty input: 0 lines read" \
    equals "$(stat_value "$WORK/empty.stats" 'lines read')" 0
cp "$STATE" "$WORK/stats.state"
"$EBB" dedup --stats --state "$WORK/stats.state" </dev/null 2>"$WORK/loaded.stats"
k=$(stat_value "$WORK/loaded.stats" k)
l=$(stat_value "$WORK/loaded.stats" l)
"$EBB" params --k "$k" --l "$l" --window "$WINDOW" --json >"$WORK/params.json"
check "loaded filter without --fp reports the fp of its (k, l)" \
    grep -q "\"fp\": $(stat_value "$WORK/loaded.stats" fp)," "$WORK/params.json"
"$EBB" dedup --window "$WINDOW" --stats </dev/null 2>"$WORK/fresh.stats"
for field in k l window 'memory bytes'; do
    check "loaded filter has the $field it was created with" \
        equals "$(stat_value "$WORK/loaded.stats" "$field")" \
            "$(stat_value "$WORK/fresh.stats" "$field")"
done

# --- Damaged state files are refused and left untouched -----------------
size=$(stat -c %s "$STATE")
check "state has the size of a window-$WINDOW filter" test "$size" -gt 1000

# put_byte <file> <offset> <value 0..255>
put_byte() {
    printf "\\$(printf '%03o' "$3")" |
        dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
byte_at() {
    od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '
}

declare -A damaged_message
damage() {
    local name=$1 file="$WORK/damaged-$1.state"
    cp "$STATE" "$file"
    case $name in
    truncated) truncate -s $((size - 100)) "$file" ;;
    header-only) truncate -s 20 "$file" ;;
    flipped) put_byte "$file" $((size / 2)) $(($(byte_at "$file" $((size / 2))) ^ 255)) ;;
    magic) put_byte "$file" 0 88 ;;
    version) put_byte "$file" 4 2 ;;
    family) put_byte "$file" 6 99 ;;
    trailing) printf 'x' >>"$file" ;;
    empty) : >"$file" ;;
    text) printf 'hello\n' >"$file" ;;
    esac
    cp "$file" "$file.before"
    run_capture "$WORK/damaged-$name" "$WORK/a.in" \
        "$EBB" dedup --state "$file"
    check "$name: exit 1 (got $status)" equals "$status" 1
    check "$name: one message naming the file" \
        stderr_starts_with "$WORK/damaged-$name.err" "ebb dedup: $file: "
    check "$name: no input processed" test ! -s "$WORK/damaged-$name.out"
    check "$name: file untouched" same_file "$file.before" "$file"
    damaged_message[$name]=$(sed "s|^ebb dedup: $file: ||" "$WORK/damaged-$name.err")
}
for kind in truncated header-only flipped magic version family trailing \
            empty text; do
    damage "$kind"
done
# Each kind of damage is told apart (the library's status, not a generic
# "cannot load").
declare -A owner
for kind in truncated flipped magic version family trailing; do
    message=${damaged_message[$kind]}
    if [ -n "${owner[$message]:-}" ]; then
        fail "$kind and ${owner[$message]} give the same message: $message"
    fi
    owner[$message]=$kind
    checks=$((checks + 1))
done
check "a text file is refused as not a snapshot" \
    equals "${damaged_message[text]}" "${damaged_message[magic]}"
check "no temporary files after refused states" no_temporary_files

# A directory where the state should be.
mkdir -p "$WORK/dir.state"
run_capture "$WORK/dir" "$WORK/a.in" "$EBB" dedup --state "$WORK/dir.state"
check "directory as state: exit 1" equals "$status" 1
check "directory as state: one message" \
    stderr_starts_with "$WORK/dir.err" "ebb dedup: $WORK/dir.state: "

# --- Shape options must agree with the saved filter ---------------------
cp "$STATE" "$WORK/shape.state"
cp "$STATE" "$WORK/shape.state.before"
expect_shape_error() {
    local expected=$1
    shift
    run_capture "$WORK/shape" "$WORK/a.in" \
        "$EBB" dedup --state "$WORK/shape.state" "$@"
    check "$*: exit 2 (got $status)" equals "$status" 2
    check "$*: the one expected message" stderr_is "$WORK/shape.err" "$expected"
    check "$*: state untouched" \
        same_file "$WORK/shape.state.before" "$WORK/shape.state"
    check "$*: no output" test ! -s "$WORK/shape.out"
}
loaded_window=$(stat_value "$WORK/loaded.stats" window)
expect_shape_error "ebb dedup: --window 5000 disagrees with the state in '$WORK/shape.state' (window $loaded_window)" \
    --window 5000
expect_shape_error "ebb dedup: --window 1e6 disagrees with the state in '$WORK/shape.state' (window $loaded_window)" \
    --window 1e6
expect_shape_error "ebb dedup: --fp 0.001 disagrees with the state in '$WORK/shape.state' (k=$k, l=$l)" \
    --fp 0.001
expect_shape_error "ebb dedup: --fp 0.001 disagrees with the state in '$WORK/shape.state' (k=$k, l=$l)" \
    --window "$WINDOW" --fp 0.001
expect_shape_error "ebb dedup: --max-npws 0.001 disagrees with the state in '$WORK/shape.state' (k=$k, l=$l)" \
    --max-npws 0.001
run_capture "$WORK/shape-same" /dev/null \
    "$EBB" dedup --state "$WORK/shape.state" --window "$WINDOW" --fp 0.01
check "the options the state was made with are accepted" equals "$status" 0

# --- Blocked filters ---------------------------------------------------
# Resuming: the first run says --blocked, the second nothing (the kind comes
# from the state), the third repeats the options it was made with.
# Without --block-hashes the chooser picks b; ebb params --blocked shows it.
blocked_b=$("$EBB" params --window "$WINDOW" --fp 0.01 --blocked |
    awk '/^block hashes:/ { print $3 }')
other_b=$([ "$blocked_b" = 4 ] && echo 2 || echo 4)
"$EBB" dedup --window "$WINDOW" --blocked "$WORK/all.in" >"$WORK/one-run.blocked"
BLOCKED="$WORK/resume.blocked.state"
rm -f "$BLOCKED"
"$EBB" dedup --window "$WINDOW" --blocked --state "$BLOCKED" "$WORK/a.in" \
    >"$WORK/part-a.blocked"
check "blocked: first part exit 0" equals "$?" 0
"$EBB" dedup --state "$BLOCKED" "$WORK/b.in" >"$WORK/part-b.blocked"
check "blocked: second part exit 0" equals "$?" 0
"$EBB" dedup --window "$WINDOW" --blocked --block-bits 512 \
    --block-hashes "$blocked_b" --fp 0.01 --state "$BLOCKED" <"$WORK/c.in" \
    >"$WORK/part-c.blocked"
check "blocked: third part (all options repeated) exit 0" equals "$?" 0
cat "$WORK/part-a.blocked" "$WORK/part-b.blocked" "$WORK/part-c.blocked" \
    >"$WORK/resumed.blocked"
check "blocked: resumed runs print what one run prints" \
    same_file "$WORK/one-run.blocked" "$WORK/resumed.blocked"
check "blocked: the output is not trivial" \
    test "$(wc -l <"$WORK/one-run.blocked")" -gt 1000
check "blocked: the state is a family-2 snapshot (bytes 6-7 = 2 0)" \
    equals "$(od -An -tu1 -j 6 -N 2 "$BLOCKED" | tr -s ' ')" " 2 0"
check "plain: the state is a family-1 snapshot (bytes 6-7 = 1 0)" \
    equals "$(od -An -tu1 -j 6 -N 2 "$STATE" | tr -s ' ')" " 1 0"

# A loaded blocked filter reports its block shape and the fp of its shape.
cp "$BLOCKED" "$WORK/blocked-stats.state"
"$EBB" dedup --stats --state "$WORK/blocked-stats.state" </dev/null \
    2>"$WORK/blocked-loaded.stats"
check "loaded blocked filter: block bits 512" \
    equals "$(stat_value "$WORK/blocked-loaded.stats" 'block bits')" 512
check "loaded blocked filter: block hashes $blocked_b" \
    equals "$(stat_value "$WORK/blocked-loaded.stats" 'block hashes')" \
        "$blocked_b"
bk=$(stat_value "$WORK/blocked-loaded.stats" k)
bl=$(stat_value "$WORK/blocked-loaded.stats" l)
"$EBB" params --blocked --k "$bk" --l "$bl" --block-hashes "$blocked_b" \
    --window "$WINDOW" --json \
    >"$WORK/blocked-params.json"
check "loaded blocked filter without --fp reports the fp of its shape" \
    grep -q "\"fp\": $(stat_value "$WORK/blocked-loaded.stats" fp)," \
        "$WORK/blocked-params.json"
check "loaded blocked filter has the memory ebb params gives" \
    grep -q "\"memory_bytes\": $(stat_value "$WORK/blocked-loaded.stats" \
        'memory bytes')," "$WORK/blocked-params.json"

# expect_state_error <state file> <expected stderr line> <options...>: the
# state is left untouched, nothing is printed, exit 2.
expect_state_error() {
    local file=$1 expected=$2
    shift 2
    cp "$file" "$WORK/kind.state"
    run_capture "$WORK/kind" "$WORK/a.in" \
        "$EBB" dedup --state "$WORK/kind.state" "$@"
    check "$*: exit 2 (got $status)" equals "$status" 2
    check "$*: the one expected message" stderr_is "$WORK/kind.err" \
        "$(printf '%s' "$expected" | sed "s|@|$WORK/kind.state|")"
    check "$*: state untouched" same_file "$file" "$WORK/kind.state"
    check "$*: no output" test ! -s "$WORK/kind.out"
}
expect_state_error "$STATE" \
    "ebb dedup: --blocked disagrees with the state in '@' (a plain filter)" \
    --blocked
expect_state_error "$STATE" \
    "ebb dedup: --block-bits 512 disagrees with the state in '@' (a plain filter)" \
    --block-bits 512
expect_state_error "$STATE" \
    "ebb dedup: --block-hashes 8 disagrees with the state in '@' (a plain filter)" \
    --block-hashes 8 --window "$WINDOW"
expect_state_error "$BLOCKED" \
    "ebb dedup: --block-bits 64 disagrees with the state in '@' (block bits 512)" \
    --block-bits 64
expect_state_error "$BLOCKED" \
    "ebb dedup: --block-hashes $other_b disagrees with the state in '@' (block hashes $blocked_b)" \
    --blocked --block-hashes "$other_b"
blocked_window=$(stat_value "$WORK/blocked-loaded.stats" window)
expect_state_error "$BLOCKED" \
    "ebb dedup: --window 5000 disagrees with the state in '@' (window $blocked_window)" \
    --window 5000
expect_state_error "$BLOCKED" \
    "ebb dedup: --fp 0.001 disagrees with the state in '@' (k=$bk, l=$bl)" \
    --fp 0.001

# --- The bit-sliced layout (--layout sliced) ---------------------------
# Resumed runs print what one run prints; the layout comes from the state
# (family 7) and a --layout given must name it.
"$EBB" dedup --window "$WINDOW" --layout sliced "$WORK/all.in" \
    >"$WORK/one-run.sliced"
SLICED="$WORK/resume.sliced.state"
rm -f "$SLICED"
"$EBB" dedup --window "$WINDOW" --layout sliced --state "$SLICED" \
    "$WORK/a.in" >"$WORK/part-a.sliced"
check "sliced: first part exit 0" equals "$?" 0
"$EBB" dedup --state "$SLICED" "$WORK/b.in" >"$WORK/part-b.sliced"
check "sliced: second part exit 0" equals "$?" 0
"$EBB" dedup --window "$WINDOW" --layout sliced --fp 0.01 --state "$SLICED" \
    <"$WORK/c.in" >"$WORK/part-c.sliced"
check "sliced: third part (all options repeated) exit 0" equals "$?" 0
check "sliced: resumed runs print what one run prints" \
    same_file "$WORK/one-run.sliced" \
        <(cat "$WORK/part-a.sliced" "$WORK/part-b.sliced" "$WORK/part-c.sliced")
check "sliced: the output is not trivial" \
    test "$(wc -l <"$WORK/one-run.sliced")" -gt 1000
check "sliced: the state is a family-7 snapshot (bytes 6-7 = 7 0)" \
    equals "$(od -An -tu1 -j 6 -N 2 "$SLICED" | tr -s ' ')" " 7 0"
expect_state_error "$SLICED" \
    "ebb dedup: --layout ring disagrees with the state in '@' (layout sliced)" \
    --layout ring
expect_state_error "$STATE" \
    "ebb dedup: --layout sliced disagrees with the state in '@' (layout ring)" \
    --layout sliced

# --- Time windows (TLBF) -------------------------------------------------
# A replayed log (times from the data, so the runs are deterministic) in
# three parts: the first run creates the state, the second takes the kind
# and shape from it (only how to read the times is given, that is per run),
# the third repeats every option it was made with (and --rate, which only
# sizes a new filter).
"$GEN" --mode timed --lines 300000 --span-ms 2000 --rate 2000 --seed 21 \
    >"$WORK/timed-all.in"
head -n 120001 "$WORK/timed-all.in" >"$WORK/timed-a.in"
tail -n +120002 "$WORK/timed-all.in" | head -n 100000 >"$WORK/timed-b.in"
tail -n +220002 "$WORK/timed-all.in" >"$WORK/timed-c.in"
check "time: the parts add up to the whole" same_file "$WORK/timed-all.in" \
    <(cat "$WORK/timed-a.in" "$WORK/timed-b.in" "$WORK/timed-c.in")
TIME_READ=(--time-field 1 --time-format epoch-ms)
for mode in plain invert; do
    flags=()
    [ "$mode" = invert ] && flags=(--invert)
    "$EBB" dedup --time-window 2s "${TIME_READ[@]}" "${flags[@]}" \
        "$WORK/timed-all.in" >"$WORK/timed-one-run.$mode"
    TIMED="$WORK/resume.timed.$mode.state"
    rm -f "$TIMED"
    "$EBB" dedup --time-window 2s "${TIME_READ[@]}" "${flags[@]}" \
        --state "$TIMED" "$WORK/timed-a.in" >"$WORK/timed-part-a.$mode"
    check "time $mode: first part exit 0" equals "$?" 0
    "$EBB" dedup "${TIME_READ[@]}" "${flags[@]}" --state "$TIMED" \
        "$WORK/timed-b.in" >"$WORK/timed-part-b.$mode"
    check "time $mode: second part exit 0" equals "$?" 0
    "$EBB" dedup --time-window 2000ms --fp 0.01 --max-memory 1G \
        --policy refuse --rate 5 "${TIME_READ[@]}" "${flags[@]}" \
        --state "$TIMED" <"$WORK/timed-c.in" >"$WORK/timed-part-c.$mode"
    check "time $mode: third part (all options repeated) exit 0" equals "$?" 0
    cat "$WORK/timed-part-a.$mode" "$WORK/timed-part-b.$mode" \
        "$WORK/timed-part-c.$mode" >"$WORK/timed-resumed.$mode"
    check "time $mode: resumed runs print what one run prints" \
        same_file "$WORK/timed-one-run.$mode" "$WORK/timed-resumed.$mode"
    check "time $mode: the output is not trivial" \
        test "$(wc -l <"$WORK/timed-one-run.$mode")" -gt 10000
done
TIMED="$WORK/resume.timed.plain.state"
check "time: the state is a family-3 snapshot (bytes 6-7 = 3 0)" \
    equals "$(od -An -tu1 -j 6 -N 2 "$TIMED" | tr -s ' ')" " 3 0"
"$EBB" dedup --time-window 2s "${TIME_READ[@]}" "$WORK/timed-b.in" \
    >"$WORK/timed-part-b.stateless"
check "time: without the state the second part prints more" \
    test "$(wc -l <"$WORK/timed-part-b.stateless")" -gt \
        "$(wc -l <"$WORK/timed-part-b.plain")"
# The runs clamp as one run would: the latest time carries over.
"$EBB" dedup --time-window 2s "${TIME_READ[@]}" --stats "$WORK/timed-all.in" \
    >/dev/null 2>"$WORK/timed-one-run.stats"
rm -f "$WORK/timed-stats.state"
clamped=0
for part in a b c; do
    "$EBB" dedup --time-window 2s "${TIME_READ[@]}" --stats \
        --state "$WORK/timed-stats.state" "$WORK/timed-$part.in" \
        >/dev/null 2>"$WORK/timed-part-$part.stats"
    clamped=$((clamped + $(stat_value "$WORK/timed-part-$part.stats" clamped)))
done
check "time: the parts clamp the times one run clamps" \
    equals "$clamped" "$(stat_value "$WORK/timed-one-run.stats" clamped)"
check "time: the last part ends at the one run's latest time" \
    equals "$(stat_value "$WORK/timed-part-c.stats" 'latest ns')" \
        "$(stat_value "$WORK/timed-one-run.stats" 'latest ns')"
for field in slices 'memory bytes'; do
    check "time: the resumed filter has the one run's $field" \
        equals "$(stat_value "$WORK/timed-part-c.stats" "$field")" \
            "$(stat_value "$WORK/timed-one-run.stats" "$field")"
done

# A loaded time filter reports its span and the fp of its (k, l).
cp "$TIMED" "$WORK/timed-loaded.state"
"$EBB" dedup --stats --state "$WORK/timed-loaded.state" </dev/null \
    2>"$WORK/timed-loaded.stats"
check "loaded time filter: span 2s" \
    equals "$(stat_value "$WORK/timed-loaded.stats" span)" 2s
tk=$(stat_value "$WORK/timed-loaded.stats" k)
tl=$(stat_value "$WORK/timed-loaded.stats" l)
"$EBB" params --k "$tk" --l "$tl" --json >"$WORK/timed-params.json"
check "loaded time filter without --fp reports the fp of its (k, l)" \
    grep -q "\"fp\": $(stat_value "$WORK/timed-loaded.stats" fp)," \
        "$WORK/timed-params.json"

# Kinds and shapes that disagree with the state are usage errors.
expect_state_error "$STATE" \
    "ebb dedup: --time-window 2s disagrees with the state in '@' (a count-window filter)" \
    --time-window 2s
for option in "--rate 5" "--max-memory 1M" "--policy evict" "--time-field 1"; do
    # shellcheck disable=SC2086 # the option and its value are two words
    expect_state_error "$STATE" \
        "ebb dedup: $option disagrees with the state in '@' (a count-window filter)" \
        $option
done
for option in "--window 5000" --blocked "--block-bits 64" "--block-hashes 4" \
              "--max-accesses 3"; do
    # shellcheck disable=SC2086
    expect_state_error "$TIMED" \
        "ebb dedup: $option disagrees with the state in '@' (a time-window filter)" \
        $option
done
expect_state_error "$TIMED" \
    "ebb dedup: --time-window 3s disagrees with the state in '@' (span 2s)" \
    --time-window 3s
expect_state_error "$TIMED" \
    "ebb dedup: --fp 0.001 disagrees with the state in '@' (k=$tk, l=$tl)" \
    --fp 0.001 --time-window 2s
expect_state_error "$TIMED" \
    "ebb dedup: --max-npws 0.001 disagrees with the state in '@' (k=$tk, l=$tl)" \
    --max-npws 0.001
expect_state_error "$TIMED" \
    "ebb dedup: --max-memory 1M disagrees with the state in '@' (max memory 1073741824 bytes)" \
    --max-memory 1M
expect_state_error "$TIMED" \
    "ebb dedup: --policy evict disagrees with the state in '@' (policy refuse)" \
    --policy evict
# A damaged time-window state is refused like any other.
cp "$TIMED" "$WORK/timed-damaged.state"
truncate -s $(($(stat -c %s "$TIMED") - 7)) "$WORK/timed-damaged.state"
cp "$WORK/timed-damaged.state" "$WORK/timed-damaged.state.before"
run_capture "$WORK/timed-damaged" "$WORK/timed-a.in" \
    "$EBB" dedup "${TIME_READ[@]}" --state "$WORK/timed-damaged.state"
check "damaged time state: exit 1" equals "$status" 1
check "damaged time state: one message naming the file" \
    stderr_starts_with "$WORK/timed-damaged.err" \
        "ebb dedup: $WORK/timed-damaged.state: "
check "damaged time state: untouched" same_file \
    "$WORK/timed-damaged.state.before" "$WORK/timed-damaged.state"
# A bad line stops the run without saving: a rerun is idempotent.
cp "$TIMED" "$WORK/timed-keep.state"
printf '1709251200000 fine\nnot-a-time bad\n' >"$WORK/timed-bad.in"
run_capture "$WORK/timed-bad" /dev/null "$EBB" dedup "${TIME_READ[@]}" \
    --state "$WORK/timed-keep.state" "$WORK/timed-bad.in"
check "bad line: exit 1" equals "$status" 1
check "bad line: state not saved" same_file "$TIMED" "$WORK/timed-keep.state"

# --- Failed runs and failed saves leave the old state -------------------
cp "$STATE" "$WORK/keep.state"
cp "$STATE" "$WORK/keep.state.before"
run_capture "$WORK/missing-input" /dev/null \
    "$EBB" dedup --state "$WORK/keep.state" "$WORK/a.in" "$WORK/no-such-file"
check "missing input: exit 1" equals "$status" 1
check "missing input: one message" stderr_is "$WORK/missing-input.err" \
    "ebb dedup: $WORK/no-such-file: No such file or directory"
check "missing input: state not saved (a rerun is idempotent)" \
    same_file "$WORK/keep.state.before" "$WORK/keep.state"

# A file-size limit below the snapshot's size makes the write fail half-way.
run_capture "$WORK/fsize" "$WORK/b.in" \
    bash -c 'ulimit -f 1 && exec "$@" >/dev/null' _ \
    "$EBB" dedup --state "$WORK/keep.state"
check "failed save: exit 1" equals "$status" 1
check "failed save: one message" stderr_starts_with "$WORK/fsize.err" \
    "ebb dedup: $WORK/keep.state: cannot save state: "
check "failed save: old state kept" \
    same_file "$WORK/keep.state.before" "$WORK/keep.state"

run_capture "$WORK/no-dir" "$WORK/a.in" \
    "$EBB" dedup --state "$WORK/no-such-dir/x.state"
check "state in a missing directory: exit 1" equals "$status" 1
check "state in a missing directory: one message" stderr_is "$WORK/no-dir.err" \
    "ebb dedup: $WORK/no-such-dir/x.state: cannot save state: No such file or directory"
check "no temporary files after failed saves" no_temporary_files

# --- The saved file keeps its permissions, a new one follows the umask --
cp "$STATE" "$WORK/mode.state"
chmod 640 "$WORK/mode.state"
"$EBB" dedup --state "$WORK/mode.state" </dev/null
check "replaced state keeps mode 640" \
    equals "$(stat -c %a "$WORK/mode.state")" 640
(umask 027 && "$EBB" dedup --state "$WORK/umask.state" </dev/null)
check "new state follows the umask (027 -> 640)" \
    equals "$(stat -c %a "$WORK/umask.state")" 640

finish
