#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# redis-bench.sh: ebb.so under redis-benchmark, against SET on the same
# server in the same run (the redis part of `make bench`).
#
#   bash bench/redis-bench.sh [build directory | path to ebb.so]
#
# Starts a redis-server with the module on a free loopback port (in a
# temporary directory, no persistence), reserves one key of each type
# (an APBF with a window of 10^6 at 1%, a TLBF, a stable filter of 1 MiB at
# 1%, a timing filter with a window of 10^6 at 1%, a spectral filter for
# 10^6 distinct items at 1%, and one of the same k small enough for the
# caches), then runs redis-benchmark at -P 32 with
# random items (__rand_int__ over 10^6 values) for SET and each type's main
# write and read command, ROUNDS times each, interleaved so that a slow
# moment of the machine hits every command alike. Prints, per command, the
# median requests/s, its ratio to SET's, and usec_per_call from INFO
# commandstats (server time per call over its runs, all rounds), then one
# `target met: yes/no` line per target of the Redis issues:
#   - APBF.ADD, STABLE.TESTADD and SPECTRAL.INCRBY cost <= 0.5 us per call
#     server-side;
#   - their throughput at -P 32 is >= 1.2x SET's.
#
# Environment: REQUESTS (default 1000000 per run), ROUNDS (default 5).
set -euo pipefail

target=${1:-build-bench}
if [ -d "$target" ]; then
    module="$target/redis/ebb.so"
else
    module=$target
fi
if [ ! -f "$module" ]; then
    echo "redis-bench: no module at $module (build the ebb_redis_module target)" >&2
    exit 1
fi
module=$(realpath "$module")
for program in redis-server redis-cli redis-benchmark; do
    command -v "$program" >/dev/null ||
        { echo "redis-bench: $program not found (scripts/install-deps.sh)" >&2; exit 1; }
done

REQUESTS=${REQUESTS:-1000000}
ROUNDS=${ROUNDS:-5}
PIPELINE=32
KEYSPACE=1000000
WINDOW=1000000
MAX_USEC_PER_CALL=0.5
MIN_RATIO_TO_SET=1.2

# A port below the ephemeral range that nobody listens on.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ephemeral_low=$(cut -f 1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
port=""
for attempt in $(seq 1 200); do
    candidate=$((10000 + RANDOM % (ephemeral_low - 10000)))
    if ! port_in_use "$candidate"; then
        port=$candidate
        break
    fi
done
[ -n "$port" ] || { echo "redis-bench: no free port" >&2; exit 1; }

dir=$(mktemp -d)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' \
    --appendonly no --logfile "$dir/redis.log" --loadmodule "$module" &
server_pid=$!
for attempt in $(seq 1 100); do
    [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ] && break
    sleep 0.1
done
r() { redis-cli -p "$port" "$@"; }
[ "$(r PING)" = PONG ] || { cat "$dir/redis.log" >&2; exit 1; }

r APBF.RESERVE bench:apbf "$WINDOW" ERROR 0.01 >/dev/null
# A 10 s span at the rate the benchmark sends, and room to spare: the TLBF
# must never refuse during the run.
r TLBF.RESERVE bench:tlbf 10000 ERROR 0.01 RATE 500000 MAXMEMORY 1073741824 >/dev/null
r STABLE.RESERVE bench:stable MEMORY 1048576 ERROR 0.01 >/dev/null
r TIMING.RESERVE bench:timing "$WINDOW" ERROR 0.01 UNIVERSE "$KEYSPACE" >/dev/null
r SPECTRAL.RESERVE bench:spectral DISTINCT "$WINDOW" ERROR 0.01 >/dev/null
# The same k and counters, 2^16 of them (256 KiB, inside L2): the difference
# from bench:spectral is the cost of the large key's cache and TLB misses.
r SPECTRAL.RESERVE bench:spectral-cached COUNTERS 65536 K 7 >/dev/null
r CONFIG RESETSTAT >/dev/null

COMMANDS=(
    "SET bench:__rand_int__ xxx"
    "APBF.ADD bench:apbf __rand_int__"
    "APBF.EXISTS bench:apbf __rand_int__"
    "TLBF.ADD bench:tlbf __rand_int__"
    "STABLE.TESTADD bench:stable __rand_int__"
    "STABLE.EXISTS bench:stable __rand_int__"
    "TIMING.ADD bench:timing __rand_int__"
    "TIMING.EXISTS bench:timing __rand_int__"
    "TIMING.POSTERIOR bench:timing __rand_int__"
    "SPECTRAL.INCRBY bench:spectral __rand_int__ 1"
    "SPECTRAL.QUERY bench:spectral __rand_int__"
    "SPECTRAL.INCRBY bench:spectral-cached __rand_int__ 1"
)

# "calls usec" of a command name in INFO commandstats (0 0 before its first).
command_stats() {
    r INFO commandstats | tr -d '\r' |
        awk -F'[:,=]' -v name="cmdstat_$1" 'BEGIN { calls = 0; usec = 0 }
            tolower($1) == tolower(name) {
                for (i = 2; i < NF; i += 2) {
                    if ($i == "calls") calls = $(i + 1)
                    if ($i == "usec") usec = $(i + 1)
                } }
            END { print calls, usec }'
}

# Server time is summed per command line (two lines may run one command
# on different keys), from the commandstats before and after each run.
declare -A RPS=() CALLS=() USEC=()
for round in $(seq 1 "$ROUNDS"); do
    for command in "${COMMANDS[@]}"; do
        name=${command%% *}
        read -r calls0 usec0 < <(command_stats "$name")
        # shellcheck disable=SC2086
        rps=$(redis-benchmark -p "$port" -P "$PIPELINE" -n "$REQUESTS" \
            -r "$KEYSPACE" --csv $command | awk -F'"' 'NR == 2 { print $4 }')
        read -r calls1 usec1 < <(command_stats "$name")
        RPS[$command]="${RPS[$command]:-} $rps"
        CALLS[$command]=$(( ${CALLS[$command]:-0} + calls1 - calls0 ))
        USEC[$command]=$(( ${USEC[$command]:-0} + usec1 - usec0 ))
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
usec_per_call() {
    awk -v u="${USEC[$1]}" -v c="${CALLS[$1]}" 'BEGIN { printf "%.2f", (c > 0) ? u / c : 0 }'
}

set_rps=$(median <<<"${RPS[${COMMANDS[0]}]}")
refused=$(r TLBF.INFO bench:tlbf | awk 'found { print; exit } $0 == "refused" { found = 1 }')

echo "Redis $(redis-server --version | awk '{ print $3 }' | cut -d= -f2), -P $PIPELINE," \
    "$REQUESTS requests x $ROUNDS rounds per command, __rand_int__ over $KEYSPACE," \
    "APBF window $WINDOW at 1%, STABLE 1 MiB at 1%, TIMING window $WINDOW at 1% over a universe of $KEYSPACE," \
    "SPECTRAL $WINDOW distinct at 1%, SPECTRAL cached 2^16 counters k 7"
printf '%-54s %14s %13s %14s\n' command "requests/s" "ratio to SET" "usec_per_call"
for command in "${COMMANDS[@]}"; do
    rps=$(median <<<"${RPS[$command]}")
    printf '%-54s %14.0f %13.2f %14s\n' "$command" "$rps" \
        "$(awk -v a="$rps" -v b="$set_rps" 'BEGIN { print a / b }')" \
        "$(usec_per_call "$command")"
done
echo "(TLBF refused during the run: $refused)"

yes_no() { awk "BEGIN { print ($1) ? \"yes\" : \"no\" }"; }
# The targets, for each command of TARGETS (index into COMMANDS).
TARGETS=(1 4 9)
for index in "${TARGETS[@]}"; do
    command=${COMMANDS[$index]}
    name=${command%% *}
    usec=$(usec_per_call "$command")
    ratio=$(awk -v a="$(median <<<"${RPS[$command]}")" -v b="$set_rps" \
        'BEGIN { printf "%.2f", a / b }')
    echo "target met: $(yes_no "$usec <= $MAX_USEC_PER_CALL")" \
        "($name usec_per_call $usec <= $MAX_USEC_PER_CALL)"
    echo "target met: $(yes_no "$ratio >= $MIN_RATIO_TO_SET")" \
        "($name throughput ${ratio}x SET >= ${MIN_RATIO_TO_SET}x)"
done
