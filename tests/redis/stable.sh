#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# stable.sh: the STABLE.* commands (redis/stable_type.c, docs/redis.md
# "STABLE: a stable (importance-aware) filter").
#
#   1. every command, reply and error; defaults equal to `ebb dedup
#      --stable`'s (the same chooser on the same goal); keyspace events;
#      COPY, MEMORY USAGE, SCANDUMP/LOADCHUNK, corrupt payloads refused;
#   2. replication: 100k writes of every kind (MADD, ADD and TESTADD with
#      importances, refusals, a key created by a write) leave the replica
#      byte-identical (DUMP); again with the replica stopped and restarted
#      while the primary writes (it resyncs); again after a failover;
#   3. persistence: RDB and AOF restarts (and an AOF rewrite) after 100k
#      writes give identical DUMPs, INFO and answers; DUMP/RESTORE.
#   (Redis Cluster: tests/redis/cluster.sh, with every type.)
#
#   bash stable.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

N=100000

start_server a || exit 1
a() { rcli a "$@"; }

# err_is <description> <expected error> <command...>
err_is() {
    local description=$1 expected=$2
    shift 2
    expect "$description" "$expected" "$(a "$@")"
}

# ------------------------------------------------------------------------
# 1. Commands and errors
# ------------------------------------------------------------------------

expect "RESERVE" OK "$(a STABLE.RESERVE s MEMORY 65536 ERROR 0.02)"
expect "INFO cells" 174762 "$(info_field a STABLE.INFO s cells)"
expect "INFO cell_bits (default 3)" 3 "$(info_field a STABLE.INFO s cell_bits)"
expect "INFO variant" plain "$(info_field a STABLE.INFO s variant)"
expect "INFO draw (default)" consecutive "$(info_field a STABLE.INFO s draw)"
check "INFO fps meets ERROR" in_range "$(info_field a STABLE.INFO s fps)" 0 0.02
expect "INFO has 21 pairs" 42 "$(a STABLE.INFO s | wc -l)"
expect "ADD new" 1 "$(a STABLE.ADD s x)"
expect "ADD again" 0 "$(a STABLE.ADD s x)"
expect "TESTADD new" 0 "$(a STABLE.TESTADD s y)"
expect "TESTADD seen" 1 "$(a STABLE.TESTADD s y)"
expect "EXISTS" 1 "$(a STABLE.EXISTS s x)"
expect "EXISTS absent" 0 "$(a STABLE.EXISTS s never)"
expect "MADD" "$(printf '0\n1\n0\n')" "$(a STABLE.MADD s x z z)"
expect "MEXISTS" "$(printf '1\n1\n0\n')" "$(a STABLE.MEXISTS s x z never)"
expect "insertions" 7 "$(info_field a STABLE.INFO s insertions)"
expect "EXISTS missing key" 0 "$(a STABLE.EXISTS nokey x)"
expect "MEXISTS missing key" "$(printf '0\n0\n')" "$(a STABLE.MEXISTS nokey x y)"
expect "EXISTS creates nothing" 0 "$(a EXISTS nokey)"

# Defaults: a write to a missing key creates what RESERVE without options
# creates, which is MEMORY 16 MiB ERROR 0.01 CELLBITS 3 (ebb dedup --stable).
expect "ADD creates" 1 "$(a STABLE.ADD created x IMPORTANCE 0.3)"
a STABLE.RESERVE defaults >/dev/null
a STABLE.RESERVE spelled MEMORY 16777216 ERROR 0.01 CELLBITS 3 VARIANT plain \
    DRAW consecutive >/dev/null
for field in cells cell_bits k p variant draw memory; do
    v=$(info_field a STABLE.INFO defaults "$field")
    expect "default $field (ADD)" "$v" "$(info_field a STABLE.INFO created "$field")"
    expect "default $field (spelled)" "$v" "$(info_field a STABLE.INFO spelled "$field")"
done
expect "default cells" 44739242 "$(info_field a STABLE.INFO defaults cells)"
# The CLI of the same build tree, when built: `ebb params --stable` must
# print the shape RESERVE built for the same MEMORY and ERROR.
EBB_CLI=${EBB_CLI:-$(dirname "$MODULE")/../cli/ebb}
if [ -x "$EBB_CLI" ]; then
    cli_shape() {
        "$EBB_CLI" params --stable --memory "$1" --fp "$2" 2>&1 |
            awk -F': *' '$1 == "cells" || $1 == "k" || $1 == "p" { print $2 }' |
            tr '\n' ' '
    }
    redis_shape() {
        for field in cells k p; do
            printf '%s ' "$(info_field a STABLE.INFO "$1" "$field")"
        done
    }
    expect "ebb params --stable agrees (defaults)" "$(cli_shape 16M 0.01)" \
        "$(redis_shape defaults)"
    expect "ebb params --stable agrees (64K, 0.02)" "$(cli_shape 64K 0.02)" \
        "$(redis_shape s)"
fi

# Importance-aware variants.
expect "RESERVE ibf-2c" OK "$(a STABLE.RESERVE two SHAPE 1000 4 3 10 \
    VARIANT IBF-2C RANGE 0 10 THRESHOLD 7 OUTOFRANGE refuse)"
expect "2c threshold" 7 "$(info_field a STABLE.INFO two threshold)"
expect "2c range high" 10 "$(info_field a STABLE.INFO two importance_high)"
expect "2c max level" 15 "$(info_field a STABLE.INFO two max_level)"
expect "ADD IMPORTANCE" 1 "$(a STABLE.ADD two x IMPORTANCE 8)"
err_is "IMPORTANCE refused" "ERR STABLE: IMPORTANCE 11 is outside the range 0 to 10 (OUTOFRANGE refuse): item not added" \
    STABLE.ADD two y IMPORTANCE 11
err_is "TESTADD IMPORTANCE refused" "ERR STABLE: IMPORTANCE -1 is outside the range 0 to 10 (OUTOFRANGE refuse): item not added" \
    STABLE.TESTADD two y IMPORTANCE -1
expect "refused counted" 2 "$(info_field a STABLE.INFO two refused)"
expect "refused not added" 0 "$(a STABLE.EXISTS two y)"
expect "RESERVE ibf-mc" OK "$(a STABLE.RESERVE mc MEMORY 4096 VARIANT ibf-mc RANGE -5 5)"
expect "mc threshold: middle of the range" 0 "$(info_field a STABLE.INFO mc threshold)"
expect "mc clamp (default)" clamp "$(info_field a STABLE.INFO mc out_of_range)"
a STABLE.ADD mc x IMPORTANCE 9 >/dev/null
expect "clamped counted" 1 "$(info_field a STABLE.INFO mc clamped)"
expect "RESERVE ibf-h" OK "$(a STABLE.RESERVE h SHAPE 5000 3 4 20 VARIANT ibf-h DRAW independent)"
expect "h draw" independent "$(info_field a STABLE.INFO h draw)"
expect "RESERVE P 0" OK "$(a STABLE.RESERVE never SHAPE 100 1 2 0)"
expect "P 0: no stable state" none "$(info_field a STABLE.INFO never fps)"

# Errors.
a SET str v >/dev/null
wrongtype="WRONGTYPE Operation against a key holding the wrong kind of value"
for cmd in "STABLE.ADD str x" "STABLE.TESTADD str x" "STABLE.MADD str x" \
    "STABLE.EXISTS str x" "STABLE.MEXISTS str x" "STABLE.INFO str" \
    "STABLE.RESERVE str" "STABLE.SCANDUMP str 0"; do
    err_is "$cmd" "$wrongtype" $cmd
done
for cmd in "STABLE.RESERVE" "STABLE.ADD s" "STABLE.ADD s x IMPORTANCE" \
    "STABLE.ADD s x IMPORTANCE 1 NOCREATE y" "STABLE.TESTADD s" "STABLE.MADD s" \
    "STABLE.EXISTS s" "STABLE.EXISTS s x y" "STABLE.MEXISTS s" \
    "STABLE.INFO" "STABLE.INFO s x" "STABLE.SCANDUMP s" \
    "STABLE.LOADCHUNK s 1" "STABLE.RESERVE e MEMORY" \
    "STABLE.RESERVE e SHAPE 1 2 3" "STABLE.RESERVE e RANGE 1"; do
    name=${cmd%% *}
    err_is "arity: $cmd" \
        "ERR wrong number of arguments for '${name}' command" $cmd
done
err_is "key exists" "ERR key already exists" STABLE.RESERVE s
err_is "INFO missing" "ERR no such key" STABLE.INFO nokey
err_is "unknown option" "ERR unknown option 'FOO' for STABLE.RESERVE" \
    STABLE.RESERVE e FOO 1
err_is "ADD unknown option" "ERR unknown option 'PRIORITY' for STABLE.ADD" \
    STABLE.ADD s x PRIORITY 1
err_is "TESTADD unknown option" "ERR unknown option 'PRIORITY' for STABLE.TESTADD" \
    STABLE.TESTADD s x PRIORITY 1
err_is "ADD trailing word" "ERR unknown option '2' for STABLE.ADD" \
    STABLE.ADD s x IMPORTANCE 1 2
err_is "NOCREATE twice" "ERR unknown option 'NOCREATE' for STABLE.TESTADD" \
    STABLE.TESTADD s x NOCREATE NOCREATE
err_is "IMPORTANCE twice" "ERR unknown option 'IMPORTANCE' for STABLE.ADD" \
    STABLE.ADD s x IMPORTANCE 1 IMPORTANCE
err_is "ADD NOCREATE missing" "ERR no such key" STABLE.ADD nokey x NOCREATE
err_is "TESTADD NOCREATE missing" "ERR no such key" \
    STABLE.TESTADD nokey x IMPORTANCE 1 NOCREATE
expect "NOCREATE creates nothing" 0 "$(a EXISTS nokey)"
expect "NOCREATE on a key" 1 "$(a STABLE.ADD s nc NOCREATE)"
expect "NOCREATE before IMPORTANCE" 1 "$(a STABLE.TESTADD s nc NOCREATE IMPORTANCE 0.5)"
err_is "IMPORTANCE number" "ERR IMPORTANCE must be a finite number" \
    STABLE.ADD s x IMPORTANCE high
err_is "IMPORTANCE hex" "ERR IMPORTANCE must be a finite number" \
    STABLE.TESTADD s x IMPORTANCE 0x1
err_is "IMPORTANCE inf" "ERR IMPORTANCE must be a finite number" \
    STABLE.ADD s x IMPORTANCE inf
err_is "MEMORY" "ERR MEMORY must be an integer from 8 to 1099511627776" \
    STABLE.RESERVE e MEMORY 7
err_is "MEMORY text" "ERR MEMORY must be an integer from 8 to 1099511627776" \
    STABLE.RESERVE e MEMORY 16M
err_is "ERROR" "ERR error rate must be a number between 0 and 1 (both excluded)" \
    STABLE.RESERVE e ERROR 1
err_is "CELLBITS" "ERR CELLBITS must be an integer from 1 to 16" \
    STABLE.RESERVE e CELLBITS 17
err_is "cells" "ERR cells must be an integer from 1 to 1099511627776" \
    STABLE.RESERVE e SHAPE 0 3 3 3
err_is "cell bits" "ERR cell bits must be an integer from 1 to 16" \
    STABLE.RESERVE e SHAPE 10 0 3 3
err_is "k" "ERR k must be an integer from 1 to 32" \
    STABLE.RESERVE e SHAPE 10 3 33 3
err_is "p" "ERR p must be an integer from 0 to 4294967295" \
    STABLE.RESERVE e SHAPE 10 3 3 -1
err_is "p > cells" "ERR STABLE: SHAPE 10 3 3 11 is not a filter: p must be at most the cells" \
    STABLE.RESERVE e SHAPE 10 3 3 11
err_is "SHAPE with MEMORY" "ERR SHAPE cannot be combined with MEMORY, ERROR or CELLBITS" \
    STABLE.RESERVE e SHAPE 10 3 3 3 ERROR 0.1
err_is "VARIANT" "ERR VARIANT must be PLAIN, IBF-2C, IBF-MC or IBF-H" \
    STABLE.RESERVE e VARIANT sbf
err_is "DRAW" "ERR DRAW must be CONSECUTIVE or INDEPENDENT" \
    STABLE.RESERVE e DRAW random
err_is "OUTOFRANGE" "ERR OUTOFRANGE must be CLAMP or REFUSE" \
    STABLE.RESERVE e VARIANT ibf-mc OUTOFRANGE drop
err_is "RANGE low" "ERR RANGE low must be a finite number" \
    STABLE.RESERVE e VARIANT ibf-mc RANGE nan 1
err_is "RANGE order" "ERR RANGE low must be below RANGE high" \
    STABLE.RESERVE e VARIANT ibf-mc RANGE 1 1
err_is "THRESHOLD" "ERR THRESHOLD must be a finite number" \
    STABLE.RESERVE e VARIANT ibf-2c THRESHOLD x
err_is "RANGE on plain" "ERR RANGE, THRESHOLD and OUTOFRANGE require an importance-aware VARIANT (IBF-2C, IBF-MC or IBF-H)" \
    STABLE.RESERVE e RANGE 0 5
err_is "THRESHOLD on mc" "ERR THRESHOLD requires VARIANT IBF-2C" \
    STABLE.RESERVE e VARIANT ibf-mc THRESHOLD 2
err_is "no shape" "ERR STABLE: no filter of MEMORY 8 bytes and CELLBITS 3 reaches ERROR 1e-09 (give more MEMORY or a higher ERROR)" \
    STABLE.RESERVE e MEMORY 8 ERROR 1e-9
expect "nothing created by errors" 0 "$(a EXISTS e)"

# Keyspace events: every write.
a CONFIG SET notify-keyspace-events KEA >/dev/null
redis-cli -p "${SERVER_PORT[a]}" --csv PSUBSCRIBE '__keyevent@0__:stable.*' \
    >"$WORK/events" 2>&1 &
sub=$!
check "subscriber listening" wait_until 10 listening a 1
a STABLE.RESERVE ev SHAPE 100 3 3 3 >/dev/null
a STABLE.ADD ev x >/dev/null
a STABLE.MADD ev x y >/dev/null
a STABLE.TESTADD ev x >/dev/null
a STABLE.EXISTS ev x >/dev/null
# A marker published last on a channel of the pattern: once it has
# arrived, so has any event the reads above wrongly sent.
a PUBLISH '__keyevent@0__:stable.marker' end >/dev/null
check "events delivered" wait_until 10 has_lines "$WORK/events" 'stable\.marker' 1
kill "$sub" 2>/dev/null
wait "$sub" 2>/dev/null
expect "events" "stable.reserve stable.add stable.madd stable.testadd" \
    "$(grep -o 'stable\.[a-z]*","ev' "$WORK/events" | cut -d'"' -f1 | tr '\n' ' ' | sed 's/ $//')"

# COPY, MEMORY USAGE, SCANDUMP/LOADCHUNK, DUMP/RESTORE, corrupt payloads.
items_command STABLE.MADD s item: 0 20000 1000 | pipe_to a
expect "COPY" 1 "$(a COPY s s-copy)"
dump_to a s "$WORK/s.dump"
dump_to a s-copy "$WORK/s-copy.dump"
check "COPY is identical" cmp -s "$WORK/s.dump" "$WORK/s-copy.dump"
check "MEMORY USAGE counts the cells" \
    in_range "$(a MEMORY USAGE s)" 65000 80000
chunks=$(scandump a STABLE.SCANDUMP s "$WORK/scan")
check "SCANDUMP chunks" [ "$chunks" -ge 1 ]
expect "LOADCHUNK" OK "$(loadchunks a STABLE.LOADCHUNK s-loaded "$WORK/scan" 1 "$chunks" | sort -u)"
dump_to a s-loaded "$WORK/s-loaded.dump"
check "LOADCHUNK restores the same bytes" cmp -s "$WORK/s.dump" "$WORK/s-loaded.dump"
expect "SCANDUMP missing" "ERR no such key" "$(a STABLE.SCANDUMP nokey 0)"
redis-cli -p "${SERVER_PORT[a]}" -x RESTORE s-restored 0 <"$WORK/s.dump" >/dev/null
dump_to a s-restored "$WORK/s-restored.dump"
check "DUMP/RESTORE" cmp -s "$WORK/s.dump" "$WORK/s-restored.dump"
expect "RESTORE answers" "$(answers a STABLE.MEXISTS s item: 0 30000 | md5sum)" \
    "$(answers a STABLE.MEXISTS s-restored item: 0 30000 | md5sum)"
# A byte changed in the middle of the snapshot: the checksum refuses it.
size=$(stat -c %s "$WORK/s.dump")
{ head -c $((size / 2)) "$WORK/s.dump"; printf 'Z'
  tail -c +$((size / 2 + 2)) "$WORK/s.dump"; } >"$WORK/bad.dump"
expect_match "corrupt RESTORE refused" "^ERR" \
    "$(redis-cli -p "${SERVER_PORT[a]}" -x RESTORE bad 0 <"$WORK/bad.dump" 2>&1)"
head -c $((size / 3)) "$WORK/s.dump" >"$WORK/short.dump"
expect_match "truncated RESTORE refused" "^ERR" \
    "$(redis-cli -p "${SERVER_PORT[a]}" -x RESTORE bad 0 <"$WORK/short.dump" 2>&1)"
expect_match "corrupt LOADCHUNK refused" "^ERR" \
    "$(printf 'garbage' | redis-cli -p "${SERVER_PORT[a]}" -x STABLE.LOADCHUNK bad 1 2>&1)"
expect "server alive" PONG "$(a PING)"
expect "nothing made of corrupt payloads" 0 "$(a EXISTS bad)"

# ------------------------------------------------------------------------
# 2. Replication
# ------------------------------------------------------------------------

# workload <from> <to>: protocol for items [from, to) into every key:
# MADD on plain, ADD with importances on ibf-mc (clamped ones included),
# TESTADD with importances on ibf-2c (refused ones included) and ibf-h
# (independent draw), single TESTADDs on plain2.
workload() {
    items_command STABLE.MADD plain item: "$1" "$2" 1000
    awk -v from="$1" -v to="$2" '
        function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
        function cmd(c, key, item, imp) {
            printf "*5\r\n"; bulk(c); bulk(key); bulk(item)
            bulk("IMPORTANCE"); bulk(imp)
        }
        BEGIN {
            for (i = from; i < to; i++) {
                imp = sprintf("%.2f", ((i * 37) % 13) / 10 - 0.1)
                cmd("STABLE.ADD", "mc", "item:" (i % 5000), imp)
                cmd("STABLE.TESTADD", "two", "item:" (i % 3000), imp)
                cmd("STABLE.TESTADD", "h", "item:" (i % 7000), imp)
                printf "*3\r\n"; bulk("STABLE.TESTADD"); bulk("plain2")
                bulk("item:" (i % 20000))
            }
        }'
}

reserve_all() {
    rcli "$1" STABLE.RESERVE plain MEMORY 65536 >/dev/null
    rcli "$1" STABLE.RESERVE mc MEMORY 16384 VARIANT ibf-mc RANGE 0 1 >/dev/null
    rcli "$1" STABLE.RESERVE two SHAPE 8000 4 3 12 VARIANT ibf-2c RANGE 0 1 \
        THRESHOLD 0.6 OUTOFRANGE refuse >/dev/null
    rcli "$1" STABLE.RESERVE h SHAPE 20000 3 4 25 VARIANT ibf-h \
        DRAW independent RANGE 0 1 >/dev/null
}
KEYS=(plain mc two h plain2)

# pipe_quiet <server>: like pipe_to, but refused importances are expected.
pipe_quiet() {
    redis-cli -p "${SERVER_PORT[$1]}" --pipe >/dev/null 2>&1
}

# identical <description> <primary> <replica>: every key's DUMP equal.
identical() {
    local key
    for key in "${KEYS[@]}"; do
        dump_to "$2" "$key" "$WORK/p.dump"
        dump_to "$3" "$key" "$WORK/r.dump"
        check "$1: $key is not empty" [ -s "$WORK/p.dump" ]
        check "$1: $key byte-identical" cmp -s "$WORK/p.dump" "$WORK/r.dump"
    done
}

start_server primary --repl-diskless-sync-delay 0 || exit 1
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
check "replica linked" wait_until 10 link_up replica
reserve_all primary
# A key created by a write: the replica gets the resolved RESERVE first.
expect "ADD creates on the primary" 1 "$(rcli primary STABLE.ADD created x)"
workload 0 $N | pipe_quiet primary
check "refusals happened" [ "$(info_field primary STABLE.INFO two refused)" -gt 0 ]
check "decrements happened" [ "$(info_field primary STABLE.INFO plain decrements)" -gt 0 ]
expect "insertions" $N "$(info_field primary STABLE.INFO plain insertions)"
check "writes reach the replica" synced
identical "100k writes" primary replica
dump_to primary created "$WORK/p.dump"
dump_to replica created "$WORK/r.dump"
check "key created by a write identical" cmp -s "$WORK/p.dump" "$WORK/r.dump"
expect "replica refused counter" "$(info_field primary STABLE.INFO two refused)" \
    "$(info_field replica STABLE.INFO two refused)"
expect "replica answers" "$(answers primary STABLE.MEXISTS plain item: 0 $N | md5sum)" \
    "$(answers replica STABLE.MEXISTS plain item: 0 $N | md5sum)"
# LOADCHUNK on the primary: the restored key reaches the replica.
chunks=$(scandump primary STABLE.SCANDUMP h "$WORK/scan-h")
expect "LOADCHUNK on the primary" OK \
    "$(loadchunks primary STABLE.LOADCHUNK h-loaded "$WORK/scan-h" 1 "$chunks" | sort -u)"
check "LOADCHUNK reaches the replica" synced
dump_to primary h "$WORK/p.dump"
dump_to replica h-loaded "$WORK/r.dump"
check "LOADCHUNK: replica holds the primary's bytes" cmp -s "$WORK/p.dump" "$WORK/r.dump"
expect "replica is read-only" \
    "READONLY You can't write against a read only replica." \
    "$(rcli replica STABLE.ADD plain x)"

# The replica stopped and restarted while the primary writes: it resyncs.
(
    for b in $(seq 0 9); do
        workload $((N + b * 5000)) $((N + (b + 1) * 5000)) | pipe_quiet primary
        sleep 0.1
    done
) &
writer=$!
sleep 0.2
stop_server replica
at_stop=$(info_field primary STABLE.INFO plain insertions)
sleep 0.3
at_start=$(info_field primary STABLE.INFO plain insertions)
check "the primary wrote while the replica was down" [ "$at_start" -gt "$at_stop" ]
check "the replica was stopped mid-stream" [ "$at_stop" -lt $((N + 50000)) ]
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
wait "$writer"
check "restarted replica linked" wait_until 10 link_up replica
check "restarted replica synced" synced
expect "writes continued" $((N + 50000)) \
    "$(info_field primary STABLE.INFO plain insertions)"
identical "replica restarted mid-stream" primary replica

# Failover: the replica becomes the primary, the old primary its replica.
expect "REPLICAOF NO ONE" OK "$(rcli replica REPLICAOF NO ONE)"
expect "old primary follows" OK \
    "$(rcli primary REPLICAOF 127.0.0.1 "${SERVER_PORT[replica]}")"
check "old primary linked" wait_until 10 link_up primary
workload $((N + 50000)) $((N + 70000)) | pipe_quiet replica
rcli replica STABLE.TESTADD after-failover x >/dev/null
check "old primary synced" synced replica primary
identical "after failover" replica primary
dump_to replica after-failover "$WORK/p.dump"
dump_to primary after-failover "$WORK/r.dump"
check "key created after failover identical" cmp -s "$WORK/p.dump" "$WORK/r.dump"

# ------------------------------------------------------------------------
# 3. Persistence
# ------------------------------------------------------------------------

# snapshot <server> <tag>: DUMPs, INFOs and answers of every key.
snapshot() {
    local key
    for key in "${KEYS[@]}"; do
        dump_to "$1" "$key" "$WORK/$2.$key.dump"
        rcli "$1" STABLE.INFO "$key" >"$WORK/$2.$key.info"
    done
    answers "$1" STABLE.MEXISTS plain item: 0 $N >"$WORK/$2.answers"
    answers "$1" STABLE.MEXISTS two item: 0 5000 >>"$WORK/$2.answers"
}

# same <description> <tag> <tag>
same() {
    local key
    for key in "${KEYS[@]}"; do
        check "$1: $key DUMP" cmp -s "$WORK/$2.$key.dump" "$WORK/$3.$key.dump"
        check "$1: $key INFO" cmp -s "$WORK/$2.$key.info" "$WORK/$3.$key.info"
    done
    check "$1: answers" cmp -s "$WORK/$2.answers" "$WORK/$3.answers"
}

start_server rdb || exit 1
reserve_all rdb
workload 0 $N | pipe_quiet rdb
snapshot rdb rdb-before
expect "SAVE" OK "$(rcli rdb SAVE)"
stop_server rdb
start_server rdb --dbfilename dump.rdb || exit 1
snapshot rdb rdb-after
same "RDB restart" rdb-before rdb-after
AOF_OPTIONS=(--appendonly yes --aof-use-rdb-preamble no --appendfsync always)
start_server aof "${AOF_OPTIONS[@]}" || exit 1
reserve_all aof
workload 0 $N | pipe_quiet aof
snapshot aof aof-before
rcli aof STABLE.ADD aof-created x >/dev/null
check "the AOF holds the resolved RESERVE" \
    grep -q "SHAPE" "$WORK"/aof/appendonlydir/*.incr.aof
dump_to aof aof-created "$WORK/created-before.dump"
stop_server aof
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-replayed
dump_to aof aof-created "$WORK/created-after.dump"
check "AOF replay: key created by a write" \
    cmp -s "$WORK/created-before.dump" "$WORK/created-after.dump"
same "AOF replay" aof-before aof-replayed
same "AOF replay equals RDB" rdb-before aof-replayed
expect "BGREWRITEAOF" "Background append only file rewriting started" \
    "$(rcli aof BGREWRITEAOF)"
rewritten() {
    rcli aof INFO persistence | grep -q '^aof_rewrite_in_progress:0' &&
        rcli aof INFO persistence | grep -q '^aof_rewrite_scheduled:0' &&
        rcli aof INFO persistence | grep -q '^aof_last_bgrewrite_status:ok'
}
check "rewrite done" wait_until 20 rewritten
check "rewrite uses LOADCHUNK" grep -q STABLE.LOADCHUNK "$WORK"/aof/appendonlydir/*.base.aof
stop_server aof
start_server aof "${AOF_OPTIONS[@]}" || exit 1
snapshot aof aof-rewritten
same "AOF rewrite" aof-before aof-rewritten
# The generator restored from the RDB and from the AOF goes on as one: the
# same writes after the restarts leave the same bytes.
workload $N $((N + 2000)) | pipe_quiet rdb
workload $N $((N + 2000)) | pipe_quiet aof
snapshot rdb rdb-more
snapshot aof aof-more
same "writes after the restarts" rdb-more aof-more

finish
