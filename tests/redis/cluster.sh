#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# cluster.sh: a 3-node Redis Cluster on loopback (redis-cli --cluster
# create, no replicas) with filters on every node.
#
#   - the module's commands declare their key (position 1), so a node that
#     does not own the key's slot answers MOVED, and redis-cli -c follows
#     it: every command works from any node;
#   - filters of every type (APBF, TLBF, STABLE, TIMING, SPECTRAL) land on
#     all three nodes;
#   - one logical time window spread over shards with hash tags (the
#     recipe of docs/redis.md): each item routed to one shard by a hash of
#     the item, every item found again in its shard.
#
#   bash cluster.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

CLUSTER_OPTIONS=(--cluster-enabled yes --cluster-config-file nodes.conf
    --cluster-node-timeout 5000)
for node in n1 n2 n3; do
    start_server "$node" "${CLUSTER_OPTIONS[@]}" || exit 1
done
out=$(redis-cli --cluster create "127.0.0.1:${SERVER_PORT[n1]}" \
    "127.0.0.1:${SERVER_PORT[n2]}" "127.0.0.1:${SERVER_PORT[n3]}" \
    --cluster-replicas 0 --cluster-yes 2>&1)
check "cluster created" grep -q 'All 16384 slots covered' <<<"$out" || echo "$out" >&2

cluster_ok() {
    local node
    for node in n1 n2 n3; do
        rcli "$node" CLUSTER INFO | grep -q '^cluster_state:ok' || return 1
    done
}
check "cluster state ok" wait_until 30 cluster_ok

# c <node> <args...>: a command through redis-cli -c, entering at <node>.
c() {
    local node=$1
    shift
    redis-cli -c -p "${SERVER_PORT[$node]}" "$@" 2>&1
}

# node_of <key>: the node whose slots hold key (from CLUSTER NODES: each
# master's line ends with its slot ranges, "0-5460" or a single "7").
node_of() {
    local slot node
    slot=$(rcli n1 CLUSTER KEYSLOT "$1")
    for node in n1 n2 n3; do
        if rcli n1 CLUSTER NODES | awk -v s="$slot" -v p=":${SERVER_PORT[$node]}@" '
            index($2, p) {
                for (i = 9; i <= NF; i++) {
                    n = split($i, r, "-")
                    if (n == 1) r[2] = r[1]
                    if (r[1] + 0 <= s && s <= r[2] + 0) found = 1
                }
            }
            END { exit !found }'; then
            echo "$node"
            return 0
        fi
    done
    return 1
}

# ------------------------------------------------------------------------
# Every command, through any node
# ------------------------------------------------------------------------

entry=(n1 n2 n3)
for i in $(seq 0 29); do
    from=${entry[$((i % 3))]}
    other=${entry[$(((i + 1) % 3))]}
    expect "APBF.ADD k$i via $from" 1 "$(c "$from" APBF.ADD "apbf:k$i" "item$i")"
    expect "APBF.EXISTS k$i via $other" 1 "$(c "$other" APBF.EXISTS "apbf:k$i" "item$i")"
    expect "TLBF.ADD k$i via $from" 1 "$(c "$from" TLBF.ADD "tlbf:k$i" "item$i")"
    expect "TLBF.EXISTS k$i via $other" 1 "$(c "$other" TLBF.EXISTS "tlbf:k$i" "item$i")"
done
lines() { printf '%s\n' "$@"; }

# The stable, timing and spectral types, small filters, 12 keys each.
for i in $(seq 0 11); do
    from=${entry[$((i % 3))]}
    other=${entry[$(((i + 1) % 3))]}
    expect "STABLE.RESERVE k$i via $from" OK \
        "$(c "$from" STABLE.RESERVE "stable:k$i" MEMORY 65536)"
    expect "STABLE.ADD k$i via $other" 1 "$(c "$other" STABLE.ADD "stable:k$i" "item$i")"
    expect "STABLE.EXISTS k$i via $from" 1 "$(c "$from" STABLE.EXISTS "stable:k$i" "item$i")"
    expect "STABLE.TESTADD k$i via $other" 1 \
        "$(c "$other" STABLE.TESTADD "stable:k$i" "item$i" IMPORTANCE 1)"
    expect "STABLE.MEXISTS k$i via $from" "$(lines 1 0)" \
        "$(c "$from" STABLE.MEXISTS "stable:k$i" "item$i" never)"
    expect "TIMING.RESERVE k$i via $from" OK \
        "$(c "$from" TIMING.RESERVE "timing:k$i" 1000)"
    expect "TIMING.ADD k$i via $other" 1 "$(c "$other" TIMING.ADD "timing:k$i" "item$i")"
    expect "TIMING.EXISTS k$i via $from" 1 "$(c "$from" TIMING.EXISTS "timing:k$i" "item$i")"
    expect "SPECTRAL.RESERVE k$i via $from" OK \
        "$(c "$from" SPECTRAL.RESERVE "spectral:k$i" COUNTERS 1000)"
    expect "SPECTRAL.INCRBY k$i via $other" 2 \
        "$(c "$other" SPECTRAL.INCRBY "spectral:k$i" "item$i" 2)"
    expect "SPECTRAL.QUERY k$i via $from" 2 \
        "$(c "$from" SPECTRAL.QUERY "spectral:k$i" "item$i")"
done
for node in n1 n2 n3; do
    keys=$(rcli "$node" DBSIZE)
    check "filters on $node ($keys keys)" [ "$keys" -gt 0 ]
    for type in ebb-stabl ebb-timng ebb-spect; do
        n=$(rcli "$node" SCAN 0 COUNT 1000 TYPE "$type" | tail -n +2 | grep -c .)
        check "$type filters on $node ($n)" [ "$n" -gt 0 ]
    done
done
expect "all keys placed" 96 \
    $(($(rcli n1 DBSIZE) + $(rcli n2 DBSIZE) + $(rcli n3 DBSIZE)))

# A node that does not own the key refuses it with MOVED: the key position
# is declared, so the cluster checks it.
key=apbf:k0
owner=$(node_of "$key")
expect_match "the owner of $key answers it" '^[01]$' "$(rcli "$owner" APBF.EXISTS "$key" x)"
for node in n1 n2 n3; do
    [ "$node" = "$owner" ] && continue
    for command in "APBF.ADD $key x" "APBF.EXISTS $key x" "APBF.INFO $key" \
        "TLBF.ADDAT $key 1 x" "TLBF.MEXISTS $key x" "APBF.SCANDUMP $key 0"; do
        # shellcheck disable=SC2086
        expect_match "$command on $node (not the owner) is MOVED" '^MOVED [0-9]+ 127.0.0.1:' \
            "$(rcli "$node" $command)"
    done
done

expect "RESERVE" OK "$(c n1 APBF.RESERVE r:a 10000 ERROR 0.001)"
expect "MADD" "$(lines 1 1 0)" "$(c n2 APBF.MADD r:a x y x)"
expect "MEXISTS" "$(lines 1 1 0)" "$(c n3 APBF.MEXISTS r:a x y z)"
expect "INSERT" "$(lines 1)" "$(c n3 APBF.INSERT r:b WINDOW 100 ITEMS x)"
# The window is the requested one rounded up to whole generations.
window=$(c n2 APBF.INFO r:b | sed -n 2p)
check "INFO: window $window covers the 100 asked for" \
    [ "$window" -ge 100 -a "$window" -lt 200 ]
expect "TLBF RESERVE" OK "$(c n1 TLBF.RESERVE t:a 60000 RATE 10)"
expect "TLBF MADD" "$(lines 1 1)" "$(c n2 TLBF.MADD t:a x y)"
expect "TLBF ADDAT" "$(lines 0)" "$(c n3 TLBF.ADDAT t:a "$(($(date +%s) * 1000))" x)"
expect "TLBF INSERT" "$(lines 1)" "$(c n1 TLBF.INSERT t:b SPAN 1000 ITEMS x)"
expect "TLBF MEXISTS" "$(lines 1 1 0)" "$(c n3 TLBF.MEXISTS t:a x y z)"
expect "TLBF INFO" span_ms "$(c n2 TLBF.INFO t:a | head -n 1)"

# SCANDUMP on the key's node, LOADCHUNK into a key on another node.
src=r:a
dst=""
for i in $(seq 0 50); do
    if [ "$(node_of "copy:$i")" != "$(node_of "$src")" ]; then
        dst="copy:$i"
        break
    fi
done
check "a destination key on another node" [ -n "$dst" ]
redis-cli -c -p "${SERVER_PORT[n1]}" --raw APBF.SCANDUMP "$src" 0 >"$WORK/reply"
iter=$(head -n 1 "$WORK/reply")
tail -c +$((${#iter} + 2)) "$WORK/reply" | head -c -1 >"$WORK/chunk"
expect "SCANDUMP ends after one chunk" "0" \
    "$(redis-cli -c -p "${SERVER_PORT[n1]}" --raw APBF.SCANDUMP "$src" "$iter" | head -n 1)"
expect "LOADCHUNK across nodes" OK \
    "$(redis-cli -c -p "${SERVER_PORT[n1]}" -x APBF.LOADCHUNK "$dst" "$iter" <"$WORK/chunk")"
expect "the copy answers" "$(lines 1 1 0)" "$(c n2 APBF.MEXISTS "$dst" x y z)"

# ------------------------------------------------------------------------
# One logical window over shards (docs/redis.md)
# ------------------------------------------------------------------------

# 12 TLBF shards "dedup:{s<i>}", each item routed to shard cksum(item) % 12.
SHARDS=12
for s in $(seq 0 $((SHARDS - 1))); do
    c n1 TLBF.RESERVE "dedup:{s$s}" 600000 ERROR 0.01 RATE 1000 >/dev/null
done
shard_nodes=$(for s in $(seq 0 $((SHARDS - 1))); do node_of "dedup:{s$s}"; done | sort -u | wc -l)
expect "shards spread over the three nodes" 3 "$shard_nodes"
# route <items file>: "shard item" per line.
route() {
    while read -r item; do
        sum=$(printf '%s' "$item" | cksum | cut -d ' ' -f 1)
        echo "$((sum % SHARDS)) $item"
    done <"$1"
}
seq -f 'event%g' 1 600 >"$WORK/events"
route "$WORK/events" >"$WORK/routed"
awk '{ print "TLBF.ADD dedup:{s" $1 "} " $2 }' "$WORK/routed" |
    redis-cli -c -p "${SERVER_PORT[n2]}" >"$WORK/added" 2>&1
expect "every event added once" 600 "$(count_ones <"$WORK/added")"
awk '{ print "TLBF.EXISTS dedup:{s" $1 "} " $2 }' "$WORK/routed" |
    redis-cli -c -p "${SERVER_PORT[n3]}" >"$WORK/found" 2>&1
expect "every event found in its shard" 600 "$(count_ones <"$WORK/found")"
awk '{ print "TLBF.ADD dedup:{s" $1 "} " $2 }' "$WORK/routed" |
    redis-cli -c -p "${SERVER_PORT[n1]}" >"$WORK/again" 2>&1
expect "a repeated event is seen by its shard" 0 "$(count_ones <"$WORK/again")"

finish
