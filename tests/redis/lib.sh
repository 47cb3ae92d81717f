# SPDX-License-Identifier: BSD-2-Clause
# lib.sh: helpers sourced by the Redis module tests (bash).
#
# Every script is called as
#     bash <script>.sh <path to ebb.so> <work directory>
# and starts its own redis-server processes on free loopback ports, in
# directories under the work directory, with the module loaded. A trap
# stops every server the script started (by pid) however it ends.
#
# Checks either pass silently or record a failure with a message; `finish`
# exits 1 when any failed (or when none ran), so a script cannot pass by
# stopping early.

set -u
set -o pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 <ebb.so> <work directory>" >&2
    exit 2
fi
MODULE=$(realpath "$1")
WORK=$2
for program in redis-server redis-cli; do
    if ! command -v "$program" >/dev/null; then
        echo "$program not found: run scripts/install-deps.sh" >&2
        exit 1
    fi
done
if [ ! -f "$MODULE" ]; then
    echo "no module at $MODULE" >&2
    exit 1
fi
rm -rf "$WORK"
mkdir -p "$WORK"
WORK=$(realpath "$WORK")

source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

# expect <description> <expected> <actual>
expect() {
    checks=$((checks + 1))
    if [ "$2" != "$3" ]; then
        fail "$1: expected '$2', got '$3'"
        return 1
    fi
    return 0
}

# expect_match <description> <extended regex> <actual>
expect_match() {
    checks=$((checks + 1))
    if ! [[ $3 =~ $2 ]]; then
        fail "$1: '$3' does not match /$2/"
        return 1
    fi
    return 0
}

# ------------------------------------------------------------------------
# Servers
# ------------------------------------------------------------------------

declare -A SERVER_PID=()
declare -A SERVER_PORT=()

stop_all_servers() {
    local name
    for name in "${!SERVER_PID[@]}"; do
        kill -KILL "${SERVER_PID[$name]}" 2>/dev/null
        wait "${SERVER_PID[$name]}" 2>/dev/null
    done
}
trap stop_all_servers EXIT

# True when something listens on 127.0.0.1:port.
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_port: prints a loopback port nobody listens on, whose cluster bus
# port (port + 10000) is free too. Random, so parallel tests rarely meet,
# and below the kernel's ephemeral range (where client sockets take their
# ports, which would make a later bind fail).
free_port() {
    local port attempt ephemeral_low top
    ephemeral_low=$(cut -f 1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    top=$((${ephemeral_low:-32768} - 10000))
    for attempt in $(seq 1 200); do
        port=$((10000 + RANDOM % (top - 10000)))
        if ! port_in_use "$port" && ! port_in_use $((port + 10000)); then
            echo "$port"
            return 0
        fi
    done
    echo "no free port found" >&2
    return 1
}

# rcli <name> <args...>: a command to server <name>; the reply as redis-cli
# prints it without a terminal (integers and strings raw, one per line).
rcli() {
    local name=$1
    shift
    redis-cli -p "${SERVER_PORT[$name]}" "$@" 2>&1
}

# wait_until <seconds> <command...>: polls every 0.1 s.
wait_until() {
    local deadline=$(($(date +%s%N) + $1 * 1000000000))
    shift
    while ! "$@" >/dev/null 2>&1; do
        if [ "$(date +%s%N)" -gt "$deadline" ]; then
            return 1
        fi
        sleep 0.1
    done
    return 0
}

# listening <name> <subscriptions>: one pub/sub client of server <name>
# holds at least this many channel and pattern subscriptions. A subscriber
# started in the background is ready once this holds: events published
# before it would be lost, whatever a fixed sleep assumed about the load.
listening() {
    rcli "$1" CLIENT LIST TYPE pubsub | awk -v n="$2" '
        { held = 0
          for (i = 1; i <= NF; i++)
              if ($i ~ /^p?sub=/) { split($i, kv, "="); held += kv[2] }
          if (held >= n) found = 1 }
        END { exit found ? 0 : 1 }'
}

# has_lines <file> <extended regex> <count>: at least count lines match.
has_lines() {
    [ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ]
}

server_answers() {
    [ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ]
}

# start_server <name> [redis-server options...]: starts a server with the
# module in $WORK/<name> (created if needed; its files are kept between
# restarts) on the port it had before, or a free one. Returns 1 when the
# server does not answer PING within 10 s.
start_server() {
    local name=$1
    shift
    local dir="$WORK/$name"
    mkdir -p "$dir"
    local port=${SERVER_PORT[$name]:-}
    if [ -z "$port" ]; then
        port=$(free_port) || return 1
    fi
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" \
        --logfile "$dir/redis.log" --save '' --appendonly no \
        --daemonize no --enable-debug-command local \
        --loadmodule "$MODULE" "$@" >/dev/null 2>&1 &
    SERVER_PID[$name]=$!
    SERVER_PORT[$name]=$port
    if ! wait_until 10 server_answers "$port"; then
        echo "server $name did not start; its log:" >&2
        tail -n 20 "$dir/redis.log" >&2
        return 1
    fi
    return 0
}

# stop_server <name>: SIGTERM (a clean shutdown: the AOF is flushed) and
# wait for the process to end.
stop_server() {
    local name=$1
    local pid=${SERVER_PID[$name]:-}
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    unset "SERVER_PID[$name]"
    return 0
}

# server_pid <name>
server_pid() {
    echo "${SERVER_PID[$1]}"
}

# ------------------------------------------------------------------------
# Bulk commands
# ------------------------------------------------------------------------

# resp <words...>: one command in the Redis protocol (for redis-cli --pipe).
resp() {
    printf '*%d\r\n' $#
    local word
    for word in "$@"; do
        printf '$%d\r\n%s\r\n' ${#word} "$word"
    done
}

# items_command <command> <key> <prefix> <from> <to> <per command>: prints
# commands in the Redis protocol, each "<command> <key>" followed by up to
# <per command> items <prefix><i> for i in [from, to).
items_command() {
    awk -v cmd="$1" -v key="$2" -v prefix="$3" -v from="$4" -v to="$5" \
        -v per="$6" '
        function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
        BEGIN {
            for (start = from; start < to; start += per) {
                n = (to - start < per) ? to - start : per
                printf "*%d\r\n", n + 2
                bulk(cmd); bulk(key)
                for (i = start; i < start + n; i++) bulk(prefix i)
            }
        }'
}

# pipe_to <name>: sends stdin (protocol) to server <name>; fails when any
# reply is an error.
pipe_to() {
    local out
    out=$(redis-cli -p "${SERVER_PORT[$1]}" --pipe 2>&1)
    if ! [[ $out =~ errors:\ 0, ]]; then
        echo "$out" >&2
        return 1
    fi
    return 0
}

# answers <name> <command> <key> <prefix> <from> <to>: the replies of
# <command> (an MEXISTS) for items <prefix><i>, i in [from, to), one per
# line, in 1000-item commands.
answers() {
    local name=$1 command=$2 key=$3 prefix=$4 from=$5 to=$6
    awk -v cmd="$command" -v key="$key" -v prefix="$prefix" -v from="$from" \
        -v to="$to" 'BEGIN {
            for (start = from; start < to; start += 1000) {
                line = cmd " " key
                for (i = start; i < start + 1000 && i < to; i++)
                    line = line " " prefix i
                print line
            }
        }' | redis-cli -p "${SERVER_PORT[$name]}" 2>&1
}

# count_ones: how many lines of stdin are "1".
count_ones() {
    grep -cx 1 || true
}

# dump_to <name> <key> <file>: DUMP's payload, byte for byte.
dump_to() {
    redis-cli -p "${SERVER_PORT[$1]}" --raw DUMP "$2" >"$3.tmp" &&
        head -c -1 "$3.tmp" >"$3" && rm -f "$3.tmp"
}

# info_field <name> <INFO command> <key> <field>: one field of APBF.INFO /
# TLBF.INFO.
info_field() {
    redis-cli -p "${SERVER_PORT[$1]}" "$2" "$3" 2>&1 |
        awk -v field="$4" 'found { print; exit } $0 == field { found = 1 }'
}

# ------------------------------------------------------------------------
# SCANDUMP / LOADCHUNK
# ------------------------------------------------------------------------

# scandump <server> <command> <key> <dir>: runs a whole scan, one file per
# chunk (<dir>/<n>.iter and <dir>/<n>.data); prints the number of chunks.
# With --raw, redis-cli prints the reply as "<iterator>\n<data>\n".
scandump() {
    local server=$1 command=$2 key=$3 dir=$4 iter=0 n=0 len
    rm -rf "$dir"
    mkdir -p "$dir"
    while :; do
        rcli "$server" --raw "$command" "$key" "$iter" >"$dir/reply"
        iter=$(head -n 1 "$dir/reply")
        if ! [[ $iter =~ ^[0-9]+$ ]]; then
            echo "bad SCANDUMP reply: $(head -c 200 "$dir/reply")" >&2
            return 1
        fi
        [ "$iter" -eq 0 ] && break
        len=$(($(stat -c %s "$dir/reply") - ${#iter} - 2))
        n=$((n + 1))
        echo "$iter" >"$dir/$n.iter"
        tail -c +$((${#iter} + 2)) "$dir/reply" | head -c "$len" >"$dir/$n.data"
    done
    rm -f "$dir/reply"
    echo "$n"
}

# loadchunk_file <server> <command> <key> <dir> <n>: sends chunk n of a
# scan; prints the reply.
loadchunk_file() {
    redis-cli -p "${SERVER_PORT[$1]}" -x "$2" "$3" "$(cat "$4/$5.iter")" \
        <"$4/$5.data" 2>&1
}

# loadchunks <server> <command> <key> <dir> <from> [<to>]: sends chunks
# from..to (to defaults to from) in order; prints the replies.
loadchunks() {
    local server=$1 command=$2 key=$3 dir=$4 from=$5 to=${6:-$5} i
    for i in $(seq "$from" "$to"); do
        loadchunk_file "$server" "$command" "$key" "$dir" "$i"
    done
}

# ------------------------------------------------------------------------
# Replication
# ------------------------------------------------------------------------

# link_up <replica>: its link to its primary is up.
link_up() {
    rcli "$1" INFO replication | grep -q '^master_link_status:up'
}

# repl_offset <server> <field>: a numeric field of INFO replication.
repl_offset() {
    rcli "$1" INFO replication | awk -F: -v field="$2" '$1 == field { print $2 + 0 }'
}

# replica_reached <replica> <offset>: it has applied the stream up to offset.
replica_reached() {
    [ "$(repl_offset "$1" slave_repl_offset)" -ge "$2" ]
}

# synced [<primary> [<replica>]] (default: primary, replica): the replica
# has applied every write the primary has made so far. (WAIT would not do:
# it waits for the writes of its own connection, and every rcli is a new
# connection.)
synced() {
    local primary=${1:-primary} replica=${2:-replica}
    wait_until 10 replica_reached "$replica" \
        "$(repl_offset "$primary" master_repl_offset)"
}
