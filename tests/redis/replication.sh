#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# replication.sh: a replica (REPLICAOF on loopback) holds exactly what its
# primary holds, for APBF and TLBF.
#
#   - every kind of write (RESERVE, ADD, MADD, INSERT, ADDAT, LOADCHUNK,
#     implicit creation, refused TLBF adds): DUMP payloads byte-identical on
#     both sides and identical answers to probes;
#   - what the replica receives for TLBF writes is TLBF.ADDAT with the
#     primary's timestamp (seen with MONITOR on the replica), and a key
#     created by a write arrives as an explicit RESERVE first;
#   - different clocks: the replica is stopped (SIGSTOP) while the primary
#     takes TLBF writes and resumed 1.5 s later, so it applies them at a
#     later time on its own clock; its state is still byte-identical;
#   - a replica attached later gets the filters by full sync (RDB);
#   - the replica refuses writes.
#
#   bash replication.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

# No delay before a full sync (the late replica below).
start_server primary --repl-diskless-sync-delay 0 || exit 1
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
p() { rcli primary "$@"; }
q() { rcli replica "$@"; }

check "replica linked" wait_until 10 link_up replica

# identical <description> <key...>: DUMP byte-identical on both.
identical() {
    local description=$1 key
    shift
    for key in "$@"; do
        dump_to primary "$key" "$WORK/primary.dump"
        dump_to replica "$key" "$WORK/replica.dump"
        check "$description: $key holds the same bytes on the replica" \
            cmp -s "$WORK/primary.dump" "$WORK/replica.dump"
        check "$description: $key is not empty" [ -s "$WORK/primary.dump" ]
    done
}

# same_answers <command> <key> <prefix> <from> <to>
same_answers() {
    expect "$1 $2 answers identical on the replica" \
        "$(answers primary "$@" | md5sum)" "$(answers replica "$@" | md5sum)"
}

# ------------------------------------------------------------------------
# Writes of every kind
# ------------------------------------------------------------------------

p APBF.RESERVE apbf 100000 ERROR 0.01 >/dev/null
p APBF.RESERVE blocked 100000 BLOCKED >/dev/null
# The bit-sliced layout: replicated as SHAPE ... LAYOUT SLICED CELLBITS w.
p APBF.RESERVE sliced 100000 ERROR 0.01 LAYOUT SLICED >/dev/null
p APBF.RESERVE sliced-64 100000 SHAPE 8 8 144270 LAYOUT SLICED CELLBITS 64 >/dev/null
p TLBF.RESERVE tlbf 600000 RATE 10000 >/dev/null
{
    items_command APBF.MADD apbf item: 0 50000 1000
    items_command APBF.MADD blocked item: 0 50000 1000
    items_command APBF.MADD sliced item: 0 250000 1000
    items_command APBF.MADD sliced-64 item: 0 50000 1000
    items_command TLBF.MADD tlbf item: 0 50000 1000
} | pipe_to primary
p APBF.ADD apbf one >/dev/null
p APBF.ADD apbf-created one >/dev/null
p APBF.INSERT apbf-inserted WINDOW 5000 ERROR 0.001 ITEMS a b c >/dev/null
p APBF.INSERT sliced-inserted WINDOW 5000 LAYOUT SLICED ITEMS a b c >/dev/null
p TLBF.ADD tlbf one >/dev/null
p TLBF.INSERT tlbf-inserted SPAN 300000 RATE 50 POLICY evict ITEMS a b >/dev/null
# A second ago: ADDAT refuses a client's time older than the span
# (tests/redis/time.sh).
p TLBF.ADDAT tlbf-at "$(($(date +%s%3N) - 1000))" a b >/dev/null
# Refusals change the filter's counters: the replica must count them too.
p TLBF.RESERVE small 60000 RATE 1 MAXMEMORY 40000 >/dev/null
p TLBF.MADD small $(seq -f 's%g' 1 20000) >/dev/null
check "the primary refused adds" [ "$(info_field primary TLBF.INFO small refused)" -gt 0 ]
check "writes reach the replica" synced
identical "writes" apbf blocked tlbf apbf-created apbf-inserted tlbf-inserted \
    tlbf-at small sliced sliced-64 sliced-inserted
for key in sliced sliced-64 sliced-inserted; do
    expect "$key: the replica's layout and cells are the primary's" \
        "$(info_field primary APBF.INFO "$key" layout) $(info_field primary APBF.INFO "$key" cell_bits)" \
        "$(info_field replica APBF.INFO "$key" layout) $(info_field replica APBF.INFO "$key" cell_bits)"
done
expect "sliced-64 kept CELLBITS 64 on the replica" "sliced 64" \
    "$(info_field replica APBF.INFO sliced-64 layout) $(info_field replica APBF.INFO sliced-64 cell_bits)"
same_answers APBF.MEXISTS sliced item: 200000 300000
same_answers APBF.MEXISTS apbf item: 40000 60000
same_answers APBF.MEXISTS blocked item: 40000 60000
same_answers TLBF.MEXISTS tlbf item: 40000 60000
expect "replica refused counter" "$(info_field primary TLBF.INFO small refused)" \
    "$(info_field replica TLBF.INFO small refused)"
check "the replica repeats refusals without error replies to its primary" \
    bash -c '! grep -q "sending an error to its master" "$1"' _ "$WORK/replica/redis.log"

# LOADCHUNK replicates as sent.
r_scan="$WORK/scan"
mkdir -p "$r_scan"
redis-cli -p "${SERVER_PORT[primary]}" --raw APBF.SCANDUMP apbf-inserted 0 >"$r_scan/reply"
iter=$(head -n 1 "$r_scan/reply")
tail -c +$((${#iter} + 2)) "$r_scan/reply" | head -c -1 >"$r_scan/chunk"
expect "LOADCHUNK on the primary" OK \
    "$(redis-cli -p "${SERVER_PORT[primary]}" -x APBF.LOADCHUNK apbf-loaded "$iter" <"$r_scan/chunk")"
check "LOADCHUNK reaches the replica" synced
identical "LOADCHUNK" apbf-loaded

# ------------------------------------------------------------------------
# What the replica receives for TLBF writes
# ------------------------------------------------------------------------

redis-cli -p "${SERVER_PORT[replica]}" MONITOR >"$WORK/monitor.log" 2>&1 &
monitor_pid=$!
sleep 0.5
p TLBF.ADD tlbf watched >/dev/null
p TLBF.MADD tlbf watched2 watched3 >/dev/null
p TLBF.ADD tlbf-new first >/dev/null
synced >/dev/null
sleep 0.5
kill "$monitor_pid" 2>/dev/null
wait "$monitor_pid" 2>/dev/null
latest=$(info_field primary TLBF.INFO tlbf latest_ms)
monitor=$(cat "$WORK/monitor.log")
expect_match "ADD arrives as ADDAT with the primary's time" \
    "\"TLBF.ADDAT\" \"tlbf\" \"[0-9]+\" \"watched\"" "$monitor"
expect_match "MADD arrives as ADDAT with the primary's time" \
    "\"TLBF.ADDAT\" \"tlbf\" \"$latest\" \"watched2\" \"watched3\"" "$monitor"
check "no clock-reading TLBF command reaches the replica" \
    bash -c '! grep -q "\"TLBF.M\?ADD\"" "$1"' _ "$WORK/monitor.log"
expect_match "a created key arrives as an explicit RESERVE" \
    '"TLBF.RESERVE" "tlbf-new" "60000" "ERROR" "0.01" "RATE" "1000" "MAXMEMORY" "67108864" "POLICY" "refuse" "MAXNPWS" "0"' \
    "$monitor"
identical "monitored writes" tlbf tlbf-new

# ------------------------------------------------------------------------
# Different clocks
# ------------------------------------------------------------------------

kill -STOP "$(server_pid replica)"
p TLBF.ADD tlbf while-stopped >/dev/null
p TLBF.MADD tlbf-new while-stopped-1 while-stopped-2 >/dev/null
p TLBF.ADD tlbf-late late >/dev/null
sleep 1.5
kill -CONT "$(server_pid replica)"
check "writes made while the replica slept reach it" synced
identical "applied 1.5 s later on the replica's clock" tlbf tlbf-new tlbf-late
expect "the replica's latest time is the primary's" \
    "$(info_field primary TLBF.INFO tlbf-late latest_ms)" \
    "$(info_field replica TLBF.INFO tlbf-late latest_ms)"
expect "replica answers" "$(lines() { printf '%s\n' "$@"; }; lines 1 1)" \
    "$(q TLBF.MEXISTS tlbf-new while-stopped-1 while-stopped-2)"

# ------------------------------------------------------------------------
# Full sync, read-only replica
# ------------------------------------------------------------------------

start_server late-replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
check "late replica linked" wait_until 20 link_up late-replica
for key in apbf blocked tlbf small tlbf-late; do
    dump_to primary "$key" "$WORK/primary.dump"
    dump_to late-replica "$key" "$WORK/late.dump"
    check "full sync: $key identical" cmp -s "$WORK/primary.dump" "$WORK/late.dump"
done
expect_match "a replica refuses writes" '^READONLY' "$(q APBF.ADD apbf x)"
expect_match "a replica refuses TLBF writes" '^READONLY' "$(q TLBF.ADDAT tlbf 1 x)"
expect "a replica answers queries" 1 "$(q APBF.EXISTS apbf one)"

finish
