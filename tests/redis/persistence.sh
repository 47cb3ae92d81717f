#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# persistence.sh: filters survive restarts and damaged payloads are refused.
#
#   1. RDB: 100k items in an APBF, a blocked APBF and a TLBF; SAVE, restart:
#      DUMP payloads byte-identical, and identical answers to 20k probes
#      (10k added, 10k never added) before and after.
#   2. AOF (appendonly yes, no RDB preamble): the same through a restart
#      that replays the writes (TLBF writes logged as TLBF.ADDAT), then
#      through BGREWRITEAOF (the module's rewrite: LOADCHUNK commands, also
#      for a LOADCHUNK restore in progress) and another restart.
#   3. DUMP/RESTORE round trip; RESTORE of truncated or altered payloads
#      is refused and the server keeps running: caught by Redis's own
#      checksum, and, with that check switched off (DEBUG
#      SET-SKIP-CHECKSUM-VALIDATION), by the module (snapshot checksum,
#      encoding version, short read).
#   4. An RDB file whose filter was altered (saved with rdbchecksum no):
#      the server refuses to start, with the module's reason in its log,
#      rather than crash or load a wrong filter.
#   5. An RDB file of encoding version 1 (fixtures/v1.rdb, written by the
#      module before issue 19: fixtures/make-v1-fixture.sh) loads with the
#      same answers, snapshots and restore in progress.
#
#   bash persistence.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

ITEMS=100000
PROBES=10000

# fill <server>: the three filters with ITEMS items each.
fill() {
    rcli "$1" APBF.RESERVE apbf 1000000 ERROR 0.01 >/dev/null
    rcli "$1" APBF.RESERVE blocked 1000000 ERROR 0.01 BLOCKED >/dev/null
    # A ten-minute span: nothing expires while the test runs.
    rcli "$1" TLBF.RESERVE tlbf 600000 ERROR 0.01 RATE 100000 >/dev/null
    {
        items_command APBF.MADD apbf item: 0 "$ITEMS" 1000
        items_command APBF.MADD blocked item: 0 "$ITEMS" 1000
        items_command TLBF.MADD tlbf item: 0 "$ITEMS" 1000
    } | pipe_to "$1"
}

# snapshot <server> <tag>: DUMP payloads and probe answers into $WORK/<tag>.*
snapshot() {
    local key
    for key in apbf blocked tlbf; do
        dump_to "$1" "$key" "$WORK/$2.$key.dump"
    done
    {
        answers "$1" APBF.MEXISTS apbf item: 0 "$PROBES"
        answers "$1" APBF.MEXISTS apbf absent: 0 "$PROBES"
        answers "$1" APBF.MEXISTS blocked item: 0 "$PROBES"
        answers "$1" APBF.MEXISTS blocked absent: 0 "$PROBES"
        answers "$1" TLBF.MEXISTS tlbf item: 0 "$PROBES"
        answers "$1" TLBF.MEXISTS tlbf absent: 0 "$PROBES"
    } >"$WORK/$2.answers"
}

# The probe answers must be sound before they are compared: every added
# item present, absent ones at the false-positive rate (<= 0.01 each:
# expect <= 100 of 10k, bound 100 + 3 sd = 100 + 3 sqrt(10k 0.01 0.99)).
check_answers() {
    local tag=$1 block present false_positives
    expect "$tag: 60k answers" $((6 * PROBES)) "$(wc -l <"$WORK/$tag.answers")"
    for block in 0 1 2; do
        present=$(sed -n "$((2 * block * PROBES + 1)),$(((2 * block + 1) * PROBES))p" \
            "$WORK/$tag.answers" | count_ones)
        expect "$tag: filter $block reports every added item" "$PROBES" "$present"
        false_positives=$(sed -n "$(((2 * block + 1) * PROBES + 1)),$(((2 * block + 2) * PROBES))p" \
            "$WORK/$tag.answers" | count_ones)
        check "$tag: filter $block false positives ($false_positives of $PROBES) within 100 + 3 sd" \
            [ "$false_positives" -le 130 ]
    done
}

# same <description> <tag before> <tag after>
same() {
    local key
    for key in apbf blocked tlbf; do
        check "$1: $key DUMP byte-identical" \
            cmp -s "$WORK/$2.$key.dump" "$WORK/$3.$key.dump"
    done
    check "$1: identical answers to $((6 * PROBES)) probes" \
        cmp -s "$WORK/$2.answers" "$WORK/$3.answers"
}

# ------------------------------------------------------------------------
# 1. RDB
# ------------------------------------------------------------------------

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
stop_server rdb

# ------------------------------------------------------------------------
# 2. AOF
# ------------------------------------------------------------------------

AOF_OPTIONS=(--appendonly yes --aof-use-rdb-preamble no --appendfsync always)
start_server aof "${AOF_OPTIONS[@]}" || exit 1
fill aof
snapshot aof aof-before
check_answers aof-before
stop_server aof
incr=("$WORK"/aof/appendonlydir/*.incr.aof)
check "AOF logs TLBF writes as TLBF.ADDAT" grep -qa 'TLBF\.ADDAT' "${incr[@]}"
check "AOF never logs the clock-reading TLBF.MADD" \
    bash -c '! grep -qa "TLBF\.MADD" "$@"' _ "${incr[@]}"
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-replayed
same "AOF replay" aof-before aof-replayed

# A LOADCHUNK restore in progress must survive the rewrite too.
chunks=$(scandump aof APBF.SCANDUMP apbf "$WORK/scan")
check "the filter takes several chunks ($chunks)" [ "${chunks:-0}" -ge 2 ]
loadchunks aof APBF.LOADCHUNK partial "$WORK/scan" 1 >/dev/null
expect "BGREWRITEAOF" "Background append only file rewriting started" \
    "$(rcli aof BGREWRITEAOF)"
rewrite_done() {
    rcli aof INFO persistence | grep -q '^aof_rewrite_in_progress:0' &&
        rcli aof INFO persistence | grep -q '^aof_rewrite_scheduled:0' &&
        rcli aof INFO persistence | grep -q '^aof_last_bgrewrite_status:ok'
}
check "AOF rewrite finishes" wait_until 30 rewrite_done
base=$(ls "$WORK"/aof/appendonlydir/*.base.aof)
check "the rewrite restores filters with LOADCHUNK" grep -qa 'APBF\.LOADCHUNK' "$base"
check "the rewrite restores TLBFs with LOADCHUNK" grep -qa 'TLBF\.LOADCHUNK' "$base"
check "the rewrite does not re-add items" bash -c '! grep -qa "MADD" "$1"' _ "$base"
stop_server aof
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-rewritten
same "AOF rewrite" aof-before aof-rewritten
expect "the restore in progress continues after the rewrite" \
    "$(yes OK | head -n $((chunks - 1)))" \
    "$(loadchunks aof APBF.LOADCHUNK partial "$WORK/scan" 2 "$chunks")"
dump_to aof partial "$WORK/partial.dump"
check "and completes into the original filter" \
    cmp -s "$WORK/aof-before.apbf.dump" "$WORK/partial.dump"
# Writes after the rewrite go to a new incremental file and replay on top.
rcli aof APBF.ADD apbf after-rewrite >/dev/null
rcli aof TLBF.ADD tlbf after-rewrite >/dev/null
snapshot aof aof-more
stop_server aof
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-more-replayed
same "AOF rewrite + increment" aof-more aof-more-replayed

# ------------------------------------------------------------------------
# 3. DUMP / RESTORE
# ------------------------------------------------------------------------

r() { rcli aof "$@"; }
expect "RESTORE a DUMP" OK \
    "$(redis-cli -p "${SERVER_PORT[aof]}" -x RESTORE copy 0 <"$WORK/aof-more.apbf.dump")"
expect "restored answers" "$(answers aof APBF.MEXISTS apbf item: 0 2000 | md5sum)" \
    "$(answers aof APBF.MEXISTS copy item: 0 2000 | md5sum)"

# restore <name> <payload file>: RESTORE's reply (last non-empty line).
restore() {
    redis-cli -p "${SERVER_PORT[aof]}" -x RESTORE "$1" 0 <"$2" 2>&1 |
        grep -v '^$' | tail -n 1
}

# flip <file> <offset>: inverts the byte at offset.
flip() {
    local byte
    byte=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "\\x$(printf '%02x' $((255 - byte)))" |
        dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# Uncompressed payloads, so a flipped byte lands in the snapshot itself.
r CONFIG SET rdbcompression no >/dev/null
dump_to aof apbf "$WORK/plain.dump"
size=$(stat -c %s "$WORK/plain.dump")
check "payload holds the whole filter ($size bytes)" [ "$size" -gt 1000000 ]
head -c $((size / 2)) "$WORK/plain.dump" >"$WORK/truncated.dump"
cp "$WORK/plain.dump" "$WORK/flipped.dump"
flip "$WORK/flipped.dump" $((size / 2))
# Half the payload and the original footer (RDB version and CRC).
{ head -c $((size / 2)) "$WORK/plain.dump"; tail -c 10 "$WORK/plain.dump"; } \
    >"$WORK/short-read.dump"
# Byte 9 is the low byte of the module type id, whose low bits are the
# encoding version (2): make it 3.
r APBF.RESERVE tiny 10 >/dev/null
dump_to aof tiny "$WORK/tiny.dump"
expect "encoding version byte" 2 "$(od -An -tu1 -j 9 -N 1 "$WORK/tiny.dump" | tr -d ' ')"
cp "$WORK/tiny.dump" "$WORK/encver.dump"
printf '\x03' | dd of="$WORK/encver.dump" bs=1 seek=9 conv=notrunc 2>/dev/null
# Encoding version 2 after the module id: 02 00 (kind 0, a filter), then
# 02 40 a0 (the snapshot's total, 160, in the RDB's 14-bit length form),
# then the pieces. A total 8 bytes longer than the snapshot announces, and
# one 8 bytes shorter than its first piece, must each be refused.
expect "tiny value's kind and total" "2 0 2 64 160" \
    "$(od -An -tu1 -j 10 -N 5 "$WORK/tiny.dump" | tr -s ' ' | sed 's/^ //')"
cp "$WORK/tiny.dump" "$WORK/total-long.dump"
printf '\xa8' | dd of="$WORK/total-long.dump" bs=1 seek=14 conv=notrunc 2>/dev/null
cp "$WORK/tiny.dump" "$WORK/total-short.dump"
printf '\x98' | dd of="$WORK/total-short.dump" bs=1 seek=14 conv=notrunc 2>/dev/null

crc_refusal='^ERR DUMP payload version or checksum are wrong'
expect_match "RESTORE truncated payload refused" "$crc_refusal" \
    "$(restore bad1 "$WORK/truncated.dump")"
expect_match "RESTORE altered payload refused" "$crc_refusal" \
    "$(restore bad2 "$WORK/flipped.dump")"
expect "server up after refusals" PONG "$(r PING)"

# Past Redis's checksum, the module must refuse on its own.
expect "skip Redis's DUMP checksum" OK "$(r DEBUG SET-SKIP-CHECKSUM-VALIDATION 1)"
bad_format='^ERR Bad data format'
log="$WORK/aof/redis.log"
expect_match "module refuses an altered snapshot" "$bad_format" \
    "$(restore bad3 "$WORK/flipped.dump")"
check "the log names the snapshot checksum" \
    grep -q 'ebb: APBF snapshot rejected.*checksum' "$log"
expect_match "module refuses an unknown encoding version" "$bad_format" \
    "$(restore bad4 "$WORK/encver.dump")"
check "the log names the encoding version" \
    grep -q 'ebb: APBF value of encoding version 3' "$log"
expect_match "module refuses a short payload" "$bad_format" \
    "$(restore bad5 "$WORK/short-read.dump")"
expect_match "module refuses a total the snapshot does not announce" \
    "$bad_format" "$(restore bad7 "$WORK/total-long.dump")"
check "the log says the header does not announce the total" \
    grep -q 'ebb: APBF: the snapshot.s header does not announce the 168 bytes' "$log"
expect_match "module refuses a piece longer than the total" \
    "$bad_format" "$(restore bad8 "$WORK/total-short.dump")"
check "the log names the piece and what remains" \
    grep -q 'ebb: APBF: a snapshot piece of 160 bytes where 152 remain' "$log"
expect_match "truncated without footer refused" '^ERR' \
    "$(restore bad6 "$WORK/truncated.dump")"
expect "the unaltered payload still restores" OK "$(restore good "$WORK/plain.dump")"
expect "no refused key exists" 0 \
    "$(r EXISTS bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8)"
expect "server up after module refusals" PONG "$(r PING)"
expect "checksum validation back on" OK "$(r DEBUG SET-SKIP-CHECKSUM-VALIDATION 0)"

# Every state of a TLBF must reload, including the moment a generation's
# budget is spent (a small RATE spends it at the first add).
r TLBF.RESERVE budget 60000 RATE 1 >/dev/null
r TLBF.ADD budget x >/dev/null
dump_to aof budget "$WORK/budget.dump"
expect "a TLBF whose generation budget is spent reloads" OK \
    "$(restore budget-restored "$WORK/budget.dump")"
expect "filters intact" "$(answers aof APBF.MEXISTS apbf item: 0 2000 | md5sum)" \
    "$(answers aof APBF.MEXISTS good item: 0 2000 | md5sum)"
stop_server aof

# ------------------------------------------------------------------------
# 4. A damaged RDB file
# ------------------------------------------------------------------------

start_server corrupt --rdbchecksum no --rdbcompression no || exit 1
rcli corrupt APBF.RESERVE apbf 1000000 >/dev/null
items_command APBF.MADD apbf item: 0 1000 1000 | pipe_to corrupt
expect "SAVE unchecked RDB" OK "$(rcli corrupt SAVE)"
stop_server corrupt
rdb="$WORK/corrupt/dump.rdb"
rdb_size=$(stat -c %s "$rdb")
flip "$rdb" $((rdb_size / 2))
: >"$WORK/corrupt/redis.log"
timeout 20 redis-server --port "${SERVER_PORT[corrupt]}" --bind 127.0.0.1 \
    --dir "$WORK/corrupt" --logfile "$WORK/corrupt/redis.log" --save '' \
    --loadmodule "$MODULE" >"$WORK/corrupt/stdout" 2>&1
status=$?
# Redis stops loading at the first value a module cannot load, by itself,
# not killed by a signal or timeout. Redis 7.0 then runs its own RDB check,
# which cannot read module data, prints "RDB looks OK" and exits 0: the
# quirk docs/redis.md "Persistence" tells operators about.
check "a damaged RDB stops the server, no crash (status $status)" \
    [ "$status" -lt 124 ]
check "Redis 7.0 exits 0 after refusing a module value (status $status)" \
    [ "$status" -eq 0 ]
check "Redis 7.0's RDB check says the file looks OK" \
    grep -q 'RDB looks OK' "$WORK/corrupt/stdout"
check "the log names the module's reason" \
    grep -q 'ebb: APBF snapshot rejected.*checksum' "$WORK/corrupt/redis.log"
check "Redis reports the value the module refused" \
    grep -q 'module data for the module type .ebb.* not able to load' \
    "$WORK/corrupt/redis.log"

# ------------------------------------------------------------------------
# 5. Encoding version 1
# ------------------------------------------------------------------------

fixtures="$(dirname "$0")/fixtures"
mkdir -p "$WORK/v1"
cp "$fixtures/v1.rdb" "$WORK/v1/dump.rdb"
start_server v1 || exit 1
expect "v1 RDB: every key loads" 4 "$(rcli v1 DBSIZE)"
mapfile -t want <"$fixtures/v1.expected"
got=()
for key in apbf blocked; do
    got+=("$({ answers v1 APBF.MEXISTS "$key" item: 0 200
               answers v1 APBF.MEXISTS "$key" absent: 0 200; } | tr '\n' ' ')")
done
got+=("$({ answers v1 TLBF.MEXISTS tlbf item: 0 200
           answers v1 TLBF.MEXISTS tlbf absent: 0 200; } | tr '\n' ' ')")
for key in apbf blocked tlbf; do
    case $key in tlbf) family=TLBF ;; *) family=APBF ;; esac
    scandump v1 "$family.SCANDUMP" "$key" "$WORK/v1-$key" >/dev/null
    got+=("$(cat "$WORK/v1-$key"/*.data | md5sum | cut -d ' ' -f 1)")
done
names=("apbf answers" "blocked answers" "tlbf answers" "apbf snapshot"
       "blocked snapshot" "tlbf snapshot")
for i in 0 1 2 3 4 5; do
    expect "v1 RDB: ${names[$i]} as before" "${want[$i]}" "${got[$i]}"
done
expect_match "v1 RDB: the restore in progress is back" \
    '1000 of 2912 bytes' "$(rcli v1 APBF.EXISTS partial x)"
# Saved again (version 2) and reloaded: still the same, DEBUG DIGEST-VALUE
# included, which follows the filter's contents.
digests() { rcli v1 DEBUG DIGEST-VALUE apbf blocked tlbf partial | tr '\n' ' '; }
digest_before=$(digests)
expect_match "DEBUG DIGEST-VALUE digests filters" \
    '^([0-9a-f]{40} ){4}$' "$digest_before"
check "four different digests" \
    [ "$(echo "$digest_before" | tr ' ' '\n' | sort -u | grep -c .)" = 4 ]
expect "v1 RDB: DEBUG RELOAD" OK "$(rcli v1 DEBUG RELOAD)"
expect "DEBUG DIGEST-VALUE unchanged by a reload" "$digest_before" "$(digests)"
expect "v1 RDB: every key after a version-2 reload" 4 "$(rcli v1 DBSIZE)"
scandump v1 APBF.SCANDUMP apbf "$WORK/v1-apbf" >/dev/null
expect "v1 RDB: apbf snapshot after a version-2 reload" "${want[3]}" \
    "$(cat "$WORK/v1-apbf"/*.data | md5sum | cut -d ' ' -f 1)"
expect_match "v1 RDB: the restore in progress after a version-2 reload" \
    '1000 of 2912 bytes' "$(rcli v1 APBF.EXISTS partial x)"
for key in apbf blocked tlbf; do
    case $key in tlbf) family=TLBF ;; *) family=APBF ;; esac
    before=$(rcli v1 DEBUG DIGEST-VALUE "$key")
    rcli v1 "$family.ADD" "$key" digest-probe >/dev/null
    check "DEBUG DIGEST-VALUE of $key changes with an add" \
        [ "$before" != "$(rcli v1 DEBUG DIGEST-VALUE "$key")" ]
done
stop_server v1

# An AOF rewrite (LOADCHUNK form) of the version-1 restore in progress,
# whose 1000 bytes an older module took in a chunk SCANDUMP would not cut,
# and a restart from that AOF: the restore is still there, as it was.
rewritten() {
    redis-cli -p "${SERVER_PORT[v1]}" INFO persistence | tr -d '\r' |
        grep -q '^aof_rewrite_in_progress:0$' &&
        redis-cli -p "${SERVER_PORT[v1]}" INFO persistence | tr -d '\r' |
        grep -q '^aof_rewrite_scheduled:0$'
}
start_server v1 --aof-use-rdb-preamble no || exit 1
digest_partial=$(rcli v1 DEBUG DIGEST-VALUE partial)
rcli v1 CONFIG SET appendonly yes >/dev/null
sleep 0.2
check "the AOF is rewritten from the loaded keys" wait_until 30 rewritten
stop_server v1
rm -f "$WORK/v1/dump.rdb"
start_server v1 --appendonly yes --aof-use-rdb-preamble no || exit 1
expect_match "the restore in progress survives an AOF rewrite and replay" \
    '1000 of 2912 bytes' "$(rcli v1 APBF.EXISTS partial x)"
expect "with the same bytes" "$digest_partial" \
    "$(rcli v1 DEBUG DIGEST-VALUE partial)"
check "and no critical line in the log" \
    bash -c "! grep -q CRITICAL '$WORK/v1/redis.log'"
stop_server v1

finish
