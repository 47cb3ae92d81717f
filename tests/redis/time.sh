#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# time.sh: TLBF.ADDAT's time bounds (issue 19, Deliver 5) and the keyspace
# notifications of every write (Deliver 8).
#
#   - past: an add older than the span before the later of the filter's
#     latest time and the server clock is refused (an error, nothing added,
#     nothing replicated), never clamped into a fresh item; a time within the
#     span but behind the latest is clamped (and counted);
#   - future: a time more than ebb.tlbf-future-ms ahead of the server clock
#     is refused (an hour ahead, 2^63 ns), so items added a second earlier
#     stay present; the config's default, CONFIG SET and start argument;
#   - malformed times: negative, past 2^63 ns, not decimal;
#   - a replica (and an AOF replay) applies a replicated ADDAT as the primary
#     decided, even a time its own tolerance would refuse: DUMP identical;
#   - keyspace notifications: every write command publishes
#     "<family>.<command>" in the module class ("d"), queries and refused
#     commands publish nothing.
#
#   bash time.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

# The primary accepts times up to two hours ahead (the start argument under
# test); the replica keeps the default of 1000 ms.
start_server main --ebb.tlbf-future-ms 7200000 || exit 1
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[main]}" || exit 1
r() { rcli main "$@"; }
q() { rcli replica "$@"; }

lines() { printf '%s\n' "$@"; }

server_ms() {
    # %.0f: mawk's %d stops at 2^31.
    r TIME | awk 'NR == 1 { s = $1 } NR == 2 { printf "%.0f\n", s * 1000 + int($1 / 1000) }'
}

check "replica linked" wait_until 10 link_up replica
# TLBF.ADDAT commands the replica has applied.
replica_addats() {
    q INFO commandstats | awk -F'[:=,]' 'tolower($1) == "cmdstat_tlbf.addat" { n = $3 } END { print n + 0 }'
}

# ------------------------------------------------------------------------
# The config
# ------------------------------------------------------------------------

expect "start argument --ebb.tlbf-future-ms" "$(lines ebb.tlbf-future-ms 7200000)" \
    "$(r CONFIG GET ebb.tlbf-future-ms)"
expect "default ebb.tlbf-future-ms" "$(lines ebb.tlbf-future-ms 1000)" \
    "$(q CONFIG GET ebb.tlbf-future-ms)"
expect "CONFIG SET ebb.tlbf-future-ms" OK "$(r CONFIG SET ebb.tlbf-future-ms 1000)"
expect "CONFIG GET after SET" "$(lines ebb.tlbf-future-ms 1000)" \
    "$(r CONFIG GET ebb.tlbf-future-ms)"
expect_match "a negative tolerance is refused" '^ERR' \
    "$(r CONFIG SET ebb.tlbf-future-ms -1)"
expect_match "a tolerance past 2^63 ns is refused" '^ERR' \
    "$(r CONFIG SET ebb.tlbf-future-ms 9223372036855)"

# ------------------------------------------------------------------------
# The past
# ------------------------------------------------------------------------

# An item 100 s older than a 10 s span, on a filter that has seen "now".
r TLBF.RESERVE past 10000 >/dev/null
now=$(server_ms)
expect "a fresh add" "$(lines 1)" "$(r TLBF.ADDAT past "$now" fresh)"
dump_to main past "$WORK/past.before"
check "the replica is in sync" synced main
addats=$(replica_addats)
check "the replica counts the ADDAT it applied ($addats)" [ "$addats" -ge 1 ]
expect_match "100 s older than a 10 s span: refused" \
    '^ERR TLBF: time [0-9]+ ms is older than the span \(10000 ms\) before the (server clock|filter.s latest time) \([0-9]+ ms\)' \
    "$(r TLBF.ADDAT past $((now - 100000)) ancient)"
expect "the refused item is absent" 0 "$(r TLBF.EXISTS past ancient)"
expect "nothing added" 1 "$(info_field main TLBF.INFO past insertions)"
expect "nothing clamped" 0 "$(info_field main TLBF.INFO past clamped)"
dump_to main past "$WORK/past.after"
check "the refused add leaves the filter byte-identical" \
    cmp -s "$WORK/past.before" "$WORK/past.after"
# A write after the refused ADDAT: once the replica has it, it would have
# had the ADDAT too.
r SET marker 1 >/dev/null
check "the replica is in sync again" synced main
expect "nothing replicated" "$addats" "$(replica_addats)"

# The reference is the later of the filter's latest time and the clock:
# with the latest 900 ms ahead, 9.5 s ago is more than a span before it.
r TLBF.RESERVE ahead 10000 >/dev/null
now=$(server_ms)
r TLBF.ADDAT ahead $((now + 900)) lead >/dev/null
expect_match "older than the span before the filter's latest time" \
    "^ERR TLBF: time [0-9]+ ms is older than the span \(10000 ms\) before the filter's latest time \($((now + 900)) ms\)" \
    "$(r TLBF.ADDAT ahead $((now - 9500)) behind)"

# On an empty filter, and on a missing key (nothing is created).
r TLBF.RESERVE empty 10000 >/dev/null
expect_match "past on an empty filter: refused against the clock" \
    '^ERR TLBF: time [0-9]+ ms is older than the span \(10000 ms\) before the server clock' \
    "$(r TLBF.ADDAT empty $((now - 100000)) x)"
expect_match "time 0 on a missing key: refused with the default span" \
    '^ERR TLBF: time 0 ms is older than the span \(60000 ms\) before the server clock' \
    "$(r TLBF.ADDAT nokey 0 x)"
expect "the refused ADDAT created nothing" 0 "$(r EXISTS nokey)"

# Within the span but behind the latest time: clamped to the latest time
# (counted), present.
now=$(server_ms)
r TLBF.ADDAT past "$now" newer >/dev/null
expect "5 s behind the latest, within a 10 s span: added" "$(lines 1)" \
    "$(r TLBF.ADDAT past $((now - 5000)) late)"
expect "and clamped" 1 "$(info_field main TLBF.INFO past clamped)"
expect "and present" 1 "$(r TLBF.EXISTS past late)"

# ------------------------------------------------------------------------
# The future
# ------------------------------------------------------------------------

r TLBF.RESERVE future 60000 >/dev/null
now=$(server_ms)
r TLBF.ADDAT future $((now - 1000)) a-second-earlier >/dev/null
r TLBF.ADDAT future "$now" just-now >/dev/null
latest=$(info_field main TLBF.INFO future latest_ms)
dump_to main future "$WORK/future.before"
expect_match "an hour ahead: refused" \
    '^ERR TLBF: time [0-9]+ ms is 3[56][0-9]{5} ms ahead of the server clock \([0-9]+ ms\); ADDAT accepts at most 1000 ms ahead \(ebb.tlbf-future-ms\)' \
    "$(r TLBF.ADDAT future $((now + 3600000)) from-the-future)"
expect "items added a second earlier are still present" "$(lines 1 1)" \
    "$(r TLBF.MEXISTS future a-second-earlier just-now)"
expect "the latest time did not move" "$latest" \
    "$(info_field main TLBF.INFO future latest_ms)"
expect "no reset" 0 "$(info_field main TLBF.INFO future resets)"
dump_to main future "$WORK/future.after"
check "the refused future add leaves the filter byte-identical" \
    cmp -s "$WORK/future.before" "$WORK/future.after"
expect_match "near 2^63 ns (ms 9223372036854): refused as the future" \
    '^ERR TLBF: time 9223372036854 ms is [0-9]+ ms ahead of the server clock' \
    "$(r TLBF.ADDAT future 9223372036854 pinned)"
expect "and nothing is pinned" "$latest" "$(info_field main TLBF.INFO future latest_ms)"
expect "within the tolerance: added" "$(lines 1)" \
    "$(r TLBF.ADDAT future $(($(server_ms) + 500)) soon)"

# Malformed times.
for bad in -1 9223372036855 1e3 0x10 " 5" "5 " "" 1.5; do
    expect_match "time '$bad' refused" \
        '^ERR time \(ms\) must be an integer from 0 to 9223372036854' \
        "$(r TLBF.ADDAT future "$bad" x)"
done

# CONFIG SET takes effect at once.
r CONFIG SET ebb.tlbf-future-ms 7200000 >/dev/null
expect "an hour ahead with a tolerance of two hours: added" "$(lines 1)" \
    "$(r TLBF.ADDAT far $(($(server_ms) + 3600000)) from-the-future)"
r CONFIG SET ebb.tlbf-future-ms 0 >/dev/null
expect_match "a tolerance of 0 refuses 200 ms ahead" '^ERR TLBF: time .* at most 0 ms ahead' \
    "$(r TLBF.ADDAT future $(($(server_ms) + 200)) x)"
r CONFIG SET ebb.tlbf-future-ms 1000 >/dev/null

# ------------------------------------------------------------------------
# A replica applies what the primary decided
# ------------------------------------------------------------------------

# "far" holds an add an hour ahead, which the replica's own tolerance
# (1000 ms) would refuse: the replica applies it all the same.
check "writes reach the replica" synced main
expect "the replica's tolerance is the default" "$(lines ebb.tlbf-future-ms 1000)" \
    "$(q CONFIG GET ebb.tlbf-future-ms)"
for key in far past future ahead; do
    dump_to main "$key" "$WORK/primary.dump"
    dump_to replica "$key" "$WORK/replica.dump"
    check "$key identical on the replica (DUMP)" cmp -s "$WORK/primary.dump" "$WORK/replica.dump"
done
expect "the replica holds the future add" \
    "$(info_field main TLBF.INFO far latest_ms)" "$(info_field replica TLBF.INFO far latest_ms)"
check "the replica sent no error to its primary" \
    bash -c '! grep -q "sending an error to its master" "$1"' _ "$WORK/replica/redis.log"

# An AOF replay is a replay too: written with a tolerance of two hours,
# loaded with the default.
start_server aof --appendonly yes --ebb.tlbf-future-ms 7200000 || exit 1
rcli aof TLBF.ADDAT aof-far $(($(server_ms) + 3600000)) x >/dev/null
dump_to aof aof-far "$WORK/aof.before"
stop_server aof
start_server aof --appendonly yes || exit 1
expect "restarted with the default tolerance" "$(lines ebb.tlbf-future-ms 1000)" \
    "$(rcli aof CONFIG GET ebb.tlbf-future-ms)"
dump_to aof aof-far "$WORK/aof.after"
check "the AOF replay applied the future add (DUMP identical)" \
    cmp -s "$WORK/aof.before" "$WORK/aof.after"
check "the replayed key is not empty" [ -s "$WORK/aof.after" ]
stop_server aof

# ------------------------------------------------------------------------
# Keyspace notifications
# ------------------------------------------------------------------------

r CONFIG SET notify-keyspace-events KEd >/dev/null
q CONFIG SET notify-keyspace-events KEd >/dev/null
redis-cli -p "${SERVER_PORT[main]}" --csv PSUBSCRIBE '__keyevent@0__:*' \
    '__keyspace@0__:ev-*' >"$WORK/events.log" 2>&1 &
subscriber=$!
redis-cli -p "${SERVER_PORT[replica]}" --csv PSUBSCRIBE '__keyevent@0__:*' \
    >"$WORK/replica-events.log" 2>&1 &
replica_subscriber=$!
check "subscriber listening on the primary" wait_until 10 listening main 2
check "subscriber listening on the replica" wait_until 10 listening replica 1
r APBF.RESERVE ev-a 1000 >/dev/null
r APBF.ADD ev-a x >/dev/null
r APBF.MADD ev-a y z >/dev/null
r APBF.INSERT ev-a ITEMS w >/dev/null
r APBF.EXISTS ev-a x >/dev/null
r APBF.MEXISTS ev-a x y >/dev/null
r APBF.INFO ev-a >/dev/null
r TLBF.RESERVE ev-t 60000 >/dev/null
r TLBF.ADD ev-t x >/dev/null
r TLBF.MADD ev-t y z >/dev/null
r TLBF.INSERT ev-t ITEMS w >/dev/null
r TLBF.ADDAT ev-t "$(server_ms)" v >/dev/null
r TLBF.ADDAT ev-t 0 refused >/dev/null
r TLBF.EXISTS ev-t x >/dev/null
r APBF.RESERVE ev-a 1000 >/dev/null # refused: the key exists
for family in APBF TLBF; do
    lower=$(tr 'A-Z' 'a-z' <<<"$family")
    redis-cli -p "${SERVER_PORT[main]}" --raw "$family.SCANDUMP" "ev-${lower:0:1}" 0 >"$WORK/scan.reply"
    iter=$(head -n 1 "$WORK/scan.reply")
    tail -c +$((${#iter} + 2)) "$WORK/scan.reply" | head -c -1 >"$WORK/scan.chunk"
    redis-cli -p "${SERVER_PORT[main]}" -x "$family.LOADCHUNK" "ev-$lower-copy" "$iter" \
        <"$WORK/scan.chunk" >/dev/null
done
check "the writes reach the replica" synced main
sleep 0.5
kill "$subscriber" "$replica_subscriber" 2>/dev/null
wait "$subscriber" "$replica_subscriber" 2>/dev/null
# keyevents <log>: "<event> <key>" per keyevent message.
keyevents() {
    awk -F, '$1 == "\"pmessage\"" && $2 == "\"__keyevent@0__:*\"" {
        gsub(/"/, ""); sub(/^__keyevent@0__:/, "", $3); print $3 " " $4 }' "$1"
}
events=$(keyevents "$WORK/events.log")
expected=$(lines "apbf.reserve ev-a" "apbf.add ev-a" "apbf.madd ev-a" \
    "apbf.insert ev-a" "tlbf.reserve ev-t" "tlbf.add ev-t" "tlbf.madd ev-t" \
    "tlbf.insert ev-t" "tlbf.addat ev-t" "apbf.loadchunk ev-apbf-copy" \
    "tlbf.loadchunk ev-tlbf-copy")
expect "one event per write, named after the command; none for queries or refusals" \
    "$expected" "$events"
keyspace=$(awk -F, '$2 == "\"__keyspace@0__:ev-*\"" && $3 == "\"__keyspace@0__:ev-t\"" {
    gsub(/"/, ""); print $4 }' "$WORK/events.log" | paste -sd ' ')
expect "the key's channel carries the same events" \
    "tlbf.reserve tlbf.add tlbf.madd tlbf.insert tlbf.addat" "$keyspace"
# The replica publishes the events of what it receives: TLBF writes arrive
# as ADDAT.
expected=$(lines "apbf.reserve ev-a" "apbf.add ev-a" "apbf.madd ev-a" \
    "apbf.insert ev-a" "tlbf.reserve ev-t" "tlbf.addat ev-t" "tlbf.addat ev-t" \
    "tlbf.addat ev-t" "tlbf.addat ev-t" "apbf.loadchunk ev-apbf-copy" \
    "tlbf.loadchunk ev-tlbf-copy")
expect "the replica's events" "$expected" "$(keyevents "$WORK/replica-events.log")"

expect "server still up" PONG "$(r PING)"
finish
