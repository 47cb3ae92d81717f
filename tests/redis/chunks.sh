#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# chunks.sh: SCANDUMP scans and LOADCHUNK restores under misuse
# (docs/redis.md "SCANDUMP and LOADCHUNK").
#
#   - two scans of one key interleaved chunk by chunk (APBF and TLBF): each
#     restores into a filter byte-identical (DUMP) to the key's state at its
#     iterator 0; after a write, the older scan is refused at its next
#     iterator and the newer one completes; iterators are positive 63-bit
#     integers carrying a scan number, refused by another key; plain
#     offsets restore too;
#   - a first chunk whose header announces one byte more, or 2^62 bytes, is
#     refused at that first chunk and leaves no key; chunks of the wrong
#     length are refused (at the first chunk: no key; later: the restore
#     is dropped); a chunk out of order changes nothing;
#   - on a primary with a replica: a restore whose last chunk fails
#     verification leaves the key on neither (EXISTS, DUMP, DBSIZE
#     compared), and the replica logs no replication error;
#   - a restore in progress survives SAVE and a restart, completes after
#     it, and DEL clears an abandoned one.
#
#   bash chunks.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

start_server primary --repl-diskless-sync-delay 0 --dbfilename dump.rdb ||
    exit 1
start_server replica --replicaof 127.0.0.1 "${SERVER_PORT[primary]}" || exit 1
p() { rcli primary "$@"; }
q() { rcli replica "$@"; }

check "replica linked" wait_until 10 link_up replica

CHUNK=1048576
OFFSET_BITS=44
OFFSET_MASK=$(((1 << OFFSET_BITS) - 1))

# scan_step <server> <command> <key> <iterator> <dir> <n>: one SCANDUMP;
# keeps the reply as <dir>/<n>.iter and <dir>/<n>.data and prints the
# iterator it returned (or the error).
scan_step() {
    local server=$1 command=$2 key=$3 iter=$4 dir=$5 n=$6 next len
    mkdir -p "$dir"
    rcli "$server" --raw "$command" "$key" "$iter" >"$dir/reply"
    next=$(head -n 1 "$dir/reply")
    if [[ $next =~ ^[0-9]+$ ]]; then
        len=$(($(stat -c %s "$dir/reply") - ${#next} - 2))
        echo "$next" >"$dir/$n.iter"
        tail -c +$((${#next} + 2)) "$dir/reply" | head -c "$len" >"$dir/$n.data"
    fi
    echo "$next"
}

# le64 <value>: the 8 bytes of value, little-endian.
le64() {
    local i byte
    for i in 0 1 2 3 4 5 6 7; do
        byte=$((($1 >> (8 * i)) & 255))
        # shellcheck disable=SC2059
        printf "\\$(printf %03o "$byte")"
    done
}

# set_total <file> <total>: writes the snapshot header's total length.
set_total() {
    le64 "$2" | dd of="$1" bs=1 seek=16 conv=notrunc 2>/dev/null
}

# flip_byte <file> <offset>: changes one byte.
flip_byte() {
    cp "$1" "$1.orig"
    printf '\xff' | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
    cmp -s "$1" "$1.orig" &&
        printf '\x00' | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
    rm -f "$1.orig"
}

# send <server> <command> <key> <iterator> <file>: one LOADCHUNK.
send() {
    redis-cli -p "${SERVER_PORT[$1]}" -x "$2" "$3" "$4" <"$5" 2>&1
}

same_dump() {
    dump_to "$1" "$2" "$WORK/a.dump" && dump_to "$3" "$4" "$WORK/b.dump" &&
        [ -s "$WORK/a.dump" ] && cmp -s "$WORK/a.dump" "$WORK/b.dump"
}

# ------------------------------------------------------------------------
# Two interleaved scans of one key
# ------------------------------------------------------------------------

p APBF.RESERVE big 1000000 >/dev/null
items_command APBF.MADD big i: 0 30000 1000 | pipe_to primary
dump_to primary big "$WORK/big.v1"

# A and B alternate, chunk by chunk; B starts after A's first chunk.
a=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/A" 1)
b=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/B" 1)
expect_match "an iterator is a positive integer" '^[1-9][0-9]*$' "$a"
check "an iterator carries a scan number above the offset ($a)" \
    [ $((a >> OFFSET_BITS)) -ge 1 ]
expect "its low bits are the end of the first chunk" $CHUNK $((a & OFFSET_MASK))
na=1 nb=1
while [ "$a" != 0 ] || [ "$b" != 0 ]; do
    if [ "$a" != 0 ]; then
        na=$((na + 1))
        a=$(scan_step primary APBF.SCANDUMP big "$a" "$WORK/A" $na)
        [[ $a =~ ^[0-9]+$ ]] || break
    fi
    if [ "$b" != 0 ]; then
        nb=$((nb + 1))
        b=$(scan_step primary APBF.SCANDUMP big "$b" "$WORK/B" $nb)
        [[ $b =~ ^[0-9]+$ ]] || break
    fi
done
expect "interleaved scan A ends" 0 "$a"
expect "interleaved scan B ends" 0 "$b"
chunks=$((na - 1))
check "the filter takes several chunks ($chunks)" [ "$chunks" -ge 3 ]
for scan in A B; do
    for i in $(seq 1 "$chunks"); do
        send primary APBF.LOADCHUNK "restored$scan" "$(cat "$WORK/$scan/$i.iter")" \
            "$WORK/$scan/$i.data" >/dev/null
    done
    check "interleaved scan $scan restores the filter byte for byte" \
        same_dump primary big primary "restored$scan"
done
usage=$(p MEMORY USAGE big)
memory=$(info_field primary APBF.INFO big memory)
check "the scans' snapshot is released when both end ($usage vs $memory)" \
    [ "$usage" -lt $((memory + CHUNK)) ]

# A client that retries its last call (its scan already ended) is refused,
# and another scan of the same snapshot goes on: each scan's end removes
# only its own number.
f=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/F" 1)
g=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/G" 1)
check "each scan has its own number" \
    [ $((f >> OFFSET_BITS)) -ne $((g >> OFFSET_BITS)) ]
nf=1
while [ "$f" != 0 ]; do
    last_f=$f
    nf=$((nf + 1))
    f=$(scan_step primary APBF.SCANDUMP big "$f" "$WORK/F" $nf)
    [[ $f =~ ^[0-9]+$ ]] || break
done
expect "scan F ends" 0 "$f"
expect_match "F's retried last call is refused as stale" \
    '^ERR SCANDUMP iterator is stale' "$(p APBF.SCANDUMP big "$last_f")"
ng=1
while [ "$g" != 0 ]; do
    ng=$((ng + 1))
    g=$(scan_step primary APBF.SCANDUMP big "$g" "$WORK/G" $ng)
    [[ $g =~ ^[0-9]+$ ]] || break
done
expect "scan G ends despite F's retry" 0 "$g"
for i in $(seq 1 $((ng - 1))); do
    send primary APBF.LOADCHUNK restoredG "$(cat "$WORK/G/$i.iter")" \
        "$WORK/G/$i.data" >/dev/null
done
check "scan G restores the filter byte for byte" \
    same_dump primary big primary restoredG

# A write between two scans' iterator 0: the older scan is refused at its
# next iterator, at once; the newer one is the state after the write.
a=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/C" 1)
p APBF.ADD big after-the-write >/dev/null
dump_to primary big "$WORK/big.v2"
b=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/D" 1)
check "a scan after a write has a new number" \
    [ $((a >> OFFSET_BITS)) -ne $((b >> OFFSET_BITS)) ]
expect_match "the older scan is refused at its next iterator" \
    '^ERR SCANDUMP iterator is stale.*start again from 0' \
    "$(p APBF.SCANDUMP big "$a")"
nb=1
while [ "$b" != 0 ]; do
    nb=$((nb + 1))
    b=$(scan_step primary APBF.SCANDUMP big "$b" "$WORK/D" $nb)
    [[ $b =~ ^[0-9]+$ ]] || break
done
expect "the newer scan ends" 0 "$b"
expect_match "the older scan stays refused" '^ERR SCANDUMP iterator is stale' \
    "$(p APBF.SCANDUMP big "$a")"
for i in $(seq 1 $((nb - 1))); do
    send primary APBF.LOADCHUNK restoredD "$(cat "$WORK/D/$i.iter")" \
        "$WORK/D/$i.data" >/dev/null
done
dump_to primary restoredD "$WORK/restoredD.dump"
check "the newer scan restores the state after the write" \
    cmp -s "$WORK/big.v2" "$WORK/restoredD.dump"
check "which differs from the state before it" \
    bash -c "! cmp -s '$WORK/big.v1' '$WORK/restoredD.dump'"

# An iterator of the right scan but a wrong offset; one of no scan.
a=$(scan_step primary APBF.SCANDUMP big 0 "$WORK/E" 1)
e_iter=$a
expect_match "an offset past the end" '^ERR invalid SCANDUMP iterator' \
    "$(p APBF.SCANDUMP big $(((a >> OFFSET_BITS << OFFSET_BITS) + 999999999)))"
expect_match "an offset inside a chunk" '^ERR invalid SCANDUMP iterator' \
    "$(p APBF.SCANDUMP big $((a + 1)))"
expect_match "a plain offset is no scan's" '^ERR SCANDUMP iterator is stale' \
    "$(p APBF.SCANDUMP big $CHUNK)"

# LOADCHUNK takes plain offsets too (AOF rewrites, older backups).
for i in $(seq 1 "$chunks"); do
    send primary APBF.LOADCHUNK plain $(($(cat "$WORK/A/$i.iter") & OFFSET_MASK)) \
        "$WORK/A/$i.data" >/dev/null
done
check "LOADCHUNK with plain offsets restores the filter" \
    same_dump primary restoredA primary plain

# TLBF shares the code: two interleaved scans, each restored identical.
p TLBF.RESERVE tbig 600000 RATE 20000 >/dev/null
items_command TLBF.MADD tbig t: 0 20000 1000 | pipe_to primary
a=$(scan_step primary TLBF.SCANDUMP tbig 0 "$WORK/TA" 1)
b=$(scan_step primary TLBF.SCANDUMP tbig 0 "$WORK/TB" 1)
na=1
while [ "$a" != 0 ] && [[ $a =~ ^[0-9]+$ ]]; do
    na=$((na + 1))
    a=$(scan_step primary TLBF.SCANDUMP tbig "$a" "$WORK/TA" $na)
    b=$(scan_step primary TLBF.SCANDUMP tbig "$b" "$WORK/TB" $na)
done
expect "TLBF interleaved scans end together" "0 0" "$a $b"
for scan in TA TB; do
    for i in $(seq 1 $((na - 1))); do
        send primary TLBF.LOADCHUNK "restored$scan" "$(cat "$WORK/$scan/$i.iter")" \
            "$WORK/$scan/$i.data" >/dev/null
    done
    check "TLBF scan $scan restores the filter byte for byte" \
        same_dump primary tbig primary "restored$scan"
done

# ------------------------------------------------------------------------
# Headers that lie, chunks of the wrong length
# ------------------------------------------------------------------------

p APBF.RESERVE small 1000 >/dev/null
p APBF.ADD small x >/dev/null
one=$(scan_step primary APBF.SCANDUMP small 0 "$WORK/S" 1)
size=$(stat -c %s "$WORK/S/1.data")
# Scans of two keys, both running: neither key serves the other's iterator.
expect_match "another key's iterator is stale" '^ERR SCANDUMP iterator is stale' \
    "$(p APBF.SCANDUMP small "$e_iter")"
expect_match "and the other way round" '^ERR SCANDUMP iterator is stale' \
    "$(p APBF.SCANDUMP big "$one")"
check "a small filter is one chunk ($size bytes)" [ "$size" -lt $CHUNK ]

cp "$WORK/S/1.data" "$WORK/plus1"
set_total "$WORK/plus1" $((size + 1))
expect_match "a first chunk announcing one byte more is refused at once" \
    "^ERR APBF: LOADCHUNK chunk of $size bytes at offset 0" \
    "$(send primary APBF.LOADCHUNK lied "$one" "$WORK/plus1")"
expect "and leaves no key" 0 "$(p EXISTS lied)"

cp "$WORK/S/1.data" "$WORK/huge"
set_total "$WORK/huge" $((1 << 62))
expect_match "a first chunk announcing 2^62 bytes is refused at once" \
    '^ERR APBF: the first LOADCHUNK chunk announces 4611686018427387904 bytes' \
    "$(send primary APBF.LOADCHUNK lied "$one" "$WORK/huge")"
expect "and leaves no key" 0 "$(p EXISTS lied)"
cp "$WORK/A/1.data" "$WORK/huge1"
set_total "$WORK/huge1" $((1 << 62))
expect_match "a full first chunk announcing 2^62 bytes is refused at once" \
    '^ERR APBF: the first LOADCHUNK chunk announces' \
    "$(send primary APBF.LOADCHUNK lied "$(cat "$WORK/A/1.iter")" "$WORK/huge1")"
expect "and leaves no key" 0 "$(p EXISTS lied)"

# A multi-chunk snapshot whose header announces one byte more: every chunk
# but the last is accepted; the last is one byte short of the announced
# end, so the restore is dropped there, on the primary and the replica.
cp "$WORK/A/1.data" "$WORK/plus1big"
set_total "$WORK/plus1big" $(($(stat -c %s "$WORK/A/$chunks.data") + (chunks - 1) * CHUNK + 1))
send primary APBF.LOADCHUNK lied "$(cat "$WORK/A/1.iter")" "$WORK/plus1big" >/dev/null
for i in $(seq 2 $((chunks - 1))); do
    send primary APBF.LOADCHUNK lied "$(cat "$WORK/A/$i.iter")" "$WORK/A/$i.data" >/dev/null
done
synced
expect "the replica holds the restore in progress" 1 "$(q EXISTS lied)"
expect_match "the short last chunk drops the restore" \
    'LOADCHUNK chunk of .* the restore is abandoned and the key deleted' \
    "$(send primary APBF.LOADCHUNK lied "$(cat "$WORK/A/$chunks.iter")" \
        "$WORK/A/$chunks.data")"
synced
expect "no key on the primary" 0 "$(p EXISTS lied)"
expect "no key on the replica" 0 "$(q EXISTS lied)"

# A first chunk cut short, or two chunks sent as one: refused, no key.
head -c 1000 "$WORK/A/1.data" >"$WORK/short1"
expect_match "a short first chunk of a larger snapshot" \
    '^ERR APBF: LOADCHUNK chunk of 1000 bytes at offset 0' \
    "$(send primary APBF.LOADCHUNK cut 1000 "$WORK/short1")"
cat "$WORK/A/1.data" "$WORK/A/2.data" >"$WORK/double"
expect_match "a first chunk of two chunks' bytes" \
    "^ERR APBF: LOADCHUNK chunk of $((2 * CHUNK)) bytes at offset 0" \
    "$(send primary APBF.LOADCHUNK cut $((2 * CHUNK)) "$WORK/double")"
expect "no key left" 0 "$(p EXISTS cut)"

# Out of order: refused, nothing changes, the right chunk still goes in.
send primary APBF.LOADCHUNK order "$(cat "$WORK/A/1.iter")" "$WORK/A/1.data" >/dev/null
expect_match "a chunk out of order" '^ERR APBF: LOADCHUNK chunk out of order' \
    "$(send primary APBF.LOADCHUNK order "$(cat "$WORK/A/3.iter")" "$WORK/A/3.data")"
expect_match "the first chunk again is a restart" OK \
    "$(send primary APBF.LOADCHUNK order "$(cat "$WORK/A/1.iter")" "$WORK/A/1.data")"
# A later chunk of the wrong length, in place: the restore is dropped.
head -c $((CHUNK - 1)) "$WORK/A/2.data" >"$WORK/short2"
expect_match "a short middle chunk drops the restore" \
    "chunk of $((CHUNK - 1)) bytes at offset $CHUNK.*key deleted" \
    "$(send primary APBF.LOADCHUNK order $((2 * CHUNK - 1)) "$WORK/short2")"
expect "no key left" 0 "$(p EXISTS order)"

# ------------------------------------------------------------------------
# A failed verification on a primary with a replica
# ------------------------------------------------------------------------

cp "$WORK/A/$chunks.data" "$WORK/damaged"
flip_byte "$WORK/damaged" 100
for i in $(seq 1 $((chunks - 1))); do
    send primary APBF.LOADCHUNK damaged "$(cat "$WORK/A/$i.iter")" "$WORK/A/$i.data" >/dev/null
done
synced
expect "the replica has the restore in progress" 1 "$(q EXISTS damaged)"
expect_match "a last chunk that fails verification is refused" \
    '^ERR APBF: LOADCHUNK snapshot rejected: .*the key is deleted' \
    "$(send primary APBF.LOADCHUNK damaged "$(cat "$WORK/A/$chunks.iter")" "$WORK/damaged")"
synced
expect "no key on the primary" 0 "$(p EXISTS damaged)"
expect "no key on the replica" 0 "$(q EXISTS damaged)"
# A one-chunk snapshot that fails: nothing reaches the replica at all.
cp "$WORK/S/1.data" "$WORK/damaged-small"
flip_byte "$WORK/damaged-small" 50
expect_match "a one-chunk snapshot that fails" '^ERR APBF: LOADCHUNK snapshot rejected' \
    "$(send primary APBF.LOADCHUNK damaged "$one" "$WORK/damaged-small")"
synced
expect "no key on the primary" 0 "$(p EXISTS damaged)"
expect "no key on the replica" 0 "$(q EXISTS damaged)"
# And a good restore on top reaches the replica byte for byte.
for i in $(seq 1 "$chunks"); do
    send primary APBF.LOADCHUNK good "$(cat "$WORK/A/$i.iter")" "$WORK/A/$i.data" >/dev/null
done
synced
check "a restore reaches the replica byte for byte" \
    same_dump primary good replica good
expect "the replica holds the same keys" \
    "$(p KEYS '*' | sort | paste -sd ' ')" "$(q KEYS '*' | sort | paste -sd ' ')"
for key in $(p KEYS '*'); do
    check "$key identical on the replica" same_dump primary "$key" replica "$key"
done
expect "the replica sent its primary no error" 0 \
    "$(grep -c 'CRITICAL' "$WORK/replica/redis.log" || true)"
expect "the primary got no error from its replica" 0 \
    "$(grep -c 'CRITICAL' "$WORK/primary/redis.log" || true)"

# ------------------------------------------------------------------------
# A restore in progress across SAVE and a restart
# ------------------------------------------------------------------------

send primary APBF.LOADCHUNK partial "$(cat "$WORK/A/1.iter")" "$WORK/A/1.data" >/dev/null
send primary APBF.LOADCHUNK abandoned "$(cat "$WORK/A/1.iter")" "$WORK/A/1.data" >/dev/null
expect "SAVE" OK "$(p SAVE)"
stop_server primary
start_server primary --dbfilename dump.rdb || exit 1
expect "the restore in progress is back after a restart" 1 "$(p EXISTS partial)"
expect_match "and still answers as being restored" \
    '^ERR APBF: the filter is being restored by LOADCHUNK' \
    "$(p APBF.EXISTS partial x)"
for i in $(seq 2 "$chunks"); do
    send primary APBF.LOADCHUNK partial "$(cat "$WORK/A/$i.iter")" "$WORK/A/$i.data" >/dev/null
done
check "it completes into the original filter" \
    same_dump primary partial primary good
expect "DEL clears an abandoned restore" 1 "$(p DEL abandoned)"
expect "which leaves no key" 0 "$(p EXISTS abandoned)"

finish
