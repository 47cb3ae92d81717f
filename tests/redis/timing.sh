#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# timing.sh: the timing filter type (TIMING.*, "ebb-timng").
#
#   1. Every command, its replies and its errors; WRONGTYPE; arity and key
#      specs; keyspace notifications; COPY, MEMORY USAGE, SCANDUMP and
#      LOADCHUNK.
#   2. POSTERIOR: an item added last is in the window with probability ~1,
#      one never added has probability 0; PRIOR, COSTS and WINDOW move the
#      answer as documented (the decision is cost-fp (1 - posterior) <=
#      cost-fn posterior); and every answer equals the library's own for
#      the same state: the key's SCANDUMP (the library's snapshot) loaded by
#      `ebb recent --state` answers the same numbers for the same query.
#   3. RDB and AOF restarts (and BGREWRITEAOF) with 100k items in three
#      filters: DUMP payloads byte-identical, identical answers to 20k
#      probes and to POSTERIOR queries.
#   4. DUMP/RESTORE: identical; damaged payloads refused, server alive.
#   5. A replica byte-identical to its primary (DUMP compared) after 100k
#      writes, also after it was stopped and restarted while the primary
#      kept writing; RESERVE replicated with the chosen SHAPE.
#
#   bash timing.sh <ebb.so> <work directory>
#   The `ebb` program is found next to the module (../cli/ebb) or in $EBB.

source "$(dirname "$0")/lib.sh"

EBB=${EBB:-$(dirname "$MODULE")/../cli/ebb}
ITEMS=100000
PROBES=10000

start_server main --notify-keyspace-events KEd || exit 1
m() { rcli main "$@"; }
# pairs: the reply of a field/value command as "field value" lines.
pairs() { paste - -; }
# field <name>: the value of a field in "field value" lines.
field() { awk -v f="$1" '$1 == f { print $2 }'; }

# ------------------------------------------------------------------------
# 1. Commands and errors
# ------------------------------------------------------------------------

expect "RESERVE" OK "$(m TIMING.RESERVE t 100)"
expect "RESERVE existing" "ERR key already exists" "$(m TIMING.RESERVE t 100)"
info=$(m TIMING.INFO t | pairs)
expect "INFO window" 100 "$(field window <<<"$info")"
expect "INFO model" distinct "$(field model <<<"$info")"
expect "INFO insertions" 0 "$(field insertions <<<"$info")"
expect "INFO has 19 fields" 19 "$(wc -l <<<"$info")"
check "INFO fp within ERROR 0.01" in_range "$(field fp <<<"$info")" 0 0.01
# The shape is the CLI's for the same options (cli/timing_options.c).
cli_shape=$("$EBB" params --timing --window 100 --fp 0.01)
for f in timers k block padding; do
    expect "RESERVE 100 chooses the CLI's $f" \
        "$(awk -F': *' -v l="$f" '$1 == l { print $2 }' <<<"$cli_shape")" \
        "$(field "$f" <<<"$info")"
done
expect "ADD new" 1 "$(m TIMING.ADD t a)"
expect "ADD seen" 0 "$(m TIMING.ADD t a)"
expect "MADD" "1 0 1 0" "$(m TIMING.MADD t b a c b | paste -sd' ')"
expect "EXISTS" 1 "$(m TIMING.EXISTS t a)"
expect "EXISTS absent" 0 "$(m TIMING.EXISTS t never)"
expect "MEXISTS" "1 0 1" "$(m TIMING.MEXISTS t a never c | paste -sd' ')"
expect "INFO insertions after adds" 6 "$(m TIMING.INFO t | pairs | field insertions)"
expect "EXISTS on a missing key" 0 "$(m TIMING.EXISTS missing a)"
expect "MEXISTS on a missing key" "0 0" "$(m TIMING.MEXISTS missing a b | paste -sd' ')"
expect "ADD NOCREATE on a missing key" "ERR no such key" "$(m TIMING.ADD missing a NOCREATE)"
expect "ADD NOCREATE on an existing key" 0 "$(m TIMING.ADD t a NOCREATE)"
expect "ADD unknown option" "ERR unknown option 'FOO' for TIMING.ADD" "$(m TIMING.ADD t a FOO)"
expect "INFO missing" "ERR no such key" "$(m TIMING.INFO missing)"
expect "POSTERIOR missing" "ERR no such key" "$(m TIMING.POSTERIOR missing a PRIOR 0.1)"
expect "nothing created" 0 "$(m EXISTS missing)"

# A write creates a missing key with the defaults (window 1e6, rate 0.01).
expect "ADD creates" 1 "$(m TIMING.ADD created x)"
info=$(m TIMING.INFO created | pairs)
expect "created window" 1000000 "$(field window <<<"$info")"
cli_default=$("$EBB" params --timing --window 1000000 --fp 0.01)
expect "created timers are the CLI's default" \
    "$(awk -F': *' '$1 == "timers" { print $2 }' <<<"$cli_default")" \
    "$(field timers <<<"$info")"
expect "MADD creates" "1 1" "$(m TIMING.MADD created2 x y | paste -sd' ')"

expect "RESERVE MEMORY" OK "$(m TIMING.RESERVE bymem 10000 MEMORY 65536)"
check "MEMORY respected" [ "$(m TIMING.INFO bymem | pairs | field memory)" -le 70000 ]
expect "MEMORY chooses the CLI's timers (--memory 65536)" \
    "$("$EBB" params --timing --window 10000 --memory 65536 | awk -F': *' '$1 == "timers" { print $2 }')" \
    "$(m TIMING.INFO bymem | pairs | field timers)"
expect "RESERVE UNIVERSE" OK "$(m TIMING.RESERVE uni 1000 ERROR 0.001 UNIVERSE 5000)"
info=$(m TIMING.INFO uni | pairs)
expect "UNIVERSE model" "uniform 5000" \
    "$(field model <<<"$info") $(field universe <<<"$info")"
check "UNIVERSE prior 1/5000" in_range "$(field default_prior <<<"$info")" 0.000199999 0.000200001
expect "RESERVE ZIPF" OK "$(m TIMING.RESERVE zipf 1000 ZIPF 5000)"
expect "RESERVE SHAPE" OK "$(m TIMING.RESERVE shaped 100 SHAPE 1000 4 4 10 2)"
info=$(m TIMING.INFO shaped | pairs)
expect "SHAPE kept" "1000 4 4 10 2" \
    "$(for f in timers k timer_bits block padding; do field $f <<<"$info"; done | paste -sd' ')"

errors=(
    "TIMING.RESERVE e 0|ERR window must be an integer from 1 to 281474976710656"
    "TIMING.RESERVE e 1e3|ERR window must be an integer from 1 to 281474976710656"
    "TIMING.RESERVE e 281474976710657|ERR window must be an integer from 1 to 281474976710656"
    "TIMING.RESERVE e 100 ERROR 1|ERR error rate must be a number between 0 and 1 (both excluded)"
    "TIMING.RESERVE e 100 ERROR 0x0.1|ERR error rate must be a number between 0 and 1 (both excluded)"
    "TIMING.RESERVE e 100 ERROR 1e-300|ERR TIMING: no shape for a window of 100 reaches ERROR 1e-300 (at most 32 timers per item, 2^40 timers)"
    "TIMING.RESERVE e 100 ERROR 0.01 MEMORY 1000|ERR TIMING: ERROR cannot be combined with MEMORY"
    "TIMING.RESERVE e 100 MEMORY 1|ERR TIMING: no shape for a window of 100 fits MEMORY 1 (too little memory: every query would answer yes)"
    "TIMING.RESERVE e 100 MEMORY 0|ERR MEMORY must be an integer from 1 to 9223372036854775807"
    "TIMING.RESERVE e 100 SHAPE 10 2 3 1 0|ERR TIMING: SHAPE 10 2 3 1 0 is not a valid shape for a window of 100 (block at most the window; 2^timer-bits at least ceil(window / block) + 3 + padding)"
    "TIMING.RESERVE e 100 SHAPE 10 33 3 50 1|ERR SHAPE k must be an integer from 1 to 32"
    "TIMING.RESERVE e 100 SHAPE 10 2 1 50 1|ERR SHAPE timer-bits must be an integer from 2 to 32"
    "TIMING.RESERVE e 100 SHAPE 10 2 3 50 1 ERROR 0.1|ERR TIMING: SHAPE cannot be combined with ERROR or MEMORY"
    "TIMING.RESERVE e 100 SHAPE 10 2 3|ERR wrong number of arguments for 'TIMING.RESERVE' command"
    "TIMING.RESERVE e 100 ERROR|ERR wrong number of arguments for 'TIMING.RESERVE' command"
    "TIMING.RESERVE e 100 UNIVERSE 0|ERR UNIVERSE must be an integer from 1 to 9223372036854775807"
    "TIMING.RESERVE e 100 FOO 1|ERR unknown option 'FOO' for TIMING.RESERVE"
    "TIMING.RESERVE e|ERR wrong number of arguments for 'TIMING.RESERVE' command"
    "TIMING.ADD t|ERR wrong number of arguments for 'TIMING.ADD' command"
    "TIMING.ADD t a NOCREATE x|ERR wrong number of arguments for 'TIMING.ADD' command"
    "TIMING.MADD t|ERR wrong number of arguments for 'TIMING.MADD' command"
    "TIMING.EXISTS t a b|ERR wrong number of arguments for 'TIMING.EXISTS' command"
    "TIMING.MEXISTS t|ERR wrong number of arguments for 'TIMING.MEXISTS' command"
    "TIMING.INFO t x|ERR wrong number of arguments for 'TIMING.INFO' command"
    "TIMING.POSTERIOR t|ERR wrong number of arguments for 'TIMING.POSTERIOR' command"
    "TIMING.POSTERIOR t a|ERR TIMING: the distinct model has no prior of its own: give PRIOR p, or reserve with UNIVERSE n"
    "TIMING.POSTERIOR zipf a|ERR TIMING: the zipf model has no prior of its own: give PRIOR p"
    "TIMING.POSTERIOR t a PRIOR 2|ERR PRIOR must be a number > 0 and <= 1"
    "TIMING.POSTERIOR t a PRIOR 1e-310|ERR PRIOR must be a number > 0 and <= 1"
    "TIMING.POSTERIOR t a PRIOR 0|ERR PRIOR must be a number > 0"
    "TIMING.POSTERIOR t a PRIOR nan|ERR PRIOR must be a number > 0"
    "TIMING.POSTERIOR t a PRIOR 0.1 COSTS -1 1|ERR COSTS fp must be a number >= 0"
    "TIMING.POSTERIOR t a PRIOR 0.1 COSTS 1 inf|ERR COSTS fn must be a number >= 0"
    "TIMING.POSTERIOR t a PRIOR 0.1 COSTS 1|ERR wrong number of arguments for 'TIMING.POSTERIOR' command"
    "TIMING.POSTERIOR t a PRIOR|ERR wrong number of arguments for 'TIMING.POSTERIOR' command"
    "TIMING.POSTERIOR t a PRIOR 0.1 WINDOW 101|ERR WINDOW must be an integer from 1 to 100 (the filter's window)"
    "TIMING.POSTERIOR t a PRIOR 0.1 WINDOW 0|ERR WINDOW must be an integer from 1 to 9223372036854775807"
    "TIMING.POSTERIOR t a BAR 1|ERR unknown option 'BAR' for TIMING.POSTERIOR"
    "TIMING.SCANDUMP missing 0|ERR no such key"
)
for entry in "${errors[@]}"; do
    read -r -a words <<<"${entry%%|*}"
    expect "${entry%%|*}" "${entry#*|}" "$(m "${words[@]}")"
done
expect "no key made by the errors" 0 "$(m EXISTS e)"

m SET str 1 >/dev/null
wrongtype="WRONGTYPE Operation against a key holding the wrong kind of value"
for command in "TIMING.ADD str a" "TIMING.MADD str a" "TIMING.EXISTS str a" \
    "TIMING.MEXISTS str a" "TIMING.POSTERIOR str a PRIOR 0.5" \
    "TIMING.INFO str" "TIMING.RESERVE str 10" "TIMING.SCANDUMP str 0"; do
    read -r -a words <<<"$command"
    expect "$command" "$wrongtype" "$(m "${words[@]}")"
done
m APBF.ADD apbfkey a >/dev/null
expect "TIMING on an APBF key" "$wrongtype" "$(m TIMING.ADD apbfkey a)"
expect "TYPE" ebb-timng "$(m TYPE t)"

# Arity and key specs (COMMAND INFO: name, arity, flags, first, last, step).
expect "POSTERIOR arity" -3 "$(m COMMAND INFO TIMING.POSTERIOR | sed -n 2p)"
expect "EXISTS arity" 3 "$(m COMMAND INFO TIMING.EXISTS | sed -n 2p)"
check "POSTERIOR is read-only" bash -c "redis-cli -p ${SERVER_PORT[main]} COMMAND INFO TIMING.POSTERIOR | grep -qx readonly"
check "ADD is a write" bash -c "redis-cli -p ${SERVER_PORT[main]} COMMAND INFO TIMING.ADD | grep -qx write"
expect "key position" "t" "$(m COMMAND GETKEYS TIMING.POSTERIOR t a PRIOR 0.5)"

# Keyspace notifications: one per write.
notifications() {
    timeout 20 redis-cli -p "${SERVER_PORT[main]}" PSUBSCRIBE '__keyspace@0__:note' \
        >"$WORK/notes" 2>&1 &
    local listener=$!
    wait_until 10 listening main 1
    m TIMING.RESERVE note 10 >/dev/null
    m TIMING.ADD note a >/dev/null
    m TIMING.MADD note b c >/dev/null
    m TIMING.EXISTS note a >/dev/null
    m TIMING.POSTERIOR note a PRIOR 0.5 >/dev/null
    # A marker published last on the channel: once it has arrived, so has
    # any event the reads above wrongly sent.
    m PUBLISH '__keyspace@0__:note' marker >/dev/null
    wait_until 10 has_lines "$WORK/notes" '^marker$' 1
    kill "$listener" 2>/dev/null
    wait "$listener" 2>/dev/null
    grep -E '^timing\.' "$WORK/notes" | paste -sd' '
}
expect "notifications" "timing.reserve timing.add timing.madd" "$(notifications)"

# COPY, MEMORY USAGE, SCANDUMP/LOADCHUNK.
expect "COPY" 1 "$(m COPY uni uni-copy)"
dump_to main uni "$WORK/uni.dump"
dump_to main uni-copy "$WORK/uni-copy.dump"
check "COPY is identical" cmp -s "$WORK/uni.dump" "$WORK/uni-copy.dump"
usage=$(m MEMORY USAGE created)
check "MEMORY USAGE ($usage) counts the timers" \
    [ "$usage" -ge "$(m TIMING.INFO created | pairs | field memory)" ]
m TIMING.MADD created $(seq -f 'c%g' 1 500) >/dev/null
chunks=$(scandump main TIMING.SCANDUMP created "$WORK/scan")
check "SCANDUMP of a 4.6 MB filter takes several chunks ($chunks)" [ "${chunks:-0}" -ge 2 ]
expect "LOADCHUNK" "$(printf 'OK\n%.0s' $(seq 1 "$chunks"))" \
    "$(loadchunks main TIMING.LOADCHUNK restored "$WORK/scan" 1 "$chunks")"
dump_to main created "$WORK/created.dump"
dump_to main restored "$WORK/restored.dump"
check "SCANDUMP/LOADCHUNK round trip identical" cmp -s "$WORK/created.dump" "$WORK/restored.dump"
expect "restored answers" "1 1 0" "$(m TIMING.MEXISTS restored x c500 nope | paste -sd' ')"
apbf_chunks=$(scandump main APBF.SCANDUMP apbfkey "$WORK/apbfscan")
expect_match "LOADCHUNK of another family's snapshot refused" '^ERR' \
    "$(loadchunks main TIMING.LOADCHUNK fromapbf "$WORK/apbfscan" 1 "$apbf_chunks" | grep -v '^$' | tail -n 1)"
expect "nothing restored from it" 0 "$(m EXISTS fromapbf)"
# A damaged chunk (a byte of the timers altered): the library's checksum
# refuses the whole restore; the server lives on.
cp -r "$WORK/scan" "$WORK/badscan"
printf '\x55' | dd of="$WORK/badscan/$chunks.data" bs=1 seek=1000 conv=notrunc 2>/dev/null
expect_match "altered LOADCHUNK refused" '^ERR' \
    "$(loadchunks main TIMING.LOADCHUNK badload "$WORK/badscan" 1 "$chunks" | grep -v '^$' | tail -n 1)"
expect "server alive after the altered LOADCHUNK" PONG "$(m PING)"
expect "nothing restored from the altered chunks" 0 "$(m EXISTS badload)"

# ------------------------------------------------------------------------
# 2. POSTERIOR
# ------------------------------------------------------------------------

# post <key> <item> [options]: "posterior expected_age likely_age decision
# standard".
post() {
    local key=$1 item=$2
    shift 2
    m TIMING.POSTERIOR "$key" "$item" "$@" | pairs |
        awk '{ v[$1] = $2 } END { print v["posterior"], v["expected_age"],
              v["likely_age"], v["decision"], v["standard"] }'
}

m TIMING.RESERVE p 100 ERROR 0.01 >/dev/null
m TIMING.ADD p old >/dev/null
m TIMING.MADD p $(seq -f 'f%g' 1 90) >/dev/null
m TIMING.ADD p last >/dev/null
read -r posterior age likely decision standard <<<"$(post p last PRIOR 0.01)"
check "the item added last: posterior $posterior > 0.999" in_range "$posterior" 0.999 1
# The block (50 here) is the filter's resolution: the item is known to be
# in the current block, of in_block insertions so far.
in_block=$(m TIMING.INFO p | pairs | field in_block)
check "the item added last: expected age $age within the current block ($in_block)" \
    in_range "$age" -1 "$in_block"
expect "the item added last: likely age, decision, standard" "0 1 1" "$likely $decision $standard"
read -r posterior age likely decision standard <<<"$(post p never PRIOR 0.01)"
expect "never added: posterior 0, decision 0, standard 0" "0 0 0" "$posterior $decision $standard"
check "never added: expected age $age beyond the window" in_range "$age" 100 1e9
# An old item with a small prior: more likely a false positive.
read -r posterior age likely decision standard <<<"$(post p old PRIOR 1e-6)"
check "old item, PRIOR 1e-6: posterior $posterior between 0.05 and 0.5" in_range "$posterior" 0.05 0.5
expect "old item, PRIOR 1e-6: standard yes, decision no" "1 0" "$standard $decision"
high=$(post p old PRIOR 0.01 | cut -d' ' -f1)
check "a larger PRIOR raises the posterior ($posterior -> $high)" in_range "$high" "$posterior" 1
# COSTS: the decision is cost-fp (1 - posterior) <= cost-fn posterior.
for costs in "1 1" "1 10" "1 4" "0 1" "1 0" "3 7"; do
    read -r cfp cfn <<<"$costs"
    read -r posterior _ _ decision _ <<<"$(post p old PRIOR 1e-6 COSTS "$cfp" "$cfn")"
    want=$(awk -v p="$posterior" -v a="$cfp" -v b="$cfn" 'BEGIN { print (a * (1 - p) <= b * p) ? 1 : 0 }')
    expect "COSTS $costs: decision by the rule (posterior $posterior)" "$want" "$decision"
done
expect "COSTS 1 10 turns the decision to yes" 1 "$(post p old PRIOR 1e-6 COSTS 1 10 | cut -d' ' -f4)"
expect "COSTS 1 4 keeps it no" 0 "$(post p old PRIOR 1e-6 COSTS 1 4 | cut -d' ' -f4)"
# WINDOW: a shorter window than the item's age lowers the posterior.
full=$(post p old PRIOR 0.01 | cut -d' ' -f1)
short=$(post p old PRIOR 0.01 WINDOW 50 | cut -d' ' -f1)
check "WINDOW 50 < the item's age 91: posterior $short well below $full" in_range "$short" 0 0.5
# UNIVERSE gives the prior 1/n: no PRIOR needed, same as PRIOR 1/n.
m TIMING.MADD uni a b c >/dev/null
expect "UNIVERSE: POSTERIOR without PRIOR is PRIOR 1/n" \
    "$(post uni a PRIOR 0.0002)" "$(post uni a)"

# The library's own answer for the same state: SCANDUMP is the library's
# snapshot, which `ebb recent --state` loads; its first line answers the
# query on that state (then inserts, in its copy only).
library_answer() {
    local key=$1 item=$2 prior=$3 cfp=$4 cfn=$5 n
    n=$(scandump main TIMING.SCANDUMP "$key" "$WORK/lib") || return 1
    : >"$WORK/lib.state"
    for i in $(seq 1 "$n"); do cat "$WORK/lib/$i.data" >>"$WORK/lib.state"; done
    echo "$item" | "$EBB" recent --state "$WORK/lib.state" --prior "$prior" \
        --cost-fp "$cfp" --cost-fn "$cfn" |
        awk -F'\t' '{ print $2, $3, $4, $5, $6 }'
}
# same_numbers <a> <b>: the same five numbers (doubles to 15 digits: the
# CLI prints the shortest form, Redis %.17g).
same_numbers() {
    [ "$(wc -w <<<"$1")" -eq 5 ] && [ "$(wc -w <<<"$2")" -eq 5 ] &&
    [ "$(awk '{ printf "%.15g %.15g %d %d %d\n", $1, $2, $3, $4, $5 }' <<<"$1")" = \
      "$(awk '{ printf "%.15g %.15g %d %d %d\n", $1, $2, $3, $4, $5 }' <<<"$2")" ]
}
check "the CLI is at $EBB" [ -x "$EBB" ]
m TIMING.MADD created $(seq -f 'd%g' 1 2000) >/dev/null
for query in "p last 0.01 1 1" "p old 1e-6 1 10" "p old 0.001 2 1" "p never 0.5 1 1" \
    "uni a 0.0002 1 1" "created d1 0.000001 1 1" "created d2000 0.5 5 1" \
    "created x 1e-9 1 100"; do
    read -r key item prior cfp cfn <<<"$query"
    redis=$(post "$key" "$item" PRIOR "$prior" COSTS "$cfp" "$cfn")
    library=$(library_answer "$key" "$item" "$prior" "$cfp" "$cfn")
    check "POSTERIOR $query: Redis '$redis' = library '$library'" \
        same_numbers "$redis" "$library"
done
stop_server main

# ------------------------------------------------------------------------
# 3. RDB and AOF
# ------------------------------------------------------------------------

KEYS=(big small made)
# fill <server>: 100k items in a window of 200k (all remembered), in a
# window of 10k (most expired, T+ wrapped many times), and in a key made by
# MADD with the defaults.
fill() {
    rcli "$1" TIMING.RESERVE big 200000 ERROR 0.01 UNIVERSE 1000000 >/dev/null
    rcli "$1" TIMING.RESERVE small 10000 MEMORY 100000 >/dev/null
    {
        items_command TIMING.MADD big item: 0 "$ITEMS" 1000
        items_command TIMING.MADD small item: 0 "$ITEMS" 1000
        items_command TIMING.MADD made item: 0 "$ITEMS" 1000
    } | pipe_to "$1"
}

# snapshot <server> <tag>: DUMPs and answers into $WORK/<tag>.*
snapshot() {
    local key
    for key in "${KEYS[@]}"; do
        dump_to "$1" "$key" "$WORK/$2.$key.dump"
    done
    {
        answers "$1" TIMING.MEXISTS big item: 0 "$PROBES"
        answers "$1" TIMING.MEXISTS big absent: 0 "$PROBES"
        answers "$1" TIMING.MEXISTS small item: $((ITEMS - PROBES)) "$ITEMS"
        answers "$1" TIMING.MEXISTS made absent: 0 "$PROBES"
        for i in 0 50000 99999; do
            rcli "$1" TIMING.POSTERIOR big item:$i
            rcli "$1" TIMING.POSTERIOR small item:$i PRIOR 0.0001 COSTS 1 3
        done
        rcli "$1" TIMING.INFO small
    } >"$WORK/$2.answers"
}

check_answers() {
    local tag=$1 ones
    ones=$(sed -n "1,${PROBES}p" "$WORK/$tag.answers" | count_ones)
    expect "$tag: every item of big present" "$PROBES" "$ones"
    ones=$(sed -n "$((PROBES + 1)),$((2 * PROBES))p" "$WORK/$tag.answers" | count_ones)
    # fp <= 0.01: at most 100 + 3 sd of 10k.
    check "$tag: big false positives ($ones) within 130" [ "$ones" -le 130 ]
    ones=$(sed -n "$((2 * PROBES + 1)),$((3 * PROBES))p" "$WORK/$tag.answers" | count_ones)
    expect "$tag: the last 10k of small present" "$PROBES" "$ones"
}

same() {
    local key
    for key in "${KEYS[@]}"; do
        check "$1: $key DUMP byte-identical" cmp -s "$WORK/$2.$key.dump" "$WORK/$3.$key.dump"
    done
    check "$1: identical answers" cmp -s "$WORK/$2.answers" "$WORK/$3.answers"
}

start_server rdb || exit 1
fill rdb
snapshot rdb rdb-before
check_answers rdb-before
expect "SAVE" OK "$(rcli rdb SAVE)"
stop_server rdb
start_server rdb || exit 1
expect "RDB: keys back" 3 "$(rcli rdb DBSIZE)"
snapshot rdb rdb-after
same "RDB restart" rdb-before rdb-after

# DUMP/RESTORE, and damaged payloads.
expect "RESTORE" OK "$(rcli rdb EVAL "return redis.call('RESTORE', KEYS[1], 0, redis.call('DUMP', KEYS[2]))" 2 big2 big)"
dump_to rdb big2 "$WORK/big2.dump"
check "DUMP/RESTORE identical" cmp -s "$WORK/rdb-before.big.dump" "$WORK/big2.dump"
expect "RESTORE answers" "$(answers rdb TIMING.MEXISTS big item: 0 2000 | md5sum)" \
    "$(answers rdb TIMING.MEXISTS big2 item: 0 2000 | md5sum)"
expect "DEBUG DIGEST-VALUE equal" "$(rcli rdb DEBUG DIGEST-VALUE big)" "$(rcli rdb DEBUG DIGEST-VALUE big2)"
rcli rdb DEBUG SET-SKIP-CHECKSUM-VALIDATION 1 >/dev/null
# A byte of the timers altered (far from the header): the library's
# checksum refuses it.
rcli rdb EVAL "local d = redis.call('DUMP', KEYS[1]) local i = 5000
  local b = string.char((string.byte(d, i) + 1) % 256)
  return redis.call('RESTORE', KEYS[2], 0, string.sub(d, 1, i - 1) .. b .. string.sub(d, i + 1))" \
    2 small bad >"$WORK/bad.reply"
check "altered RESTORE refused ($(head -c 80 "$WORK/bad.reply"))" grep -q '^ERR' "$WORK/bad.reply"
rcli rdb EVAL "local d = redis.call('DUMP', KEYS[1])
  return redis.call('RESTORE', KEYS[2], 0, string.sub(d, 1, 200) .. string.sub(d, -10))" \
    2 small bad >"$WORK/bad.reply"
check "truncated RESTORE refused ($(head -c 80 "$WORK/bad.reply"))" grep -q '^ERR' "$WORK/bad.reply"
expect "server alive after damaged payloads" PONG "$(rcli rdb PING)"
expect "no damaged key" 0 "$(rcli rdb EXISTS bad)"
stop_server rdb

AOF_OPTIONS=(--appendonly yes --aof-use-rdb-preamble no --appendfsync always)
start_server aof "${AOF_OPTIONS[@]}" || exit 1
fill aof
snapshot aof aof-before
check_answers aof-before
stop_server aof
incr=("$WORK"/aof/appendonlydir/*.incr.aof)
check "AOF logs the chosen SHAPE" grep -qa 'SHAPE' "${incr[@]}"
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-replayed
same "AOF replay" aof-before aof-replayed
expect "BGREWRITEAOF" "Background append only file rewriting started" "$(rcli aof BGREWRITEAOF)"
rewrite_done() {
    rcli aof INFO persistence | grep -q '^aof_rewrite_in_progress:0' &&
        rcli aof INFO persistence | grep -q '^aof_rewrite_scheduled:0' &&
        rcli aof INFO persistence | grep -q '^aof_last_bgrewrite_status:ok'
}
check "AOF rewrite finishes" wait_until 30 rewrite_done
base=$(ls "$WORK"/aof/appendonlydir/*.base.aof)
check "the rewrite restores with TIMING.LOADCHUNK" grep -qa 'TIMING\.LOADCHUNK' "$base"
stop_server aof
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-rewritten
same "AOF rewrite and restart" aof-before aof-rewritten
stop_server aof

# ------------------------------------------------------------------------
# 5. Replication
# ------------------------------------------------------------------------

start_server primary --repl-diskless-sync-delay 0 || exit 1
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
check "replica linked" wait_until 10 link_up replica

identical() {
    local description=$1 key
    shift
    for key in "$@"; do
        dump_to primary "$key" "$WORK/primary.dump"
        dump_to replica "$key" "$WORK/replica.dump"
        check "$description: $key byte-identical on the replica" \
            cmp -s "$WORK/primary.dump" "$WORK/replica.dump"
        check "$description: $key is not empty" [ -s "$WORK/primary.dump" ]
    done
}

rcli primary TIMING.RESERVE big 200000 ZIPF 1000 >/dev/null
rcli primary TIMING.RESERVE small 10000 >/dev/null
rcli replica MONITOR >"$WORK/monitor" 2>&1 &
monitor=$!
sleep 0.3
{
    items_command TIMING.MADD big item: 0 50000 1000
    items_command TIMING.MADD small item: 0 50000 500
    items_command TIMING.MADD made item: 0 50000 1000
} | pipe_to primary
for i in $(seq 1 50); do echo "TIMING.ADD small one:$i"; done | rcli primary >/dev/null
check "writes reach the replica" synced
kill "$monitor" 2>/dev/null
wait "$monitor" 2>/dev/null
check "a key made by MADD arrives as RESERVE ... SHAPE" \
    grep -q '"TIMING.RESERVE" "made" "1000000" "SHAPE"' "$WORK/monitor"
identical "100k writes" big small made
expect "replica answers" "$(answers primary TIMING.MEXISTS small item: 40000 50000 | md5sum)" \
    "$(answers replica TIMING.MEXISTS small item: 40000 50000 | md5sum)"
expect "replica POSTERIOR" "$(rcli primary TIMING.POSTERIOR big item:7 PRIOR 0.001)" \
    "$(rcli replica TIMING.POSTERIOR big item:7 PRIOR 0.001)"
expect "the replica refuses writes" \
    "READONLY You can't write against a read only replica." "$(rcli replica TIMING.ADD big x)"

# The replica stopped in the middle of a stream of writes, restarted while
# the primary still writes (partial or full resync).
{
    items_command TIMING.MADD big item: 50000 100000 100
    items_command TIMING.MADD small item: 50000 100000 100
    items_command TIMING.MADD made late: 0 20000 100
} >"$WORK/stream.resp"
# Paced: 40 pieces 0.05 s apart, so the stream outlasts the restart.
split -n l/40 "$WORK/stream.resp" "$WORK/piece."
for piece in "$WORK"/piece.*; do cat "$piece"; sleep 0.05; done |
    pipe_to primary &
writer=$!
sleep 0.2
stop_server replica
sleep 0.3
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
check "the replica restarted while the primary was writing" kill -0 "$writer"
check "the primary's writes all applied" wait "$writer"
check "restarted replica linked" wait_until 10 link_up replica
check "restarted replica caught up" synced
identical "after the replica's restart" big small made
stop_server replica
stop_server primary

finish
