#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# commands.sh: every command of ebb.so, its replies and its errors, on one
# server: APBF.* and TLBF.*, NOCREATE, WRONGTYPE, argument errors, the
# sliding window and the time limit seen through the commands, COPY,
# MEMORY USAGE, DEL, command flags and key positions, and SCANDUMP /
# LOADCHUNK round trips of filters larger than one chunk.
#
#   bash commands.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

start_server main || exit 1
r() { rcli main "$@"; }

# expect_reply <description> <expected reply> <command...>
expect_reply() {
    local description=$1 expected=$2
    shift 2
    expect "$description" "$expected" "$(r "$@")"
}

# expect_error <description> <regex the error must match> <command...>
expect_error() {
    local description=$1 pattern=$2
    shift 2
    expect_match "$description" "$pattern" "$(r "$@")"
}

# lines <words...>: the words one per line (an array reply as printed).
lines() { printf '%s\n' "$@"; }

server_ms() {
    # %.0f: mawk's %d stops at 2^31.
    r TIME | awk 'NR == 1 { s = $1 } NR == 2 { printf "%.0f\n", s * 1000 + int($1 / 1000) }'
}

# ------------------------------------------------------------------------
# APBF.RESERVE
# ------------------------------------------------------------------------

expect_reply "RESERVE" OK APBF.RESERVE a 1000 ERROR 0.01
expect_error "RESERVE on an existing key" '^ERR key already exists' \
    APBF.RESERVE a 1000
expect_error "RESERVE window 0" '^ERR window must be an integer from 1' \
    APBF.RESERVE b 0
expect_error "RESERVE window not a number" '^ERR window must be an integer' \
    APBF.RESERVE b many
expect_error "RESERVE ERROR 0" '^ERR error rate must be a number between 0 and 1' \
    APBF.RESERVE b 1000 ERROR 0
expect_error "RESERVE ERROR 1" '^ERR error rate must be a number between 0 and 1' \
    APBF.RESERVE b 1000 ERROR 1
expect_error "RESERVE ERROR text" '^ERR error rate' APBF.RESERVE b 1000 ERROR x
# Numbers are decimals as typed: no hex float, inf, nan, spaces or "".
for bad in 0x0.1 inf nan " 0.01" "0.01 " "" 1e-3x; do
    expect_error "RESERVE ERROR '$bad'" '^ERR error rate must be a number' \
        APBF.RESERVE b 1000 ERROR "$bad"
done
expect_error "TLBF RATE 0x10" '^ERR RATE must be a number > 0' TLBF.RESERVE b 1000 RATE 0x10
expect_error "TLBF RATE 1e999 (infinite)" '^ERR RATE must be a number > 0' \
    TLBF.RESERVE b 1000 RATE 1e999
expect_reply "ERROR 1e-3 and MAXNPWS 1E-1 are decimals" OK \
    APBF.RESERVE decimal 1000 ERROR 1e-3 MAXNPWS 1E-1
expect_reply "ERROR .01 and RATE 100" OK TLBF.RESERVE decimal-t 1000 ERROR .01 RATE 100
expect_error "RESERVE MAXNPWS negative" '^ERR MAXNPWS must be a number >= 0' \
    APBF.RESERVE b 1000 MAXNPWS -1
expect_error "RESERVE ERROR without value" '^ERR wrong number of arguments' \
    APBF.RESERVE b 1000 ERROR
expect_error "RESERVE unknown option" "^ERR unknown option 'SIZE' for APBF.RESERVE" \
    APBF.RESERVE b 1000 SIZE 3
expect_error "RESERVE arity" '^ERR wrong number of arguments' APBF.RESERVE b
expect_error "RESERVE beyond the machine's memory" \
    '^ERR APBF: the filter needs [0-9.]+ [KMGTPE]B but .* leaves ' \
    APBF.RESERVE b 100000000000
expect_error "RESERVE MAXNPWS no shape meets" \
    '^ERR APBF: MAXNPWS 1e-07 is below 0.000977 \(1/1024\), the least slack' \
    APBF.RESERVE b 1000 MAXNPWS 0.0000001
expect "failed RESERVEs create nothing" 0 "$(r EXISTS b)"
expect_reply "RESERVE BLOCKED" OK APBF.RESERVE blocked 100000 ERROR 0.01 BLOCKED
expect "BLOCKED info" "1 512" \
    "$(info_field main APBF.INFO blocked blocked) $(info_field main APBF.INFO blocked block_bits)"
# Without MAXNPWS a BLOCKED key gets the library's blocked NPWS bound (without
# it this shape came out as k = l = 2, NPWS 0.53).
npws=$(info_field main APBF.INFO blocked npws)
check "BLOCKED default NPWS bound holds ($npws)" \
    in_range "$npws" 0 0.25
expect_reply "RESERVE MAXNPWS" OK APBF.RESERVE npws 100000 MAXNPWS 0.05
npws=$(info_field main APBF.INFO npws npws)
check "MAXNPWS bound holds ($npws)" in_range "$npws" 0 0.05
expect "TYPE of an APBF" ebb-apbf- "$(r TYPE a)"

# ------------------------------------------------------------------------
# APBF.ADD / MADD / INSERT / EXISTS / MEXISTS / INFO
# ------------------------------------------------------------------------

expect_reply "ADD new item" 1 APBF.ADD a x
expect_reply "ADD item again" 0 APBF.ADD a x
expect_reply "ADD NOCREATE on existing key" 1 APBF.ADD a y NOCREATE
expect_reply "ADD nocreate lower case" 0 APBF.ADD a y nocreate
expect_error "ADD NOCREATE on missing key" '^ERR no such key' \
    APBF.ADD missing x NOCREATE
expect "NOCREATE created nothing" 0 "$(r EXISTS missing)"
expect_error "ADD unknown 4th argument" "^ERR unknown option 'NOW' for APBF.ADD" \
    APBF.ADD a x NOW
expect_error "ADD arity" '^ERR wrong number of arguments' APBF.ADD a
expect_reply "MADD: new, new, repeated in the batch, seen" "$(lines 1 1 0 0)" \
    APBF.MADD a p q p x
expect_error "MADD arity" '^ERR wrong number of arguments' APBF.MADD a
expect_reply "EXISTS present" 1 APBF.EXISTS a p
expect_reply "EXISTS absent" 0 APBF.EXISTS a never-added
expect_reply "EXISTS on a missing key" 0 APBF.EXISTS missing x
expect_reply "MEXISTS" "$(lines 1 0 1)" APBF.MEXISTS a x never-added q
expect_reply "MEXISTS on a missing key" "$(lines 0 0)" APBF.MEXISTS missing x y
expect_error "EXISTS arity" '^ERR wrong number of arguments' APBF.EXISTS a
expect_error "MEXISTS arity" '^ERR wrong number of arguments' APBF.MEXISTS a
expect_reply "empty item" 1 APBF.ADD a ""
expect_reply "empty item present" 1 APBF.EXISTS a ""

# ADD on a missing key creates it with the documented defaults.
expect_reply "ADD creates a key" 1 APBF.ADD created x
expect "default window" 1000000 \
    "$(info_field main APBF.INFO created window | awk '{ print ($1 >= 1000000 && $1 < 1001000) ? 1000000 : $1 }')"
fp=$(info_field main APBF.INFO created fp)
check "default error rate ($fp)" in_range "$fp" 0.005 0.01
expect "default is plain" 0 "$(info_field main APBF.INFO created blocked)"
expect_reply "MADD creates a key" "$(lines 1 1)" APBF.MADD created2 x y

expect_reply "INSERT creates with options" "$(lines 1 1 0)" \
    APBF.INSERT ins WINDOW 5000 ERROR 0.001 BLOCKED ITEMS a b a
expect "INSERT window" 1 \
    "$(info_field main APBF.INFO ins window | awk '{ print ($1 >= 5000 && $1 < 5100) }')"
expect "INSERT blocked" 1 "$(info_field main APBF.INFO ins blocked)"
expect_reply "INSERT options ignored on an existing key" "$(lines 0 1)" \
    APBF.INSERT ins WINDOW 9 ITEMS a c
expect_error "INSERT NOCREATE on missing key" '^ERR no such key' \
    APBF.INSERT missing NOCREATE ITEMS a
expect "INSERT NOCREATE created nothing" 0 "$(r EXISTS missing)"
expect_reply "INSERT NOCREATE on existing key" "$(lines 1)" \
    APBF.INSERT ins NOCREATE ITEMS d
expect_error "INSERT without ITEMS" '^ERR APBF.INSERT needs ITEMS' \
    APBF.INSERT ins NOCREATE WINDOW 10
expect_error "INSERT with no item after ITEMS" '^ERR APBF.INSERT needs ITEMS' \
    APBF.INSERT ins NOCREATE ITEMS
expect_error "INSERT unknown option" "^ERR unknown option 'CAPACITY' for APBF.INSERT" \
    APBF.INSERT ins CAPACITY 10 ITEMS a
expect_error "INSERT bad ERROR" '^ERR error rate' APBF.INSERT new2 ERROR 2 ITEMS a
expect_error "RESERVE MAXACCESSES negative" '^ERR MAXACCESSES' \
    APBF.RESERVE bad-accesses 1000 MAXACCESSES -1
expect_error "RESERVE MAXACCESSES unreachable" \
    '^ERR APBF: MAXACCESSES 0.5 is below 1: a query reads at least one slice' \
    APBF.RESERVE bad-accesses 1000000 MAXACCESSES 0.5
expect_error "MAXACCESSES that ERROR rules out names both and the bound" \
    '^ERR APBF: MAXACCESSES 1.01 cannot be met with ERROR 0.01: the fewest expected reads of a query answering false is 1.02' \
    APBF.RESERVE bad-accesses 1000 ERROR 0.01 MAXACCESSES 1.01
expect_error "MAXNPWS that ERROR rules out" \
    '^ERR APBF: MAXNPWS 0.001 cannot be met with ERROR 0.01: the least NPWS of a filter with that error rate is 0.00195' \
    APBF.RESERVE bad-npws 1000 ERROR 0.01 MAXNPWS 0.001
expect_error "ERROR below every shape" \
    '^ERR APBF: ERROR 1e-300 is below the lowest false-positive rate a filter reaches \(1.95e-40, with 64 slices' \
    APBF.RESERVE bad-fp 1000 ERROR 1e-300
expect_error "TLBF names MAXNPWS, never a window" \
    '^ERR TLBF: MAXNPWS 1e-07 is below 0.000977' TLBF.RESERVE bad-npws 1000 MAXNPWS 0.0000001
expect_error "TLBF too large speaks of the span" \
    '^ERR TLBF: the filter would be too large to allocate \(lower the span or RATE' \
    TLBF.RESERVE bad-rate 1000 RATE 1e300
expect "the refused RESERVEs created nothing" 0 "$(r EXISTS bad-accesses bad-npws bad-fp)"
expect_reply "RESERVE MAXACCESSES 2.5" OK APBF.RESERVE few-reads 1000000 MAXACCESSES 2.5
expect_reply "RESERVE MAXACCESSES 0: no bound, least memory" OK \
    APBF.RESERVE least-memory 1000000 MAXACCESSES 0
least_l=$(info_field main APBF.INFO least-memory l)
bounded_l=$(info_field main APBF.INFO few-reads l)
check "the unbounded shape has the longer walk (l $least_l > $bounded_l)" \
    [ "$least_l" -gt "$bounded_l" ]

info=$(r APBF.INFO a | paste -sd ' ')
for field in window k l slice_bits generation fp npws blocked block_bits \
    block_hashes memory insertions generations in_generation current_slack; do
    expect_match "INFO has $field" "(^| )$field [0-9.e-]+( |$)" "$info"
done
expect "INFO insertions" 9 "$(info_field main APBF.INFO a insertions)"
expect_error "INFO on a missing key" '^ERR no such key' APBF.INFO missing

# LAYOUT SLICED: the bit-sliced layout, chosen in cells of 16 to 128 bits
# (fp 0.157 at 10^6: (5, 10), 16 planes in 16-bit cells, no padding).
expect_reply "RESERVE LAYOUT SLICED" OK \
    APBF.RESERVE sliced 1000000 ERROR 0.157 LAYOUT SLICED
expect "INFO layout, cell bits, padding, shape" "sliced 16 0 5 10" \
    "$(info_field main APBF.INFO sliced layout) $(info_field main APBF.INFO sliced cell_bits) $(info_field main APBF.INFO sliced padding_bytes) $(info_field main APBF.INFO sliced k) $(info_field main APBF.INFO sliced l)"
# The default layout (ebb_apbf_preferred_layout against the ring of at most
# 4 reads such a key would be): a ring at a window of 1000, where 128-bit
# cells cost twice the memory; bit-sliced at 10^6 and 1%, (13, 114) in
# 2.64 MB against the ring's (9, 13) in 2.75 MB; a ring again for a key
# reserved with MAXNPWS or MAXACCESSES.
expect "a default key of window 1000 is a ring" "ring 0 0" \
    "$(info_field main APBF.INFO a layout) $(info_field main APBF.INFO a cell_bits) $(info_field main APBF.INFO a padding_bytes)"
expect_reply "ADD creates a default key" 1 APBF.ADD default-1e6 x
expect "a default key at 10^6 and 1% is sliced (13, 114), 128-bit cells" "sliced 128 13 114" \
    "$(info_field main APBF.INFO default-1e6 layout) $(info_field main APBF.INFO default-1e6 cell_bits) $(info_field main APBF.INFO default-1e6 k) $(info_field main APBF.INFO default-1e6 l)"
expect_reply "RESERVE MAXNPWS" OK APBF.RESERVE npws-1e6 1000000 ERROR 0.01 MAXNPWS 0.5
expect "MAXNPWS keeps a ring" ring "$(info_field main APBF.INFO npws-1e6 layout)"
expect_reply "RESERVE MAXACCESSES" OK APBF.RESERVE acc-1e6 1000000 ERROR 0.01 MAXACCESSES 20
expect "MAXACCESSES keeps a ring" ring "$(info_field main APBF.INFO acc-1e6 layout)"
expect_reply "RESERVE 1e-5" OK APBF.RESERVE fp5-1e6 1000000 ERROR 0.00001
expect "at 10^-5 sliced (23, 104) beats the 4-read ring's 5.86 MB" "sliced 23 104" \
    "$(info_field main APBF.INFO fp5-1e6 layout) $(info_field main APBF.INFO fp5-1e6 k) $(info_field main APBF.INFO fp5-1e6 l)"
expect_reply "sliced MADD: new, new, repeated in the batch, seen" \
    "$(lines 1 1 0 0)" APBF.MADD sliced p q p q
expect_reply "sliced MEXISTS" "$(lines 1 0 1)" APBF.MEXISTS sliced p never q
expect_reply "lower-case layout, 1% (no default access bound)" OK \
    APBF.RESERVE sliced-1pct 1000000 ERROR 0.01 layout sliced
fp=$(info_field main APBF.INFO sliced-1pct fp)
check "sliced 1% meets its rate ($fp)" in_range "$fp" 0 0.01
expect_reply "SHAPE with LAYOUT SLICED (17 planes: CELLBITS 32)" OK \
    APBF.RESERVE sliced-shape 1000000 SHAPE 8 8 1442696 LAYOUT SLICED
expect "SHAPE LAYOUT SLICED pads 15 bits a cell" \
    "32 $(( (1442696 * 15 + 7) / 8 ))" \
    "$(info_field main APBF.INFO sliced-shape cell_bits) $(info_field main APBF.INFO sliced-shape padding_bytes)"
expect_reply "SHAPE with CELLBITS 64" OK \
    APBF.RESERVE sliced-64 1000000 SHAPE 8 8 1442696 LAYOUT SLICED CELLBITS 64
expect "CELLBITS 64 kept" 64 "$(info_field main APBF.INFO sliced-64 cell_bits)"
expect_reply "INSERT LAYOUT SLICED" "$(lines 1 0)" \
    APBF.INSERT sliced-ins WINDOW 5000 LAYOUT SLICED ITEMS a a
expect "INSERT layout" sliced "$(info_field main APBF.INFO sliced-ins layout)"
expect_error "LAYOUT SLICED with BLOCKED" \
    '^ERR APBF: LAYOUT SLICED cannot be combined with BLOCKED' \
    APBF.RESERVE b 1000 LAYOUT SLICED BLOCKED
expect_error "LAYOUT SLICED with BLOCKS" \
    '^ERR APBF: LAYOUT SLICED cannot be combined with BLOCKS' \
    APBF.RESERVE b 1000 SHAPE 2 5 2048 BLOCKS 512 4 LAYOUT SLICED
expect_error "an unknown LAYOUT" '^ERR APBF: LAYOUT must be RING or SLICED' \
    APBF.RESERVE b 1000 LAYOUT BITS
expect_error "CELLBITS without SHAPE" '^ERR APBF: CELLBITS needs SHAPE' \
    APBF.RESERVE b 1000 LAYOUT SLICED CELLBITS 32
expect_error "CELLBITS with a ring" '^ERR APBF: CELLBITS needs LAYOUT SLICED' \
    APBF.RESERVE b 1000000 SHAPE 8 8 1442696 CELLBITS 32
expect_error "CELLBITS below k + l + 1" '^ERR APBF: SHAPE 8 8 1442696 LAYOUT SLICED .. is not a valid shape' \
    APBF.RESERVE b 1000000 SHAPE 8 8 1442696 LAYOUT SLICED CELLBITS 16
expect_error "more than 128 planes" '^ERR APBF: LAYOUT SLICED needs k \+ l \+ 1 <= 128' \
    APBF.RESERVE b 1000000 SHAPE 64 64 100000000 LAYOUT SLICED
expect_error "a sliced goal no shape meets" \
    '^ERR APBF: no shape of the sliced layout \(k \+ l \+ 1 <= 128\) meets ERROR' \
    APBF.RESERVE b 1000 ERROR 0.01 MAXNPWS 0.005 LAYOUT SLICED
expect "the refused sliced RESERVEs created nothing" 0 "$(r EXISTS b)"
expect_error "INFO arity" '^ERR wrong number of arguments' APBF.INFO a b

# The window slides: of 1000 items followed by 20 windows of others, about
# fp of them are still reported (worst-case rate 0.01: expect <= 10, bound
# 10 + 3 sd = 10 + 3 sqrt(1000 * 0.01 * 0.99) < 20); the last window is
# reported in full (no false negatives).
r APBF.RESERVE slide 1000 ERROR 0.01 >/dev/null
items_command APBF.MADD slide old: 0 1000 500 | pipe_to main
items_command APBF.MADD slide new: 0 20000 1000 | pipe_to main
stale=$(answers main APBF.MEXISTS slide old: 0 1000 | count_ones)
check "expired items reported at the fp rate ($stale of 1000)" [ "$stale" -le 20 ]
recent=$(answers main APBF.MEXISTS slide new: 19000 20000 | count_ones)
expect "the last window is all present" 1000 "$recent"

# ------------------------------------------------------------------------
# TLBF
# ------------------------------------------------------------------------

expect_reply "TLBF RESERVE" OK TLBF.RESERVE t 60000 ERROR 0.01 RATE 100 \
    MAXMEMORY 1000000 POLICY refuse
expect_error "TLBF RESERVE existing" '^ERR key already exists' TLBF.RESERVE t 1000
expect_error "TLBF RESERVE span 0" '^ERR span must be an integer from 1' \
    TLBF.RESERVE u 0
expect_error "TLBF RESERVE bad ERROR" '^ERR error rate' TLBF.RESERVE u 1000 ERROR 1.5
expect_error "TLBF RESERVE RATE 0" '^ERR RATE must be a number > 0' \
    TLBF.RESERVE u 1000 RATE 0
expect_error "TLBF RESERVE bad POLICY" '^ERR POLICY must be REFUSE or EVICT' \
    TLBF.RESERVE u 1000 POLICY drop
expect_error "TLBF RESERVE MAXMEMORY 0" '^ERR MAXMEMORY must be an integer from 1' \
    TLBF.RESERVE u 1000 MAXMEMORY 0
expect_error "TLBF RESERVE MAXMEMORY beyond the machine" \
    '^ERR TLBF: MAXMEMORY 9000000000000000000 \(.*\) is more than ' \
    TLBF.RESERVE u 1000 MAXMEMORY 9000000000000000000
expect_error "TLBF RESERVE MAXMEMORY too small" '^ERR TLBF: MAXMEMORY is too small' \
    TLBF.RESERVE u 60000 MAXMEMORY 100
expect_error "TLBF RESERVE unknown option" "^ERR unknown option 'SPAN' for TLBF.RESERVE" \
    TLBF.RESERVE u 1000 SPAN 5
expect_error "TLBF RESERVE arity" '^ERR wrong number of arguments' TLBF.RESERVE u
expect "failed TLBF RESERVEs create nothing" 0 "$(r EXISTS u)"
expect "TYPE of a TLBF" ebb-tlbf- "$(r TYPE t)"
expect "RESERVE options in INFO" "60000 refuse 1000000" \
    "$(info_field main TLBF.INFO t span_ms) $(info_field main TLBF.INFO t policy) $(info_field main TLBF.INFO t max_memory)"

expect_reply "TLBF ADD new" 1 TLBF.ADD t x
expect_reply "TLBF ADD again" 0 TLBF.ADD t x
expect_reply "TLBF ADD NOCREATE existing" 1 TLBF.ADD t y NOCREATE
expect_error "TLBF ADD NOCREATE missing" '^ERR no such key' TLBF.ADD missing x NOCREATE
expect "TLBF NOCREATE created nothing" 0 "$(r EXISTS missing)"
expect_error "TLBF ADD bad 4th argument" "^ERR unknown option 'X' for TLBF.ADD" \
    TLBF.ADD t x X
expect_reply "TLBF MADD" "$(lines 1 0 1 0)" TLBF.MADD t p x q p
expect_reply "TLBF EXISTS present" 1 TLBF.EXISTS t p
expect_reply "TLBF EXISTS absent" 0 TLBF.EXISTS t never-added
expect_reply "TLBF EXISTS missing key" 0 TLBF.EXISTS missing x
expect_reply "TLBF MEXISTS" "$(lines 1 0 1)" TLBF.MEXISTS t x never-added q
expect_reply "TLBF MEXISTS missing key" "$(lines 0)" TLBF.MEXISTS missing x
now=$(server_ms)
expect_reply "TLBF ADDAT" "$(lines 1 0)" TLBF.ADDAT t "$now" z x
expect_error "TLBF ADDAT negative time" '^ERR time \(ms\) must be an integer from 0' \
    TLBF.ADDAT t -1 z
expect_error "TLBF ADDAT time not a number" '^ERR time \(ms\) must be an integer' \
    TLBF.ADDAT t soon z
expect_error "TLBF ADDAT arity" '^ERR wrong number of arguments' TLBF.ADDAT t "$now"
expect_error "TLBF ADD arity" '^ERR wrong number of arguments' TLBF.ADD t
expect_error "TLBF MADD arity" '^ERR wrong number of arguments' TLBF.MADD t
expect_reply "TLBF ADD creates a key" 1 TLBF.ADD tcreated x
expect "TLBF default span, policy, limit" "60000 refuse 67108864" \
    "$(info_field main TLBF.INFO tcreated span_ms) $(info_field main TLBF.INFO tcreated policy) $(info_field main TLBF.INFO tcreated max_memory)"
expect_reply "TLBF ADDAT creates a key" "$(lines 1)" TLBF.ADDAT tcreated2 "$now" x
expect_reply "TLBF INSERT creates with options" "$(lines 1 1)" \
    TLBF.INSERT tins SPAN 5000 RATE 10 POLICY evict MAXMEMORY 500000 ITEMS a b
expect "TLBF INSERT options" "5000 evict 500000" \
    "$(info_field main TLBF.INFO tins span_ms) $(info_field main TLBF.INFO tins policy) $(info_field main TLBF.INFO tins max_memory)"
expect_error "TLBF INSERT NOCREATE missing" '^ERR no such key' \
    TLBF.INSERT missing NOCREATE ITEMS a
expect_error "TLBF INSERT without items" '^ERR TLBF.INSERT needs ITEMS' \
    TLBF.INSERT tins NOCREATE ITEMS
expect_error "TLBF INSERT unknown option" "^ERR unknown option 'WINDOW' for TLBF.INSERT" \
    TLBF.INSERT tins WINDOW 5 ITEMS a
info=$(r TLBF.INFO t | paste -sd ' ')
for field in span_ms k l fp current_fp policy max_memory memory slices \
    live_slices newest_slice_bits insertions items_in_span shifts \
    evicted_slices refused clamped resets latest_ms; do
    expect_match "TLBF INFO has $field" "(^| )$field [a-z0-9.e-]+( |$)" "$info"
done
expect "TLBF INFO insertions" 9 "$(info_field main TLBF.INFO t insertions)"
expect "TLBF INFO latest_ms" "$now" "$(info_field main TLBF.INFO t latest_ms)"
expect_error "TLBF INFO missing" '^ERR no such key' TLBF.INFO missing

# Time: an insertion older than the span is not reported; a timestamp
# earlier than the latest is clamped and counted; real time expires items.
r TLBF.RESERVE timed 1000 >/dev/null
now=$(server_ms)
r TLBF.ADDAT timed $((now - 10000)) long-ago >/dev/null
expect_reply "an item older than the span is absent" 0 TLBF.EXISTS timed long-ago
r TLBF.ADDAT timed "$now" fresh >/dev/null
r TLBF.ADDAT timed $((now - 500)) late >/dev/null
expect "a timestamp before the latest is clamped" 1 \
    "$(info_field main TLBF.INFO timed clamped)"
expect_reply "fresh and clamped items present" "$(lines 1 1)" \
    TLBF.MEXISTS timed fresh late
r TLBF.RESERVE short 300 >/dev/null
r TLBF.ADD short soon-gone >/dev/null
expect_reply "present within the span" 1 TLBF.EXISTS short soon-gone
sleep 0.7
expect_reply "absent after the span (server clock)" 0 TLBF.EXISTS short soon-gone

# MAXMEMORY: REFUSE answers an error per refused item and counts it; EVICT
# drops old slices instead. 20000 items at fp 0.01 need about 50 kB: the
# 40 kB limit must refuse some of them.
r TLBF.RESERVE small 60000 RATE 1 MAXMEMORY 40000 POLICY refuse >/dev/null
refusals=0
for batch in 1 2 3 4; do
    out=$(r TLBF.MADD small $(seq -f "b$batch-%g" 1 5000))
    refusals=$((refusals + $(grep -c 'MAXMEMORY limit: item not added' <<<"$out")))
done
check "REFUSE refuses items ($refusals)" [ "$refusals" -gt 0 ]
expect "REFUSE counts them" "$refusals" "$(info_field main TLBF.INFO small refused)"
mem=$(info_field main TLBF.INFO small memory)
check "memory within MAXMEMORY ($mem)" [ "$mem" -le 40000 ]
out=$(r TLBF.ADDAT small "$(server_ms)" $(seq -f "at-%g" 1 500))
check "ADDAT answers refusals with errors" \
    grep -q '^ERR TLBF: the filter is at its MAXMEMORY limit: item not added$' <<<"$out"
r DEL small >/dev/null
r SET plain-string 1 >/dev/null
r TLBF.RESERVE small 60000 RATE 1 MAXMEMORY 40000 POLICY refuse >/dev/null
first_refusal=$(seq -f 'TLBF.ADD small s%g' 1 20000 | r | grep -m 1 MAXMEMORY)
expect_match "single ADD refused" \
    '^ERR TLBF: the filter is at its MAXMEMORY limit: item not added$' \
    "$first_refusal"
# 40 batches of 500 items, one second apart (ADDAT), into 50 kB: a steady
# span of them needs about 70 kB, so old slices must be evicted.
r TLBF.RESERVE evicting 60000 RATE 17 MAXMEMORY 50000 POLICY evict >/dev/null
now=$(server_ms)
awk -v t0="$((now - 40000))" 'BEGIN {
    for (b = 0; b < 40; b++) {
        printf "TLBF.ADDAT evicting %.0f", t0 + 1000 * b
        for (i = 0; i < 500; i++) printf " e%d-%d", b, i
        printf "\n"
    }
}' | r >"$WORK/evict.replies"
# Every item is taken (1, or 0 for the rare false positive: already
# "present"); none is refused.
expect "EVICT answers no item with an error" 0 \
    "$(grep -c '^ERR' "$WORK/evict.replies" || true)"
ones=$(count_ones <"$WORK/evict.replies")
check "EVICT: at most 1% of 20000 new items look present ($((20000 - ones)))" \
    [ "$ones" -ge 19800 ]
evicted=$(info_field main TLBF.INFO evicting evicted_slices)
check "EVICT evicts slices ($evicted)" [ "$evicted" -gt 0 ]
expect "EVICT refuses nothing" 0 "$(info_field main TLBF.INFO evicting refused)"
mem=$(info_field main TLBF.INFO evicting memory)
check "EVICT memory within MAXMEMORY ($mem)" [ "$mem" -le 50000 ]

# ------------------------------------------------------------------------
# Types
# ------------------------------------------------------------------------

r SET s 1 >/dev/null
wrongtype='^WRONGTYPE Operation against a key holding the wrong kind of value'
for command in "APBF.RESERVE s 10" "APBF.ADD s x" "APBF.MADD s x" \
    "APBF.INSERT s ITEMS x" "APBF.EXISTS s x" "APBF.MEXISTS s x" \
    "APBF.INFO s" "APBF.SCANDUMP s 0" "APBF.LOADCHUNK s 40 xxxx" \
    "TLBF.RESERVE s 10" "TLBF.ADD s x" "TLBF.MADD s x" "TLBF.ADDAT s 1 x" \
    "TLBF.INSERT s ITEMS x" "TLBF.EXISTS s x" "TLBF.MEXISTS s x" \
    "TLBF.INFO s" "TLBF.SCANDUMP s 0" "TLBF.LOADCHUNK s 40 xxxx"; do
    # shellcheck disable=SC2086
    expect_error "WRONGTYPE: $command on a string" "$wrongtype" $command
done
expect_error "TLBF command on an APBF" "$wrongtype" TLBF.ADD a x
expect_error "APBF command on a TLBF" "$wrongtype" APBF.EXISTS t x
expect_error "GET on an APBF" "$wrongtype" GET a
expect "the string is untouched" 1 "$(r GET s)"

# ------------------------------------------------------------------------
# COPY, MEMORY USAGE, DEL
# ------------------------------------------------------------------------

r APBF.RESERVE big 1000000 >/dev/null
items_command APBF.MADD big i: 0 20000 1000 | pipe_to main
expect_reply "COPY" 1 COPY big big-copy
dump_to main big "$WORK/big.dump"
dump_to main big-copy "$WORK/big-copy.dump"
check "COPY is byte-identical (DUMP)" cmp -s "$WORK/big.dump" "$WORK/big-copy.dump"
expect "COPY answers like the original" \
    "$(answers main APBF.MEXISTS big i: 19000 21000 | md5sum)" \
    "$(answers main APBF.MEXISTS big-copy i: 19000 21000 | md5sum)"
r APBF.ADD big-copy only-in-copy >/dev/null
expect_reply "the copy is independent" 0 APBF.EXISTS big only-in-copy
r TLBF.ADD tcopy-src x >/dev/null
expect_reply "COPY a TLBF" 1 COPY tcopy-src tcopy
expect_reply "the TLBF copy answers" 1 TLBF.EXISTS tcopy x

memory=$(info_field main APBF.INFO big memory)
usage=$(r MEMORY USAGE big)
# MEMORY USAGE counts the allocator's size classes (at most 25% above a
# request; tests/redis/limits.sh compares it with used_memory's growth).
check "MEMORY USAGE ($usage) close to the filter's memory ($memory)" \
    awk -v u="$usage" -v m="$memory" 'BEGIN { exit !(u >= m && u <= m * 1.25 + 4096) }'
memory=$(info_field main TLBF.INFO t memory)
usage=$(r MEMORY USAGE t)
check "TLBF MEMORY USAGE ($usage) close to the filter's memory ($memory)" \
    awk -v u="$usage" -v m="$memory" 'BEGIN { exit !(u >= m && u <= m * 1.25 + 4096) }'
expect_reply "DEL" 1 DEL big-copy

# ------------------------------------------------------------------------
# Command table: flags and key positions (what Redis Cluster routes by)
# ------------------------------------------------------------------------

for command in APBF.RESERVE APBF.ADD APBF.MADD APBF.INSERT APBF.LOADCHUNK \
    TLBF.RESERVE TLBF.ADD TLBF.MADD TLBF.ADDAT TLBF.INSERT TLBF.LOADCHUNK; do
    info=$(r COMMAND INFO "$command" | paste -sd ' ')
    expect_match "$command is write deny-oom, key at 1" \
        "^$command -?[0-9]+ write denyoom module( fast)? 1 1 1 " "$info"
done
for command in APBF.EXISTS APBF.MEXISTS APBF.INFO TLBF.EXISTS TLBF.MEXISTS \
    TLBF.INFO; do
    info=$(r COMMAND INFO "$command" | paste -sd ' ')
    expect_match "$command is readonly fast, key at 1" \
        "^$command -?[0-9]+ readonly module fast 1 1 1 " "$info"
done
expect "COMMAND GETKEYS" mykey "$(r COMMAND GETKEYS TLBF.ADDAT mykey 5 item)"

# ------------------------------------------------------------------------
# SCANDUMP / LOADCHUNK
# ------------------------------------------------------------------------

chunks=$(scandump main APBF.SCANDUMP big "$WORK/scan")
check "a 1e6 window takes several 1 MiB chunks ($chunks)" [ "${chunks:-0}" -ge 2 ]
size=$(cat "$WORK"/scan/*.data | wc -c)
# The last iterator's low 44 bits: where the last chunk ends.
expect "chunks add up to the snapshot" \
    $(($(tail -n 1 "$WORK/scan/$chunks.iter") & ((1 << 44) - 1))) "$size"
expect "LOADCHUNK replies" "$(yes OK | head -n "$chunks")" \
    "$(loadchunks main APBF.LOADCHUNK big-restored "$WORK/scan" 1 "$chunks")"
dump_to main big-restored "$WORK/big-restored.dump"
check "LOADCHUNK rebuilds the filter byte for byte" \
    cmp -s "$WORK/big.dump" "$WORK/big-restored.dump"
expect "restored answers equal the original's" \
    "$(answers main APBF.MEXISTS big i: 10000 30000 | md5sum)" \
    "$(answers main APBF.MEXISTS big-restored i: 10000 30000 | md5sum)"
expect_match "LOADCHUNK onto an existing filter" '^ERR APBF: the key already holds a filter' \
    "$(loadchunk_file main APBF.LOADCHUNK big-restored "$WORK/scan" 1)"

# A restore in progress answers nothing and refuses chunks out of order.
loadchunks main APBF.LOADCHUNK partial "$WORK/scan" 1 >/dev/null
expect_error "EXISTS during a restore" '^ERR APBF: the filter is being restored by LOADCHUNK' \
    APBF.EXISTS partial x
expect_error "ADD during a restore" '^ERR APBF: the filter is being restored' \
    APBF.ADD partial x
expect_error "INFO during a restore" '^ERR APBF: the filter is being restored' \
    APBF.INFO partial
usage=$(r MEMORY USAGE partial)
check "MEMORY USAGE counts the bytes received ($usage)" [ "$usage" -ge 1048576 ]
# A restore in progress persists (RDB kind 1) and continues after it.
dump_to main partial "$WORK/partial.dump"
expect "RESTORE a restore in progress" OK \
    "$(redis-cli -p "${SERVER_PORT[main]}" -x RESTORE partial-moved 0 <"$WORK/partial.dump")"
expect_reply "COPY a restore in progress" 1 COPY partial partial-copied
for key in partial-moved partial-copied; do
    loadchunks main APBF.LOADCHUNK "$key" "$WORK/scan" 2 "$chunks" >/dev/null
    dump_to main "$key" "$WORK/$key.dump"
    check "$key completes into the original filter" \
        cmp -s "$WORK/big.dump" "$WORK/$key.dump"
done
if [ "$chunks" -ge 3 ]; then
    expect_match "LOADCHUNK out of order" '^ERR APBF: LOADCHUNK chunk out of order' \
        "$(loadchunk_file main APBF.LOADCHUNK partial "$WORK/scan" 3)"
fi
# A damaged chunk: the checksum refuses the whole snapshot at the end and
# the key is removed.
cp "$WORK/scan/2.data" "$WORK/scan/2.good"
printf '\xff' | dd of="$WORK/scan/2.data" bs=1 seek=1000 conv=notrunc 2>/dev/null
# (if that byte was 0xff already, write 0x00 instead)
cmp -s "$WORK/scan/2.data" "$WORK/scan/2.good" &&
    printf '\x00' | dd of="$WORK/scan/2.data" bs=1 seek=1000 conv=notrunc 2>/dev/null
last=$(loadchunks main APBF.LOADCHUNK damaged "$WORK/scan" 1 "$chunks" | grep -v '^$' | tail -n 1)
expect_match "a damaged chunk is refused" '^ERR APBF: LOADCHUNK snapshot rejected' "$last"
expect "the damaged restore leaves no key" 0 "$(r EXISTS damaged)"
mv "$WORK/scan/2.good" "$WORK/scan/2.data"
expect_error "LOADCHUNK garbage first chunk" '^ERR APBF: the first LOADCHUNK chunk is not' \
    APBF.LOADCHUNK junk 64 "$(head -c 64 /dev/zero | tr '\0' 'x')"
expect_error "LOADCHUNK bad iterator" '^ERR invalid LOADCHUNK iterator' \
    APBF.LOADCHUNK junk 3 abcdef
expect_error "LOADCHUNK iterator 0" '^ERR iterator must be an integer from 1' \
    APBF.LOADCHUNK junk 0 abcdef
expect_error "LOADCHUNK arity" '^ERR wrong number of arguments' APBF.LOADCHUNK junk 5
expect_error "SCANDUMP missing key" '^ERR no such key' APBF.SCANDUMP missing 0
expect_error "SCANDUMP bad iterator" '^ERR iterator must be an integer' \
    APBF.SCANDUMP big -1
# An iterator carries its scan's number above bit 44 (tests/redis/chunks.sh).
scan_iter=$(r --raw APBF.SCANDUMP big 0 | head -n 1)
expect_error "SCANDUMP iterator past the end" '^ERR invalid SCANDUMP iterator' \
    APBF.SCANDUMP big $(((scan_iter >> 44 << 44) + 999999999))
r APBF.ADD big a-write >/dev/null
expect_error "SCANDUMP iterator stale after a write" '^ERR SCANDUMP iterator is stale' \
    APBF.SCANDUMP big "$scan_iter"

# TLBF round trip.
items_command TLBF.MADD tbig t: 0 50000 1000 | pipe_to main
tchunks=$(scandump main TLBF.SCANDUMP tbig "$WORK/tscan")
check "TLBF SCANDUMP chunks ($tchunks)" [ "${tchunks:-0}" -ge 1 ]
loadchunks main TLBF.LOADCHUNK tbig-restored "$WORK/tscan" 1 "$tchunks" >/dev/null
dump_to main tbig "$WORK/tbig.dump"
dump_to main tbig-restored "$WORK/tbig-restored.dump"
check "TLBF LOADCHUNK rebuilds the filter byte for byte" \
    cmp -s "$WORK/tbig.dump" "$WORK/tbig-restored.dump"
small_chunks=$(scandump main TLBF.SCANDUMP t "$WORK/small-scan")
expect "a small TLBF is one chunk" 1 "$small_chunks"
expect_match "APBF.LOADCHUNK of a TLBF snapshot" \
    '^ERR APBF: LOADCHUNK snapshot rejected: .*famil' \
    "$(loadchunk_file main APBF.LOADCHUNK cross "$WORK/small-scan" 1)"
expect "the refused restore leaves no key" 0 "$(r EXISTS cross)"

# Everything above through a save and a load (DEBUG RELOAD), including the
# restore in progress.
for key in big tbig t; do dump_to main "$key" "$WORK/$key.before-reload"; done
expect "DEBUG RELOAD" OK "$(r DEBUG RELOAD)"
for key in big tbig t; do
    dump_to main "$key" "$WORK/$key.after-reload"
    check "$key identical after a save and a load" \
        cmp -s "$WORK/$key.before-reload" "$WORK/$key.after-reload"
done
expect_error "the restore in progress survives the reload" \
    '^ERR APBF: the filter is being restored by LOADCHUNK \(1048576 of' APBF.EXISTS partial x

expect "server still up" PONG "$(r PING)"
finish
