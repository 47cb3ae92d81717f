#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# limits.sh: the module under memory limits (docs/redis.md, "Memory limits"
# and "Replication"):
#   - maxmemory: a RESERVE (or a creating INSERT) that does not fit is
#     refused before allocating, with the documented message; the server
#     lives on;
#   - a memory cgroup (v1 or v2, when one can be made here), otherwise an
#     address-space limit (prlimit --as): RESERVE of a window of 1e9 is
#     refused naming it, the server lives on;
#   - RESERVE of a window of 1e9 keeps PING latency under 100 ms;
#   - a replica with less memory than its primary (a lower maxmemory)
#     ends byte-identical (DUMP) after a RESERVE without options, writes,
#     and a restart of the replica; RESERVE propagates resolved (the AOF),
#     and its SHAPE form recreates the chosen shape, checked strictly;
#   - a replicated write or an AOF write to a missing key creates nothing
#     (logged at warning);
#   - MEMORY USAGE within 2% of used_memory's growth, windows 1e6..1e8;
#   - the ebb.huge-pages config (default, start argument, CONFIG SET, a
#     bad value refused); a 40 MB key's DUMP the same with and without;
#     where the kernel's THP mode is madvise, the key on huge pages with
#     it and none without.
#
#   bash limits.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

MB=1048576

# used_memory <name>
used_memory() {
    rcli "$1" INFO memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'
}

# ------------------------------------------------------------------------
# maxmemory
# ------------------------------------------------------------------------

start_server small --maxmemory 100mb --maxmemory-policy noeviction || exit 1
reply=$(rcli small APBF.RESERVE big 100000000)
expect_match "maxmemory refuses a RESERVE that does not fit" \
    '^ERR APBF: the filter needs [0-9]+\.[0-9] MB but maxmemory leaves [0-9]+\.[0-9] MB \(maxmemory 100\.0 MB, used [0-9]+\.[0-9] [KM]B\)$' \
    "$reply"
expect "the server lives on" PONG "$(rcli small PING)"
expect "the refused RESERVE created nothing" 0 "$(rcli small EXISTS big)"
expect_match "a creating INSERT is refused too" \
    '^ERR APBF: the filter needs .* but maxmemory leaves ' \
    "$(rcli small APBF.INSERT big2 WINDOW 100000000 ITEMS x)"
expect "the refused INSERT created nothing" 0 "$(rcli small EXISTS big2)"
expect_match "TLBF MAXMEMORY above maxmemory is refused" \
    '^ERR TLBF: MAXMEMORY 209715200 \(200\.0 MB\) is more than maxmemory can hold \(maxmemory 100\.0 MB\)$' \
    "$(rcli small TLBF.RESERVE t 60000 MAXMEMORY 209715200)"
expect "a filter that fits is created" OK "$(rcli small APBF.RESERVE fits 1000000)"

# RESTORE is a client's creation too: the DUMP of a filter that does not fit
# (taken where it does) is refused, logged, and the server lives on.
start_server roomy || exit 1
rcli roomy APBF.RESERVE big 100000000 >/dev/null
dump_to roomy big "$WORK/big.dump"
stop_server roomy
reply=$(redis-cli -p "${SERVER_PORT[small]}" -x RESTORE big 0 \
    <"$WORK/big.dump" 2>&1 | grep -v '^$' | tail -n 1)
expect "maxmemory refuses a RESTORE that does not fit" \
    "ERR Bad data format" "$reply"
check "the log says why" grep -q \
    'ebb: RESTORE refused: APBF: the filter needs .* but maxmemory leaves' \
    "$WORK/small/redis.log"
expect "the refused RESTORE created nothing" 0 "$(rcli small EXISTS big)"
expect "the server lives on after it" PONG "$(rcli small PING)"
stop_server small

# ------------------------------------------------------------------------
# Filters not yet touched count: two of 55% of the host's memory each
# ------------------------------------------------------------------------

# A filter comes from calloc and takes no page until it fills, so the
# kernel's counts (MemAvailable, a cgroup's usage) do not see it: without
# counting it, every RESERVE would be checked against an empty machine.
start_server host || exit 1
available_kb=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
# 55%: above half, so the second cannot fit beside the first, and at most
# 69% once rounded up to jemalloc's size class, so the first fits.
slice_bits=$((available_kb * 1024 * 55 / 100))
expect "a filter of 55% of the host's memory is created" OK \
    "$(rcli host APBF.RESERVE first 4000 SHAPE 4 4 "$slice_bits")"
expect_match "a second one is refused: the first counts, untouched" \
    "^ERR APBF: the filter needs [0-9.]+ GB but the host's memory leaves [0-9.]+ [KMG]B " \
    "$(rcli host APBF.RESERVE second 4000 SHAPE 4 4 "$slice_bits")"
expect "the second was not created" 0 "$(rcli host EXISTS second)"
stop_server host

# ------------------------------------------------------------------------
# A memory cgroup, or else an address-space limit
# ------------------------------------------------------------------------

# The cgroup confine may make (v1 or v2), removed at exit once empty.
CGROUP_NAME=ebb-limits-$$
cleanup() {
    stop_all_servers
    rmdir "/sys/fs/cgroup/memory/$CGROUP_NAME" "/sys/fs/cgroup/$CGROUP_NAME" \
        2>/dev/null
}
trap cleanup EXIT

# confine <pid> <bytes>: puts the process under a memory limit of <bytes>:
# a new cgroup (v1 at /sys/fs/cgroup/memory, v2 at /sys/fs/cgroup) when
# this machine lets us make one, else RLIMIT_AS at its current size plus
# <bytes> (always with EBB_TEST_NO_CGROUP set). Prints what it used:
# cgroup or rlimit.
confine() {
    local pid=$1 bytes=$2 dir
    if [ -n "${EBB_TEST_NO_CGROUP:-}" ]; then
        : # the address-space limit only (to test that path here)
    elif [ -w /sys/fs/cgroup/memory ]; then
        dir=/sys/fs/cgroup/memory/$CGROUP_NAME
        if mkdir -p "$dir" 2>/dev/null &&
            echo "$bytes" >"$dir/memory.limit_in_bytes" 2>/dev/null &&
            echo "$pid" >"$dir/cgroup.procs" 2>/dev/null; then
            echo cgroup
            return 0
        fi
        rmdir "$dir" 2>/dev/null
    elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        dir=/sys/fs/cgroup/$CGROUP_NAME
        echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
        if mkdir -p "$dir" 2>/dev/null &&
            echo "$bytes" >"$dir/memory.max" 2>/dev/null &&
            echo "$pid" >"$dir/cgroup.procs" 2>/dev/null; then
            echo cgroup
            return 0
        fi
        rmdir "$dir" 2>/dev/null
    fi
    local size_kb
    size_kb=$(awk '$1 == "VmSize:" { print $2 }' "/proc/$pid/status")
    prlimit --pid "$pid" --as=$((size_kb * 1024 + bytes)) || return 1
    echo rlimit
}

start_server confined || exit 1
mode=$(confine "$(server_pid confined)" $((1024 * MB)))
reply=$(rcli confined APBF.RESERVE a 1000000000)
if [ "$mode" = cgroup ]; then
    expect_match "a memory cgroup of 1 GB refuses RESERVE a 1e9" \
        '^ERR APBF: the filter needs [0-9.]+ GB but the memory cgroup leaves [0-9.]+ [KMG]B \(memory\.(limit_in_bytes|max) 1\.0 GB, used [0-9.]+ [KM]B\)$' \
        "$reply"
else
    expect_match "an address-space limit refuses RESERVE a 1e9" \
        '^ERR APBF: the filter needs [0-9.]+ GB but the address-space limit leaves [0-9.]+ [KMG]B \(RLIMIT_AS ' \
        "$reply"
fi
expect "the confined server lives on" PONG "$(rcli confined PING)"
expect "nothing was created" 0 "$(rcli confined EXISTS a)"
expect "a filter that fits is created" OK \
    "$(rcli confined APBF.RESERVE b 10000000)"
stop_server confined

# ------------------------------------------------------------------------
# No stall: PING latency during RESERVE of a window of 1e9
# ------------------------------------------------------------------------

start_server stall || exit 1
# Pings over one connection until $WORK/stop exists; prints the slowest
# round trip in microseconds (bash's clock, no process per ping).
ping_loop() {
    local port=$1 worst=0 start elapsed line
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
    while [ ! -e "$WORK/stop" ]; do
        start=${EPOCHREALTIME/./}
        printf 'PING\r\n' >&3
        IFS= read -r line <&3
        elapsed=$((${EPOCHREALTIME/./} - start))
        [ "$elapsed" -gt "$worst" ] && worst=$elapsed
    done
    exec 3>&-
    echo "$worst"
}
rm -f "$WORK/stop"
ping_loop "${SERVER_PORT[stall]}" >"$WORK/worst" &
pinger=$!
sleep 0.3
started=${EPOCHREALTIME/./}
reply=$(rcli stall APBF.RESERVE huge 1000000000)
reserve_us=$((${EPOCHREALTIME/./} - started))
sleep 0.3
touch "$WORK/stop"
wait "$pinger"
worst=$(cat "$WORK/worst")
expect "RESERVE of a window of 1e9" OK "$reply"
echo "limit used: $mode"
echo "RESERVE 1e9: $((reserve_us / 1000)) ms; slowest PING during it: $((worst / 1000)) ms"
check "PING latency during RESERVE 1e9 ($((worst / 1000)) ms) under 100 ms" \
    test "$worst" -lt 100000
check "RESERVE 1e9 returned in $((reserve_us / 1000)) ms (under 100 ms)" \
    test "$reserve_us" -lt 100000
rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$(server_pid stall)/status")
check "RESERVE touched no page of the filter (RSS $((rss / 1024)) MB)" \
    test "$rss" -lt $((200 * 1024))
stop_server stall

# ------------------------------------------------------------------------
# MEMORY USAGE against used_memory's growth
# ------------------------------------------------------------------------

start_server usage || exit 1
for window in 1000000 10000000 100000000; do
    before=$(used_memory usage)
    rcli usage APBF.RESERVE "w$window" "$window" >/dev/null
    after=$(used_memory usage)
    usage=$(rcli usage MEMORY USAGE "w$window")
    echo "APBF window $window: MEMORY USAGE $usage, used_memory grew $((after - before))"
    check "APBF window $window: MEMORY USAGE $usage within 2% of used_memory's growth $((after - before))" \
        awk -v u="$usage" -v g=$((after - before)) \
        'BEGIN { d = u - g; if (d < 0) d = -d; exit !(g > 0 && d <= 0.02 * g) }'
done
before=$(used_memory usage)
rcli usage TLBF.RESERVE tl 60000 RATE 1000000 MAXMEMORY 1000000000 >/dev/null
after=$(used_memory usage)
usage=$(rcli usage MEMORY USAGE tl)
check "TLBF: MEMORY USAGE $usage within 2% of used_memory's growth $((after - before))" \
    awk -v u="$usage" -v g=$((after - before)) \
    'BEGIN { d = u - g; if (d < 0) d = -d; exit !(g > 0 && d <= 0.02 * g) }'
# A restored copy (DUMP/RESTORE loads through the RDB path) measures alike.
rcli usage --raw DUMP w10000000 | head -c -1 >"$WORK/w.dump"
before=$(used_memory usage)
redis-cli -p "${SERVER_PORT[usage]}" -x RESTORE restored 0 <"$WORK/w.dump" >/dev/null
after=$(used_memory usage)
usage=$(rcli usage MEMORY USAGE restored)
check "RESTOREd filter: MEMORY USAGE $usage within 2% of used_memory's growth $((after - before))" \
    awk -v u="$usage" -v g=$((after - before)) \
    'BEGIN { d = u - g; if (d < 0) d = -d; exit !(g > 0 && d <= 0.02 * g) }'
stop_server usage

# ------------------------------------------------------------------------
# A replica with less memory than its primary
# ------------------------------------------------------------------------

start_server primary --appendonly yes || exit 1
start_server replica --maxmemory 20mb --maxmemory-policy noeviction \
    --replica-read-only no || exit 1
rcli replica REPLICAOF 127.0.0.1 "${SERVER_PORT[primary]}" >/dev/null
check "the replica syncs" wait_until 10 \
    sh -c "redis-cli -p ${SERVER_PORT[replica]} INFO replication | grep -q master_link_status:up"
# 30 MB: more than the replica's maxmemory lets a client create.
expect "RESERVE without options on the primary" OK \
    "$(rcli primary APBF.RESERVE r 10000000)"
expect "TLBF.RESERVE on the primary" OK \
    "$(rcli primary TLBF.RESERVE tr 600000 MAXMEMORY 50000000)"
items_command APBF.MADD r i: 0 20000 1000 | pipe_to primary
items_command TLBF.MADD tr i: 0 5000 1000 | pipe_to primary
rcli primary APBF.ADD created-by-add x >/dev/null
check "replica synced" synced
for key in r tr created-by-add; do
    dump_to primary "$key" "$WORK/p-$key.dump"
    dump_to replica "$key" "$WORK/r-$key.dump"
    check "replica's $key byte-identical to the primary's (DUMP)" \
        cmp -s "$WORK/p-$key.dump" "$WORK/r-$key.dump"
done
expect_match "a client RESERVE of that size on the replica is refused" \
    '^ERR APBF: the filter needs .* but maxmemory leaves ' \
    "$(rcli replica APBF.RESERVE mine 10000000)"

# The RESERVE propagated as decided: the shape, not the typed command.
cat "$WORK/primary"/appendonlydir/*.incr.aof 2>/dev/null | tr -d '\r' \
    >"$WORK/aof.txt"
shape=$(rcli primary APBF.INFO r | awk 'NR % 2 == 1 { f = $0; next }
    f == "window" { w = $0 } f == "k" { k = $0 } f == "l" { l = $0 }
    f == "slice_bits" { m = $0 } END { print w, k, l, m }')
read -r w k l m <<<"$shape"
check "the AOF holds APBF.RESERVE r $w SHAPE $k $l $m" \
    grep -qzP "APBF\\.RESERVE\\n\\\$1\\nr\\n\\\$${#w}\\n$w\\n\\\$5\\nSHAPE\\n\\\$${#k}\\n$k\\n\\\$${#l}\\n$l\\n\\\$${#m}\\n$m\\n" \
    "$WORK/aof.txt"
check "the AOF holds no APBF.RESERVE as typed (window 10000000 alone)" \
    bash -c '! grep -qzP "APBF\\.RESERVE\\n\\\$1\\nr\\n\\\$8\\n10000000\\n\\*" "$1"' _ "$WORK/aof.txt"
check "the AOF holds TLBF.RESERVE with every option" \
    grep -qzP 'TLBF\.RESERVE\n\$2\ntr\n\$6\n600000\n\$5\nERROR\n[^*]*RATE\n[^*]*MAXMEMORY\n\$8\n50000000\n\$6\nPOLICY\n[^*]*MAXNPWS\n' \
    "$WORK/aof.txt"
check "a creating ADD sends its resolved RESERVE first" \
    grep -qzP 'APBF\.RESERVE\n\$14\ncreated-by-add\n[^*]*SHAPE\n[^*]*\*3\n\$8\nAPBF\.ADD\n' \
    "$WORK/aof.txt"

# The SHAPE form recreates that shape exactly, and is checked strictly.
info_shape() {
    rcli primary APBF.INFO "$1" | paste -d ' ' - - |
        grep -E '^(window|k|l|slice_bits|generation|block_bits|block_hashes) '
}
expect "RESERVE SHAPE" OK "$(rcli primary APBF.RESERVE r-shape "$w" SHAPE "$k" "$l" "$m")"
expect "APBF.INFO gives the 7 fields of a shape" 7 "$(info_shape r | grep -c .)"
expect "the SHAPE form makes the chosen shape" "$(info_shape r)" "$(info_shape r-shape)"
rcli primary APBF.RESERVE b-goal 1000000 BLOCKED >/dev/null
read -r bw bk bl bm bb bh <<<"$(rcli primary APBF.INFO b-goal | paste -d ' ' - - |
    awk '{ v[$1] = $2 } END { print v["window"], v["k"], v["l"],
          v["slice_bits"], v["block_bits"], v["block_hashes"] }')"
expect "RESERVE SHAPE BLOCKS" OK \
    "$(rcli primary APBF.RESERVE b-shape "$bw" SHAPE "$bk" "$bl" "$bm" BLOCKS "$bb" "$bh")"
expect_match "the blocked goal is blocked" '^512 [0-9]+$' "$bb $bh"
expect "the SHAPE BLOCKS form makes the chosen blocked shape" \
    "$(info_shape b-goal)" "$(info_shape b-shape)"
expect_match "SHAPE: l must divide the window" '^ERR APBF: SHAPE l \(7\) must divide' \
    "$(rcli primary APBF.RESERVE bad 1000 SHAPE 3 7 5000)"
expect_match "SHAPE: too many items per generation for the slices" \
    '^ERR APBF: SHAPE 3 10 100 is not a valid shape for a window of 1000' \
    "$(rcli primary APBF.RESERVE bad 1000 SHAPE 3 10 100)"
expect_match "SHAPE: slices not a multiple of the block" \
    '^ERR APBF: SHAPE 3 10 5001 BLOCKS .. is not a valid shape' \
    "$(rcli primary APBF.RESERVE bad 1000 SHAPE 3 10 5001 BLOCKS 512 4)"
expect_match "SHAPE: block hashes 3" '^ERR APBF: SHAPE .* is not a valid shape' \
    "$(rcli primary APBF.RESERVE bad 1000 SHAPE 3 10 5120 BLOCKS 512 3)"
expect_match "SHAPE: k above the library's limit" '^ERR .*SHAPE k.* 64' \
    "$(rcli primary APBF.RESERVE bad 1000 SHAPE 65 10 5000)"
expect_match "SHAPE with a goal" '^ERR APBF: SHAPE cannot be combined' \
    "$(rcli primary APBF.RESERVE bad 1000 SHAPE 3 10 5000 ERROR 0.1)"
expect_match "BLOCKS without SHAPE" '^ERR APBF: BLOCKS needs SHAPE' \
    "$(rcli primary APBF.RESERVE bad 1000 BLOCKS 512 4)"
expect "failed SHAPEs create nothing" 0 "$(rcli primary EXISTS bad)"

# The replica restarts (a full resync loads the primary's RDB).
stop_server replica
start_server replica --maxmemory 20mb --maxmemory-policy noeviction \
    --replica-read-only no --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" ||
    exit 1
check "the restarted replica syncs" wait_until 10 \
    sh -c "redis-cli -p ${SERVER_PORT[replica]} INFO replication | grep -q master_link_status:up"
items_command APBF.MADD r j: 0 2000 1000 | pipe_to primary
check "replica synced" synced
for key in r tr; do
    dump_to primary "$key" "$WORK/p-$key.dump"
    dump_to replica "$key" "$WORK/r-$key.dump"
    check "after a restart and writes, the replica's $key is identical" \
        cmp -s "$WORK/p-$key.dump" "$WORK/r-$key.dump"
done

# A replicated write to a key the replica lacks creates nothing.
rcli replica DEL r >/dev/null
rcli primary APBF.ADD r lost >/dev/null
check "replica synced" synced
expect "a replicated ADD to a missing key creates nothing" 0 \
    "$(rcli replica EXISTS r)"
check "the replica logs the RESERVE that did not apply" \
    grep -q "the primary's RESERVE of r did not apply here" \
    "$WORK/replica/redis.log"
stop_server replica
stop_server primary

# An AOF whose write has no RESERVE before it creates nothing either.
mkdir -p "$WORK/aof"
resp APBF.ADD ghost x >"$WORK/aof/appendonly.aof"
start_server aof --appendonly yes --appendfilename appendonly.aof || exit 1
expect "an AOF write to a missing key creates nothing" 0 \
    "$(rcli aof EXISTS ghost)"
check "the AOF replay logs it" \
    grep -q "the primary's RESERVE of ghost did not apply here" \
    "$WORK/aof/redis.log"
stop_server aof

# ------------------------------------------------------------------------
# ebb.huge-pages: the config, and what the kernel granted
# ------------------------------------------------------------------------

start_server hp || exit 1
start_server nohp --ebb.huge-pages no || exit 1
expect "ebb.huge-pages defaults to yes" "$(printf '%s\n' ebb.huge-pages yes)" \
    "$(rcli hp CONFIG GET ebb.huge-pages)"
expect "--ebb.huge-pages no at start" "$(printf '%s\n' ebb.huge-pages no)" \
    "$(rcli nohp CONFIG GET ebb.huge-pages)"
expect "CONFIG SET ebb.huge-pages" OK "$(rcli hp CONFIG SET ebb.huge-pages no)"
expect "CONFIG GET after SET" "$(printf '%s\n' ebb.huge-pages no)" \
    "$(rcli hp CONFIG GET ebb.huge-pages)"
expect_match "a value other than yes/no is refused" '^ERR' \
    "$(rcli hp CONFIG SET ebb.huge-pages maybe)"
expect "CONFIG SET ebb.huge-pages yes" OK "$(rcli hp CONFIG SET ebb.huge-pages yes)"

# A 40 MB key on each, written at 4,000 x 7 random counters: every 2 MiB
# page of it is touched.
incrbys() {
    awk 'function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
        BEGIN { for (i = 0; i < 4000; i++) {
            printf "*4\r\n"; bulk("SPECTRAL.INCRBY"); bulk("big"); bulk("x" i); bulk("1") } }'
}
huge_kb() {
    awk '$1 == "AnonHugePages:" { print $2 }' "/proc/$(server_pid "$1")/smaps_rollup"
}
for name in hp nohp; do
    expect "$name: a 40 MB spectral key" OK \
        "$(rcli "$name" SPECTRAL.RESERVE big COUNTERS 10000000 K 7)"
    check "$name: 4,000 increments" pipe_to "$name" < <(incrbys)
done
# The same answers either way: the advice changes no byte.
dump_to hp big "$WORK/hp.dump"
dump_to nohp big "$WORK/nohp.dump"
check "huge pages or not, the key's DUMP is the same" cmp -s "$WORK/hp.dump" "$WORK/nohp.dump"
# What the kernel grants depends on its THP mode: with "madvise" (and THP
# not turned off for the process) the advised key gets huge pages and
# nothing else does; with "never", or "always" (Redis then turns THP off
# for itself), neither server has any.
thp_mode=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
thp_on=$(awk '$1 == "THP_enabled:" { print $2 }' "/proc/$(server_pid hp)/status")
if [ "$thp_mode" = madvise ] && [ "$thp_on" = 1 ]; then
    hp_kb=$(huge_kb hp)
    expect_match "THP mode madvise: the advised key is on huge pages ($hp_kb kB)" \
        '^[0-9]+$' "$hp_kb"
    check "THP mode madvise: at least 8 MB of the 40 MB key on huge pages ($hp_kb kB)" \
        test "${hp_kb:-0}" -ge 8192
    expect "THP mode madvise: ebb.huge-pages no gets none" 0 "$(huge_kb nohp)"
else
    echo "(THP mode '${thp_mode:-unknown}', THP_enabled '${thp_on:-unknown}':" \
        "huge pages not expected; only the config and DUMP were checked)"
fi
stop_server hp
stop_server nohp

finish
